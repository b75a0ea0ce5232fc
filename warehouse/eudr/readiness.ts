import type { Plot } from '../../schema/upstream.ts';
import { assessGeometry, type GeometryFacts } from '../refresh/geometry-quality.ts';
import { coordinatePrecisionFindings } from './coordinate-precision.ts';
import { countryFindings } from './country-of-production.ts';
import { deforestationAnalysisFindings } from './deforestation-analysis.ts';
import type { Finding } from './finding.ts';
import { geolocationFormFindings } from './geolocation-form.ts';
import { polygonValidityFindings } from './polygon-validity.ts';
import { productionPeriodFindings } from './production-period.ts';
import { surfaceAreaFindings } from './surface-area.ts';

/**
 * Every per-plot EUDR readiness finding of a validated plot (docs/eudr-readiness.md), sorted by code.
 * Pure. The refresh passes the geometry facts it computed for the plot row, so the shape is assessed
 * once. What needs other plots (land claimed twice) is not here: that is SQL, with PostGIS.
 */
export function plotFindings(plot: Plot, geometry: GeometryFacts = assessGeometry(plot.geometry)): Finding[] {
  const found = [
    ...geolocationFormFindings(plot),
    ...(plot.geometry && plot.geometry.type !== 'Point' ? polygonValidityFindings(geometry) : pointRange(geometry)),
    ...coordinatePrecisionFindings(plot.geometry),
    ...surfaceAreaFindings(plot.surfaceArea, geometry),
    ...productionPeriodFindings(plot.productionDateStart, plot.productionDateEnd),
    ...deforestationAnalysisFindings(plot.mostRecentAnalysis),
    ...countryFindings(plot.countryCode),
  ];
  return found.sort((a, b) => (a.code < b.code ? -1 : a.code > b.code ? 1 : 0));
}

/** A point's only validity rule is its range. */
function pointRange(geometry: GeometryFacts): Finding[] {
  return geometry.problem?.kind === 'out_of_range' ? polygonValidityFindings(geometry) : [];
}
