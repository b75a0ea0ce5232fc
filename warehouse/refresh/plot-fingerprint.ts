import { createHash, hash } from 'node:crypto';
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
  // One-shot hashing: no Hash object per plot (half the cost of createHash for inputs this size).
  return hash('sha1', `${PLOT_MAPPING_VERSION}|${isOwn ? 1 : 0}|${JSON.stringify(plot)}`, 'base64url');
}

/** The hash of a page's text as the service sent it (with the mapping version): equal means unchanged. */
export function sourcePageHash(text: string): string {
  // A Hash object here: the text is a page (about a megabyte), which a one-shot call would copy first.
  return createHash('sha1').update(`${PLOT_MAPPING_VERSION}|`).update(text).digest('base64url');
}
