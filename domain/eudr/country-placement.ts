import type { PlotGeometry } from '../../schema/upstream.ts';
import type { GeometryFacts } from '../geometry/geometry-quality.ts';
import { placeIn, type CountryShapes } from './country-shapes.ts';
import { finding, type Finding } from './finding.ts';

/**
 * Whether the plot lies in the country it declares (Regulation (EU) 2023/1115, Art. 9(1)(c) country of
 * production and (d) geolocation; the EU file carries both, ProducerCountry and the geometry). Not a
 * check the EU documents: a plot outside its country means the country or the geolocation is wrong,
 * and a statement carrying it says something false. Our rule.
 *
 * Where: the centre of the plot's bounding box (a point's own position). Plots are small against the
 * tolerance, and a plot straddling a border is exactly the case the tolerance leaves undecided.
 *
 * Tolerance, TOLERANCE_KM = 5 km: the outlines are Natural Earth 1:10m (world-countries.ts), drawn for
 * maps at 1:10,000,000 and quantised to about 400 m. Compared with OpenStreetMap's borders on both
 * sides of sampled land borders, the two disagree for 30% of positions 1 km from a border, 17% at
 * 2 km, 4.7% at 5 km and 3.3% at 10 km; what remains at 5 km is disputed or de-facto lines, not the
 * drawing (docs/eudr-readiness.md). So within 5 km outside its country a plot is "near the border,
 * cannot decide" (info), and beyond it outside (blocking).
 *
 * Swapped: if the plot lies outside, and the position with longitude and latitude exchanged lies
 * inside the declared country, the coordinates were most likely written latitude first (GeoJSON and
 * the EU file are longitude first): blocking, with the swapped position in the sentence.
 *
 * A country without an outline of its own in Natural Earth is looked up in its parent's, which
 * Natural Earth folds it into (French Guiana, Guadeloupe, Martinique, Réunion, Mayotte in France; the
 * Caribbean Netherlands; Bouvet Island in Norway); a code without any outline (Kosovo ...) is not
 * decided.
 */
export const TOLERANCE_KM = 5;

const PARENT: Record<string, string> = { GF: 'FR', GP: 'FR', MQ: 'FR', RE: 'FR', YT: 'FR', BQ: 'NL', BV: 'NO' };

export function countryPlacementFindings(
  countryCode: string | null | undefined,
  geometry: PlotGeometry | null | undefined,
  facts: GeometryFacts,
  shapes: CountryShapes,
): Finding[] {
  const code = typeof countryCode === 'string' ? countryCode.trim().toUpperCase() : '';
  if (!/^[A-Z]{2}$/.test(code) || !geometry || !facts.bbox) return [];
  // Out of range or drawn across the antimeridian: the box centre says nothing (or has its own finding).
  if (facts.problem?.kind === 'out_of_range' || facts.crossesAntimeridian) return [];
  const shape = shapes.shapeOf(code) ?? shapes.shapeOf(PARENT[code] ?? '');
  if (!shape) return [];
  const [minLon, minLat, maxLon, maxLat] = facts.bbox;
  const lon = round6((minLon + maxLon) / 2);
  const lat = round6((minLat + maxLat) / 2);
  const here = placeIn(shape, lon, lat, TOLERANCE_KM);
  if (here.inside) return [];
  const details = { countryCode: code, at: [lon, lat], toleranceKm: TOLERANCE_KM };
  if (here.borderKm !== null)
    return [
      finding(
        'country_near_border',
        `The plot lies ${here.borderKm.toFixed(1)} km outside ${code}'s border as Natural Earth 1:10m draws it, within the ${TOLERANCE_KM} km that map cannot decide.`,
        { ...details, borderKm: Math.round(here.borderKm * 10) / 10 },
      ),
    ];
  if (Math.abs(lon) <= 90 && placeIn(shape, lat, lon, 0).inside)
    return [
      finding(
        'coordinates_swapped',
        `The plot lies outside ${code}, but with longitude and latitude exchanged it lies inside: the coordinates look written latitude first (the EU file wants longitude, latitude).`,
        { ...details, swapped: [lat, lon] },
      ),
    ];
  const elsewhere = shapes.countriesAt(lon, lat);
  return [
    finding(
      'country_outside_declared',
      `The plot lies more than ${TOLERANCE_KM} km outside its declared country ${code}${elsewhere.length > 0 ? `, in ${elsewhere.join('/')}` : ''}: the country or the geolocation is wrong.`,
      { ...details, liesIn: elsewhere },
    ),
  ];
}

function round6(n: number): number {
  return Math.round(n * 1e6) / 1e6;
}
