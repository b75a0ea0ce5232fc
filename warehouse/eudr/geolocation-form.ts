import type { Plot } from '../../schema/upstream.ts';
import { finding, type Finding } from './finding.ts';

/**
 * Point or polygon (Regulation (EU) 2023/1115, Art. 2(28)): a plot of more than 4 hectares used for
 * a commodity other than cattle must be described by a polygon; a smaller one may be a single point.
 * A point has no area of its own, so the size is the surfaceArea the service reports; without it the
 * check cannot tell whether a point is enough.
 */
export const POINT_LIMIT_M2 = 40_000;

export function geolocationFormFindings(plot: Plot): Finding[] {
  const geometry = plot.geometry;
  if (!geometry) return [finding('geometry_missing', 'The plot has no geolocation (no point or polygon).')];
  if (geometry.type !== 'Point') return [];
  const commodities = plot.commodities ?? [];
  // Cattle establishments may be given as a point whatever their size; a plot also used for another commodity may not.
  if (commodities.length > 0 && commodities.every((c) => c === 'cattle')) return [];
  const area = plot.surfaceArea;
  if (typeof area !== 'number' || !Number.isFinite(area) || area <= 0)
    return [
      finding(
        'point_area_unknown',
        'The plot is a single point and its surface area is not reported, so whether a point is enough (4 ha or less) cannot be told.',
        { surfaceAreaM2: area ?? null },
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
