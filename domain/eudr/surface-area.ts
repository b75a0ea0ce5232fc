import type { GeometryFacts } from '../geometry/geometry-quality.ts';
import { finding, type Finding } from './finding.ts';
import { formatHa } from './geolocation-form.ts';

/**
 * The surface area the service reports (m²) against the area of the polygon (geometry-quality.ts,
 * @turf/area on the sphere). Not a rule of the regulation: a plot whose declared size disagrees with
 * its own polygon points at a wrong polygon, a wrong unit (hectares sent as m²) or a stale figure,
 * and the size decides whether a point is enough (Art. 2(28)). Our tolerance: a difference of more
 * than 10% of the polygon's area and more than 0.1 ha. Methods of measuring differ far less than that
 * (planar against spherical, rounding: under 1% at plot scale), while 0.1 ha keeps tiny plots, whose
 * relative error is large for a few metres of drawing, from being flagged. Only a valid polygon is
 * compared: a flagged shape's area is the area as drawn, not a measure to hold anyone to.
 */
export const RELATIVE_TOLERANCE = 0.1;
export const ABSOLUTE_TOLERANCE_M2 = 1_000;

export function surfaceAreaFindings(reportedM2: number | null | undefined, facts: GeometryFacts): Finding[] {
  if (!facts.valid || facts.areaHa === null) return [];
  if (typeof reportedM2 !== 'number' || !Number.isFinite(reportedM2)) return [];
  const computedM2 = facts.areaHa * 10_000;
  const difference = Math.abs(reportedM2 - computedM2);
  if (difference <= ABSOLUTE_TOLERANCE_M2 || difference <= RELATIVE_TOLERANCE * computedM2) return [];
  const ratio = computedM2 > 0 ? reportedM2 / computedM2 : null;
  return [
    finding(
      'surface_area_mismatch',
      `The reported surface area (${formatHa(reportedM2)} ha) differs from the polygon's area (${formatHa(computedM2)} ha) by more than 10%.`,
      {
        reportedM2,
        computedM2: Math.round(computedM2 * 100) / 100,
        ratio: ratio === null ? null : Math.round(ratio * 1000) / 1000,
        relativeTolerance: RELATIVE_TOLERANCE,
        absoluteToleranceM2: ABSOLUTE_TOLERANCE_M2,
      },
    ),
  ];
}
