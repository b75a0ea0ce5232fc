import { Context } from '@temporalio/activity';
import { emptyStats, type InvalidRecord } from '../../upstream/index.ts';
import type { Warehouse } from '../../warehouse/database.ts';
import type { RecordIssue } from '../../warehouse/refresh/issues.ts';
import { storePlotBatch } from '../../warehouse/refresh/plot-batch.ts';
import { mapPlots } from '../../warehouse/refresh/plot-page.ts';
import type { PlotRows } from '../../warehouse/refresh/rows.ts';
import { finishScope, markScopeRunning, OWN_PLOTS_SCOPE } from '../../warehouse/refresh/run-ledger.ts';
import { cancellation, isFinal, requestCounts, withReasonNoted } from './activity-support.ts';
import type { RefreshApi } from './activity-support.ts';

export interface OwnPlotsResult {
  completed: boolean;
  pages: number;
  plots: number;
  error?: string;
}

/** Plots per write of the own-plots stream: the same batch size as a supplier page. */
const OWN_PLOTS_BATCH = 500;

/** The business's own plots (GET /plots), streamed and written in batches; heartbeats per batch. */
export async function loadOwnPlots(
  { db, api }: { db: Warehouse; api: Pick<RefreshApi, 'ownPlots'> },
  runId: string,
): Promise<OwnPlotsResult> {
  await markScopeRunning(db, runId, OWN_PLOTS_SCOPE);
  const stats = emptyStats();
  let batch: PlotRows[] = [];
  let issues: RecordIssue[] = [];
  let invalid: InvalidRecord[] = [];
  let pages = 0;
  let plots = 0;
  const flush = async () => {
    pages++;
    // Requests are counted on the batch during which they happened.
    const requests = requestCounts(stats);
    Object.assign(stats, emptyStats());
    await storePlotBatch(db, {
      runId,
      scope: OWN_PLOTS_SCOPE,
      supplierId: null,
      page: pages,
      rows: batch,
      issues,
      invalid,
      requests,
    });
    plots += batch.length + invalid.length;
    batch = [];
    issues = [];
    invalid = [];
    Context.current().heartbeat({ pages, plots });
  };
  try {
    for await (const plot of api.ownPlots({ stats, signal: cancellation(), onInvalid: (r) => invalid.push(r) })) {
      const mapped = mapPlots([plot], pages + 1, true, batch.length + invalid.length);
      batch.push(...mapped.rows);
      issues.push(...mapped.issues);
      if (batch.length + invalid.length >= OWN_PLOTS_BATCH) await flush();
    }
    if (batch.length + invalid.length > 0 || pages === 0) await flush();
  } catch (error) {
    if (!isFinal(error)) throw await withReasonNoted(db, runId, OWN_PLOTS_SCOPE, error);
    await finishScope(db, runId, OWN_PLOTS_SCOPE, 'failed', error.message);
    return { completed: false, pages, plots, error: error.message };
  }
  await finishScope(db, runId, OWN_PLOTS_SCOPE, 'succeeded');
  return { completed: true, pages, plots };
}
