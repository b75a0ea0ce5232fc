/**
 * The same geometry under two or more plot ids (docs/eudr-readiness.md): a statement that brings
 * both plots carries the land twice, each feature counted as a plot of its own. Pure: the groups of
 * plots that share a geometry come from SQL (warehouse/spatial/geometry-duplicates.ts), which
 * compares the geometries as the EU keeps them (coordinates cut to 6 decimals, six-decimals.ts).
 *
 * Severity, warning: the EU information system has no documented check against it and would carry
 * the plot twice; the origin is not in doubt, but the hectares are counted twice and one copy should
 * go. When two suppliers claim the copy, the overlap check (PostGIS) says so as well, blocking: a copy
 * always overlaps beyond its tolerance.
 */

/** Computed across plots at the end of a refresh; the page writer never touches it. */
export const GEOMETRY_DUPLICATE_CODE = 'geometry_duplicate';
/** Other plots named in the sentence; the rest are counted ("and N more"). */
export const NAMED_IN_MESSAGE = 5;
/** Other plots listed in the details (their count covers them all). */
export const LISTED_IN_DETAILS = 20;

export interface DuplicateFinding {
  plot_id: string;
  code: typeof GEOMETRY_DUPLICATE_CODE;
  severity: 'warning';
  message: string;
  /** JSON text; deterministic for the same groups, so an unchanged refresh rewrites nothing. */
  details: string;
}

/** "A", "A and B", "A, B and C", "A, B, C, D, E and 3 more": at most NAMED_IN_MESSAGE named. */
export function namedPlots(ids: readonly string[]): string {
  const named = ids.slice(0, NAMED_IN_MESSAGE);
  const more = ids.length - named.length;
  if (more > 0) return `${named.join(', ')} and ${more} more`;
  if (named.length <= 1) return named.join('');
  return `${named.slice(0, -1).join(', ')} and ${named[named.length - 1]}`;
}

/**
 * One finding per plot of every group of two or more plots that share a geometry, naming the others
 * (sorted by id: the same groups give the same text). In plot id order; a plot in no group has none.
 */
export function geometryDuplicateFindings(groups: ReadonlyArray<readonly string[]>): DuplicateFinding[] {
  const findings: DuplicateFinding[] = [];
  for (const group of groups) {
    const ids = [...new Set(group)].sort();
    if (ids.length < 2) continue;
    for (const plot of ids) {
      const others = ids.filter((id) => id !== plot);
      const which = others.length === 1 ? `plot ${others[0]}` : `${others.length} other plots (${namedPlots(others)})`;
      findings.push({
        plot_id: plot,
        code: GEOMETRY_DUPLICATE_CODE,
        severity: 'warning',
        message: `The same geometry as ${which}, once cut to 6 decimals as the EU keeps it: a statement bringing both would carry the land twice.`,
        details: JSON.stringify({
          other_plots: others.length,
          plot_ids: others.slice(0, LISTED_IN_DETAILS),
          compared: 'type and coordinates, each coordinate cut to 6 decimals',
        }),
      });
    }
  }
  return findings.sort((a, b) => (a.plot_id < b.plot_id ? -1 : a.plot_id > b.plot_id ? 1 : 0));
}
