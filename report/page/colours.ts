import {
  COUNTRY_RISK_COLOURS,
  COUNTRY_RISK_LEVELS,
  COUNTRY_RISK_ORDER,
  NOT_READY,
  type PagePlots,
  READINESS_COLOURS,
  READY,
  riskLevelIndex,
  UNKNOWN,
} from '../page-data.ts';

// The two ways the map colours plots: by readiness (the default) or by the risk level of their
// country of production. Each puts every plot in a category with a colour, says which categories
// are drawn on top, and colours a disc of many plots. Pure: no DOM.

export type ColourBy = 'readiness' | 'risk';
export const COLOUR_BY: readonly ColourBy[] = ['readiness', 'risk'];

export interface Colouring {
  by: ColourBy;
  /** Number of categories; category(i) is below it. */
  categories: number;
  category(i: number): number;
  /** Stroke and dot colour, and the translucent fill of a polygon, by category. */
  colours: readonly string[];
  fills: readonly string[];
  /** Categories in drawing order: the last is drawn on top. */
  order: readonly number[];
  /** The colour of a disc gathering plots, from its counts per category. */
  cellColour(counts: readonly number[]): string;
  /** A disc's hover text. */
  cellSummary(plots: number, counts: readonly number[]): string;
}

/** '#d7301f' → 'rgba(215,48,31,0.45)': a polygon's fill. */
export function translucent(hex: string, alpha = 0.45): string {
  const n = Number.parseInt(hex.slice(1), 16);
  return `rgba(${(n >> 16) & 255},${(n >> 8) & 255},${n & 255},${alpha})`;
}

export function readinessColouring(plots: PagePlots): Colouring {
  return {
    by: 'readiness',
    categories: 3,
    category: (i) => plots.state[i]!,
    colours: READINESS_COLOURS,
    fills: READINESS_COLOURS.map((c) => translucent(c)),
    // Ready, unknown, then not ready on top.
    order: [READY, UNKNOWN, NOT_READY],
    cellColour(counts) {
      const known = counts[NOT_READY]! + counts[READY]!;
      return known === 0 ? READINESS_COLOURS[UNKNOWN] : `hsl(${Math.round((120 * counts[READY]!) / known)},70%,40%)`;
    },
    cellSummary: (n, c) =>
      `${n} plots: ${c[READY]} ready, ${c[NOT_READY]} not ready${c[UNKNOWN] ? `, ${c[UNKNOWN]} unknown` : ''} (click to zoom in)`,
  };
}

export function countryRiskColouring(plots: PagePlots): Colouring {
  const order = COUNTRY_RISK_ORDER.map((level) => COUNTRY_RISK_LEVELS.indexOf(level));
  return {
    by: 'risk',
    categories: COUNTRY_RISK_LEVELS.length,
    category: (i) => riskLevelIndex(plots.countryRisk[i]!),
    colours: COUNTRY_RISK_COLOURS,
    fills: COUNTRY_RISK_COLOURS.map((c) => translucent(c)),
    order,
    // A disc takes the most worrying level among its plots, as a supplier's level is its plots' highest.
    cellColour(counts) {
      for (let k = order.length - 1; k >= 0; k--) if (counts[order[k]!]! > 0) return COUNTRY_RISK_COLOURS[order[k]!]!;
      return COUNTRY_RISK_COLOURS[COUNTRY_RISK_LEVELS.indexOf('unknown')]!;
    },
    cellSummary(n, c) {
      const parts: string[] = [];
      for (let k = order.length - 1; k >= 0; k--)
        if (c[order[k]!]) parts.push(`${c[order[k]!]} ${COUNTRY_RISK_LEVELS[order[k]!]}`);
      return `${n} plots, country risk: ${parts.join(', ')} (click to zoom in)`;
    },
  };
}
