import { describe, it, expect } from 'vitest';
import { countryRiskColouring, readinessColouring, translucent } from '../../../../report/page/colours.ts';
import {
  COUNTRY_RISK_COLOURS,
  COUNTRY_RISK_LEVELS,
  NOT_READY,
  type PagePlots,
  READINESS_COLOURS,
  READY,
  UNKNOWN,
} from '../../../../report/page-data.ts';

// How the map colours plots, by readiness or by country risk (report/page/colours.ts): pure, so
// tested here; the browser test checks the pixels.
const level = (name: string) => COUNTRY_RISK_LEVELS.indexOf(name as never);

function plots(state: number[], countryRisk: number[]): PagePlots {
  return { state, countryRisk } as unknown as PagePlots;
}

describe('the colourings of the map', () => {
  it('by readiness: as before, not ready on top, discs from red (none ready) to green (all), grey when unknown', () => {
    const c = readinessColouring(plots([NOT_READY, READY, UNKNOWN], []));
    expect([0, 1, 2].map((i) => c.colours[c.category(i)])).toEqual([
      READINESS_COLOURS[NOT_READY],
      READINESS_COLOURS[READY],
      READINESS_COLOURS[UNKNOWN],
    ]);
    expect(c.order.at(-1)).toBe(NOT_READY);
    expect(c.fills[NOT_READY]).toBe('rgba(215,48,31,0.45)');
    expect(c.cellColour([3, 0, 0])).toBe('hsl(0,70%,40%)');
    expect(c.cellColour([1, 1, 5])).toBe('hsl(60,70%,40%)');
    expect(c.cellColour([0, 0, 2])).toBe(READINESS_COLOURS[UNKNOWN]);
    expect(c.cellSummary(7, [1, 1, 5])).toBe('7 plots: 1 ready, 1 not ready, 5 unknown (click to zoom in)');
  });

  it('by country risk: a plot without a country is unknown; high on top, then unknown; a disc takes its worst level', () => {
    const c = countryRiskColouring(plots([], [level('low'), level('standard'), level('high'), level('unknown'), -1]));
    expect([0, 1, 2, 3, 4].map((i) => COUNTRY_RISK_LEVELS[c.category(i)])).toEqual([
      'low',
      'standard',
      'high',
      'unknown',
      'unknown',
    ]);
    expect(c.order.map((k) => COUNTRY_RISK_LEVELS[k])).toEqual(['low', 'standard', 'unknown', 'high']);
    const counts = (low: number, standard: number, high: number, unknown: number) => [low, standard, high, unknown];
    expect(c.cellColour(counts(5, 0, 1, 0))).toBe(COUNTRY_RISK_COLOURS[level('high')]);
    expect(c.cellColour(counts(5, 3, 0, 1))).toBe(COUNTRY_RISK_COLOURS[level('unknown')]);
    expect(c.cellColour(counts(5, 3, 0, 0))).toBe(COUNTRY_RISK_COLOURS[level('standard')]);
    expect(c.cellColour(counts(5, 0, 0, 0))).toBe(COUNTRY_RISK_COLOURS[level('low')]);
    expect(c.cellSummary(9, counts(5, 3, 0, 1))).toBe(
      '9 plots, country risk: 1 unknown, 3 standard, 5 low (click to zoom in)',
    );
    expect(translucent('#2b83ba', 0.5)).toBe('rgba(43,131,186,0.5)');
  });
});
