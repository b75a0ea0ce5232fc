import type { Plot } from '../../schema/upstream.ts';
import type { InvalidRecord } from '../../schema/upstream.ts';
import type { RecordIssue } from './issues.ts';
import { toPlotRows } from './plot-rows.ts';
import type { PlotRows } from './rows.ts';

/** Plots the service sent that did not validate: left out of the page, reported. */
export function skippedIssues(invalid: readonly InvalidRecord[], page: number): RecordIssue[] {
  return invalid.map((r) => ({
    entity: 'plots',
    recordId: r.id,
    location: `page ${page} #${r.index}`,
    field: r.path,
    rule: r.message,
    action: 'skipped',
  }));
}

/**
 * The ids a page proves present at the source, in one order for every read of the same text: its
 * valid plots, then the invalid ones that carry an id. An invalid plot exists; it only could not be
 * stored as sent, so the sweep must not take it for gone (its last good version stays).
 */
export function presentIds(validIds: readonly string[], invalid: readonly InvalidRecord[]): string[] {
  const out = new Set(validIds);
  for (const r of invalid) if (r.id) out.add(r.id);
  return [...out];
}

/**
 * Plots of a page (or a batch of the own-plots stream) → their rows, with the values that had to be
 * stored as null reported. Mapping right after parsing lets the parsed objects die young (far less
 * garbage-collection work than keeping a page of objects across database calls). Pure, apart from
 * clearing each plot's `suppliers` (see plotFingerprint).
 */
export function mapPlots(
  plots: readonly Plot[],
  page: number,
  isOwn: boolean,
  firstIndex = 0,
): { rows: PlotRows[]; issues: RecordIssue[] } {
  return mapEach(plots.length, (i) => ({ plot: plots[i]!, position: firstIndex + i }), page, isOwn);
}

/**
 * Only the plots of a page at `positions` (those whose fingerprint, already taken, the warehouse
 * does not hold) → their rows; issues name each plot's place on the page. Pure, as mapPlots.
 */
export function mapPlotsAt(
  plots: readonly Plot[],
  positions: readonly number[],
  fingerprints: readonly string[],
  page: number,
  isOwn: boolean,
): { rows: PlotRows[]; issues: RecordIssue[] } {
  return mapEach(
    positions.length,
    (i) => ({ plot: plots[positions[i]!]!, position: positions[i]!, fingerprint: fingerprints[positions[i]!] }),
    page,
    isOwn,
  );
}

function mapEach(
  count: number,
  at: (i: number) => { plot: Plot; position: number; fingerprint?: string | undefined },
  page: number,
  isOwn: boolean,
): { rows: PlotRows[]; issues: RecordIssue[] } {
  const issues: RecordIssue[] = [];
  const rows: PlotRows[] = new Array(count);
  for (let i = 0; i < count; i++) {
    const { plot, position, fingerprint } = at(i);
    const mapped = fingerprint === undefined ? toPlotRows(plot, isOwn) : toPlotRows(plot, isOwn, fingerprint);
    for (const v of mapped.issues) {
      issues.push({
        entity: 'plots',
        recordId: plot.id,
        location: `page ${page} #${position}`,
        field: v.field,
        rule: v.rule,
        action: v.action ?? 'nulled',
        sent: v.sent,
      });
    }
    rows[i] = mapped.rows;
  }
  return { rows, issues };
}
