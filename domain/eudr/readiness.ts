import type { Plot } from '../../schema/upstream.ts';
import type { GeometryFacts } from '../geometry/geometry-quality.ts';
import { coordinatePrecisionFindings } from './coordinate-precision.ts';
import { countryFindings } from './country-of-production.ts';
import { countryPlacementFindings } from './country-placement.ts';
import type { CountryShapes } from './country-shapes.ts';
import { deforestationAnalysisFindings } from './deforestation-analysis.ts';
import type { Finding } from './finding.ts';
import { geolocationFormFindings } from './geolocation-form.ts';
import { polygonHoleFindings } from './polygon-holes.ts';
import { polygonValidityFindings } from './polygon-validity.ts';
import { productionPeriodFindings } from './production-period.ts';
import { surfaceAreaFindings } from './surface-area.ts';
import { truncationFindings } from './truncation.ts';

/**
 * Every per-plot EUDR readiness finding of a validated plot (docs/eudr-readiness.md), sorted by code.
 * Pure. The refresh passes the geometry facts it computed for the plot row, so the shape is assessed
 * once. What needs other plots (land claimed twice, the same geometry twice) is not here: that is
 * SQL at the end of a refresh. The country outlines are given: the refresh passes Natural Earth
 * 1:10m, read from its package once per process (warehouse/refresh/world-countries.ts), a test may
 * pass its own; reading them is I/O, which this layer does not do.
 */
export function plotFindings(plot: Plot, geometry: GeometryFacts, countries: CountryShapes): Finding[] {
  const found = [
    ...geolocationFormFindings(plot),
    ...(plot.geometry && plot.geometry.type !== 'Point' ? polygonValidityFindings(geometry) : pointRange(geometry)),
    ...polygonHoleFindings(plot.geometry, geometry),
    ...truncationFindings(plot.geometry, geometry),
    ...coordinatePrecisionFindings(plot.geometry),
    ...surfaceAreaFindings(plot.surfaceArea, geometry),
    ...productionPeriodFindings(plot.productionDateStart, plot.productionDateEnd),
    ...deforestationAnalysisFindings(plot.mostRecentAnalysis),
    ...countryFindings(plot.countryCode),
    ...countryPlacementFindings(plot.countryCode, plot.geometry, geometry, countries),
  ];
  return found.sort((a, b) => (a.code < b.code ? -1 : a.code > b.code ? 1 : 0));
}

/** A point's only validity rule is its range. */
function pointRange(geometry: GeometryFacts): Finding[] {
  return geometry.problem?.kind === 'out_of_range' ? polygonValidityFindings(geometry) : [];
}
