import type { Plot, Position } from '../../../../schema/upstream.ts';
import { assessGeometry } from '../../../../domain/geometry/geometry-quality.ts';
import { plotFindings } from '../../../../domain/eudr/readiness.ts';
import type { Finding } from '../../../../domain/eudr/finding.ts';
import { worldCountries } from '../../../../warehouse/refresh/world-countries.ts';

/** Every finding of `plot` as the refresh finds them: its shape assessed, against Natural Earth's outlines. */
export function findingsOf(plot: Plot): Finding[] {
  return plotFindings(plot, assessGeometry(plot.geometry), worldCountries());
}

/** Hand-made shapes for the readiness checks: positions with 7 decimals unless a test says otherwise. */
export function square(lon: number, lat: number, side: number): Position[] {
  const r = (n: number) => Math.round(n * 1e7) / 1e7;
  return [
    [r(lon), r(lat)],
    [r(lon + side), r(lat)],
    [r(lon + side), r(lat + side)],
    [r(lon), r(lat + side)],
    [r(lon), r(lat)],
  ];
}

/** A plot that passes every check: a 1.2 ha polygon, dates after the cut-off, a clean analysis. */
export function readyPlot(overrides: Partial<Plot> = {}): Plot {
  return {
    id: 'plot-1',
    geometry: { type: 'Polygon', coordinates: [square(-3.5312345, 5.8512345, 0.001)] },
    commodities: ['cocoa'],
    surfaceArea: 12_290,
    countryCode: 'CI',
    productionDateStart: '2022-03-01',
    productionDateEnd: '2022-09-30',
    mostRecentAnalysis: {
      id: 'a-1',
      type: 'EUFOROBS',
      status: 'succeeded',
      deforestedArea: 0,
      riskOfDeforestation: 0.02,
    },
    ...overrides,
  };
}
