// What the report's HTML hands its page script (report/page/), and the values both sides must agree
// on: the readiness states, the country risk levels and the colours that show them, the units of the
// compact shapes. Imported by the renderer (Node) and bundled into the page (browser): no I/O, no
// Node, no DOM.

/** A plot's readiness as the map colours it (an index into READINESS_STATES). */
export const NOT_READY = 0;
export const READY = 1;
export const UNKNOWN = 2;
export const READINESS_STATES = ['not ready', 'ready', 'readiness unknown'] as const;
/** Stroke and dot colour of each readiness state (by index). */
export const READINESS_COLOURS = ['#d7301f', '#1a9850', '#8c8c8c'] as const;

/** Country risk levels as the page names them; a plot holds an index into it, -1 without a country. */
export const COUNTRY_RISK_LEVELS = ['low', 'standard', 'high', 'unknown'] as const;
export type CountryRiskLevel = (typeof COUNTRY_RISK_LEVELS)[number];
/** Colour of each country risk level on the map (by index in COUNTRY_RISK_LEVELS). */
export const COUNTRY_RISK_COLOURS = ['#2b83ba', '#fdae61', '#7b3294', '#8c8c8c'] as const;
/**
 * The levels from the least to the most worrying, as the supplier views rank them (a supplier's level
 * is its plots' highest: high, then unknown, since an unsettled country could be high, then standard,
 * then low): the map draws the most worrying on top and colours a disc of many plots by it.
 */
export const COUNTRY_RISK_ORDER: readonly CountryRiskLevel[] = ['low', 'standard', 'unknown', 'high'];

/** Units per degree of the compact shapes' coordinates (report/shape.ts). */
export const UNITS_PER_DEGREE = 1e5;

/** The plots, column by column (one array per attribute). */
export interface PagePlots {
  ids: string[];
  names: string[];
  /** NOT_READY, READY or UNKNOWN. */
  state: number[];
  /** Hectares, one decimal; null when unknown. */
  area: Array<number | null>;
  /** Country of production; '' when missing. */
  country: string[];
  /** Country risk of the country of production: index in COUNTRY_RISK_LEVELS, -1 without a country. */
  countryRisk: number[];
  /** Index in `suppliers` of each supplier the plot is reached through. */
  suppliers: number[][];
  /** Index in `findings` of each current finding of the plot. */
  findings: number[][];
  /** Centre in 1e-5 degrees (report/shape.ts); null when the plot has no position the map can place. */
  x: Array<number | null>;
  y: Array<number | null>;
  /** Rings, delta-encoded (report/shape.ts); [] for a point or a plot without position. */
  rings: number[][][];
  /** Lines (a LineString's or MultiLineString's, open: drawn, not filled), delta-encoded like rings; only plots that have any, by index. */
  lines: Record<number, number[][]>;
}

/** The JSON of the page's <script type="application/json" id="ddsync-data"> element. */
export interface PageData {
  plots: PagePlots;
  /** Every distinct finding: [code, severity, message]. */
  findings: Array<[string, string, string]>;
  /** Every supplier a plot is reached through: [id, name]. */
  suppliers: Array<[string, string]>;
  overlapChecked: boolean;
  countryRiskLevels: readonly CountryRiskLevel[];
}

/** A plot's country risk for colouring and counting: its level, or unknown without a country (as the views count it). */
export function riskLevelIndex(countryRisk: number): number {
  return countryRisk < 0 ? COUNTRY_RISK_LEVELS.indexOf('unknown') : countryRisk;
}
