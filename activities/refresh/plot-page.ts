import type { Plot } from '../../schema/upstream.ts';
import type { InvalidRecord } from '../api/index.ts';
import type { RecordIssue } from './issues.ts';
import { toPlotRows } from './plot-rows.ts';
import type { PlotRows } from './rows.ts';

/** A page (or a batch of the own-plots stream) → its rows and the issues found on the way. Pure. */
export function mapPlotPage(plots: readonly Plot[], invalid: readonly InvalidRecord[], page: number, isOwn: boolean): { rows: PlotRows[]; issues: RecordIssue[] } {
  const issues: RecordIssue[] = invalid.map((r) => ({
    entity: 'plots', recordId: r.id, location: `page ${page} #${r.index}`, field: r.path, rule: r.message, action: 'skipped',
  }));
  const rows = plots.map((plot, i) => {
    const mapped = toPlotRows(plot, isOwn);
    for (const v of mapped.issues) {
      issues.push({ entity: 'plots', recordId: plot.id, location: `page ${page} #${i}`, field: v.field, rule: v.rule, action: 'nulled' });
    }
    return mapped.rows;
  });
  return { rows, issues };
}
