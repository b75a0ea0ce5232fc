import type { Plot } from '../../schema/upstream.ts';
import type { InvalidRecord } from '../api/index.ts';
import type { RecordIssue } from './issues.ts';
import { toPlotRows } from './plot-rows.ts';
import type { PlotRows } from './rows.ts';

/** Plots the service sent that did not validate: left out of the page, reported. */
export function skippedIssues(invalid: readonly InvalidRecord[], page: number): RecordIssue[] {
  return invalid.map((r) => ({ entity: 'plots', recordId: r.id, location: `page ${page} #${r.index}`, field: r.path, rule: r.message, action: 'skipped' }));
}

/**
 * Plots of a page (or a batch of the own-plots stream) → their rows, with the values that had to be
 * stored as null reported. `fingerprints` are the plots' content hashes when already computed. Pure.
 */
export function mapPlots(plots: readonly Plot[], page: number, isOwn: boolean, fingerprints?: ReadonlyMap<string, string>): { rows: PlotRows[]; issues: RecordIssue[] } {
  const issues: RecordIssue[] = [];
  const rows = plots.map((plot, i) => {
    const mapped = toPlotRows(plot, isOwn, fingerprints?.get(plot.id));
    for (const v of mapped.issues) {
      issues.push({ entity: 'plots', recordId: plot.id, location: `page ${page} #${i}`, field: v.field, rule: v.rule, action: 'nulled' });
    }
    return mapped.rows;
  });
  return { rows, issues };
}
