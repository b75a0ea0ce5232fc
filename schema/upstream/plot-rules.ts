import { PLOT_RELATION_PAIRS } from './service-facts.ts';

/**
 * Whether relations (`includes` of GET /businesses/{businessId}/plots, each known) may be asked for
 * together: one alone, or exactly one of the contract's pairs. The client's query builder and the
 * simulator's query parser both ask here. Pure.
 */
export function isAllowedPlotRelationSet(names: readonly string[]): boolean {
  if (names.length <= 1) return true;
  return names.length === 2 && PLOT_RELATION_PAIRS.some(([a, b]) => names.includes(a) && names.includes(b));
}
