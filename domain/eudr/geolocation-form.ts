import type { Plot } from '../../schema/upstream.ts';
import { finding, type Finding } from './finding.ts';

/**
 * The geometry types (GeoJSON File Description v1.3, Operator API Reference v1.0 §9.2): the EU takes
 * Point, MultiPoint, Polygon, MultiPolygon and GeometryCollection, and "LineString" and
 * "MultiLineString" "will not be accepted/processed": a plot drawn as a line is blocking. A
 * MultiPoint or a collection the EU takes, but the service's contract never sends one and ddsync's
 * shape checks do not read it: a warning that says so, rather than a silence that looks like a pass.
 *
 * Point or polygon (Regulation (EU) 2023/1115, Art. 2(28)): a plot of more than 4 hectares used for
 * a commodity other than cattle must be described by a polygon; a smaller one may be a single point.
 * A point has no area of its own, so the size is the surfaceArea the service reports; without it the
 * check cannot tell whether a point is enough.
 *
 * The EU information system's rules for a point's Area (Operator API Reference v1.0, 29 May 2026,
 * §9.3 note 2 and §10.3 "Geolocation area for point"; Conformance Test 4 v1.4, error
 * EUDR_COMMODITIES_PRODUCER_GEO_AREA_INVALID): optional, and "set by default to 4 (four) hectares"
 * when missing; when given, at least 0.0001 ha and, for commodities other than cattle, at most 4 ha.
 * So a missing area is a warning (the EU fills in 4 ha, which may overstate the plot), and an area
 * below 0.0001 ha (1 m²; zero or negative included) is refused: blocking.
 */
export const POINT_LIMIT_M2 = 40_000;
/** 0.0001 ha, the smallest Area the EU information system takes for a point. */
export const POINT_MINIMUM_M2 = 1;

export function geolocationFormFindings(plot: Plot): Finding[] {
  const geometry = plot.geometry;
  if (!geometry) return [finding('geometry_missing', 'The plot has no geolocation (no point or polygon).')];
  if (geometry.type === 'LineString' || geometry.type === 'MultiLineString')
    return [
      finding(
        'geometry_type_refused',
        `The plot is drawn as a ${geometry.type}: the EU information system does not accept lines as the geolocation of a plot of land; give a polygon (or a point for a plot of up to 4 ha).`,
        { type: geometry.type },
      ),
    ];
  if (geometry.type === 'MultiPoint' || geometry.type === 'GeometryCollection')
    return [
      finding(
        'geometry_type_not_checked',
        `The plot is a ${geometry.type}: the EU information system accepts one, but ddsync does not check its shape, area or decimals; check it by hand, or send it as a polygon or a point.`,
        { type: geometry.type },
      ),
    ];
  if (geometry.type !== 'Point') return [];
  const commodities = plot.commodities ?? [];
  // Cattle establishments may be given as a point whatever their size; a plot also used for another commodity may not.
  if (commodities.length > 0 && commodities.every((c) => c === 'cattle')) return [];
  const area = plot.surfaceArea;
  if (typeof area !== 'number' || !Number.isFinite(area))
    return [
      finding(
        'point_area_unknown',
        'The plot is a single point and its surface area is not reported, so whether a point is enough (4 ha or less) cannot be told; the EU information system then assumes 4 ha.',
        { surfaceAreaM2: area ?? null, euDefaultHa: 4 },
      ),
    ];
  if (area < POINT_MINIMUM_M2)
    return [
      finding(
        'point_area_too_small',
        `The plot is a single point reporting ${area} m²: the EU information system refuses a point's area below 0.0001 ha (1 m²).`,
        { surfaceAreaM2: area, minimumM2: POINT_MINIMUM_M2 },
      ),
    ];
  if (area <= POINT_LIMIT_M2) return [];
  return [
    finding(
      'point_over_4_ha',
      `The plot is a single point but reports ${formatHa(area)} ha: a plot of more than 4 ha must be described by a polygon.`,
      { surfaceAreaM2: area, limitM2: POINT_LIMIT_M2 },
    ),
  ];
}

export function formatHa(m2: number): string {
  return (m2 / 10_000).toFixed(2);
}
