import { createHash } from 'node:crypto';
import type { Plot } from '../../schema/upstream.ts';

/**
 * Bump when the mapping from a plot to its rows changes (a new column, a different rule), so the
 * next refresh rewrites every plot once with the new mapping.
 */
export const PLOT_MAPPING_VERSION = 1;

/**
 * A validated plot reduced to what the refresh keeps while it talks to the database: its id, its
 * fingerprint, and its JSON text. Text is one flat string where the parsed plot is thousands of
 * small objects; holding pages as text lets their objects die young (far less garbage-collection
 * work and memory), and only the plots that changed are parsed again to be mapped.
 */
export interface PlotEntry {
  id: string;
  hash: string;
  text: string;
}

/**
 * The content hash of a plot as the service sent it (after validation and normalisation), taken
 * before any mapping: a refresh maps and writes only the plots whose fingerprint changed, so an
 * unchanged plot costs one stringify and one hash. `suppliers` is left out: it embeds the suppliers'
 * business records, which the warehouse keeps in `businesses`, and plot links come from the page.
 */
export function plotEntry(plot: Plot, isOwn: boolean): PlotEntry {
  // The plot is a fresh parse owned by the refresh: clearing a field keeps its shape (no copy) and
  // JSON.stringify leaves out undefined values.
  plot.suppliers = undefined;
  const text = JSON.stringify(plot);
  const hash = createHash('sha1').update(`${PLOT_MAPPING_VERSION}|${isOwn ? 1 : 0}|`).update(text).digest('base64url');
  return { id: plot.id, hash, text };
}

export function plotFingerprint(plot: Plot, isOwn: boolean): string {
  return plotEntry(plot, isOwn).hash;
}

/** The hash of a page's text as the service sent it (with the mapping version): equal means unchanged. */
export function sourcePageHash(text: string): string {
  return createHash('sha1').update(`${PLOT_MAPPING_VERSION}|`).update(text).digest('base64url');
}

/** Entries of a page, one per plot id (the last wins if the service repeats one). */
export function plotEntries(plots: readonly Plot[], isOwn: boolean): PlotEntry[] {
  const byId = new Map<string, PlotEntry>();
  for (const plot of plots) byId.set(plot.id, plotEntry(plot, isOwn));
  return [...byId.values()];
}
