import { createHash } from 'node:crypto';
import type { Plot } from '../../schema/upstream.ts';

/**
 * Bump when the mapping from a plot to its rows changes (a new column, a different rule), so the
 * next refresh rewrites every plot once with the new mapping.
 */
export const PLOT_MAPPING_VERSION = 1;

/**
 * The content hash of a plot as the service sent it (after validation and normalisation), taken
 * before any mapping: a refresh writes only the plots whose fingerprint changed. `suppliers` is left
 * out: it embeds the suppliers' business records, which the warehouse keeps in `businesses`, and plot
 * links come from the page. The plot must be a fresh parse owned by the caller: `suppliers` is
 * cleared (which keeps the object's shape; JSON.stringify leaves out undefined values).
 */
export function plotFingerprint(plot: Plot, isOwn: boolean): string {
  plot.suppliers = undefined;
  return createHash('sha1')
    .update(`${PLOT_MAPPING_VERSION}|${isOwn ? 1 : 0}|`)
    .update(JSON.stringify(plot))
    .digest('base64url');
}

/** The hash of a page's text as the service sent it (with the mapping version): equal means unchanged. */
export function sourcePageHash(text: string): string {
  return createHash('sha1').update(`${PLOT_MAPPING_VERSION}|`).update(text).digest('base64url');
}
