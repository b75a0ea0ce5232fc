import { createHash, hash } from 'node:crypto';
import type { Plot } from '../../schema/upstream.ts';
import { mayHoldUnstorable } from '../../domain/unstorable-text.ts';

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
  const text = JSON.stringify(plot);
  checkedText.set(plot, mayHoldUnstorable(text));
  // One-shot hashing: no Hash object per plot (half the cost of createHash for inputs this size).
  return hash('sha1', `${PLOT_MAPPING_VERSION}|${isOwn ? 1 : 0}|${text}`, 'base64url');
}

/** Per plot fingerprinted: whether its JSON text may hold text Postgres cannot store. */
const checkedText = new WeakMap<Plot, boolean>();

/**
 * Whether a plot may hold a string the warehouse stores otherwise (a NUL, a lone surrogate): the
 * check of its JSON text made while fingerprinting, so the mapping walks its strings only when it
 * may find one; true for a plot never fingerprinted (walked, to be sure).
 */
export function mayHoldUnstorablePlot(plot: Plot): boolean {
  return checkedText.get(plot) ?? true;
}

/** What a page's hash is taken over before its bytes: the client hashes a page so as it arrives. */
export const SOURCE_HASH_PREFIX = `${PLOT_MAPPING_VERSION}|`;

/**
 * The hash of a page as the service sent it (with the mapping version): equal means unchanged. Taken
 * over the body's bytes (the UTF-8 of its text): the same digest as over the text, without decoding a
 * page that turns out unchanged.
 */
export function sourcePageHash(body: Uint8Array | string): string {
  return createHash('sha1').update(SOURCE_HASH_PREFIX).update(body).digest('base64url');
}
