import { warehouseFor, type Warehouse } from '../../warehouse/database.ts';
import type { Logger } from '../../platform/logger.ts';
import { finishRun, type RunSummary } from '../../warehouse/refresh/sweep.ts';
import { refreshTableStatistics } from '../../warehouse/refresh/table-statistics.ts';
import { checkOverlapsAfterRun, type OverlapOutcome } from '../../warehouse/spatial/overlaps.ts';
import { checkGeometryDuplicatesAfterRun, type DuplicateOutcome } from '../../warehouse/spatial/geometry-duplicates.ts';
import { refreshSummariesAfterRun } from '../../warehouse/analyst-summaries.ts';

/** Sweep, totals, outcome: see sweep.ts. `failure` ends the run as failed without sweeping. */
export async function finishRefresh(
  { db, log }: { db: Warehouse; log: Logger },
  input: { runId: string; failure?: string },
): Promise<RunSummary> {
  // Statements over whole tables, minutes at a million plots: bounded as such (statement-bounds.ts).
  const runEnd = warehouseFor(db, 'long');
  // Each step's seconds go into the closing log line: where the end of a run spent its time.
  const seconds: Record<string, number> = {};
  const timed = async <T>(step: string, work: () => Promise<T>): Promise<T> => {
    const started = performance.now();
    try {
      return await work();
    } finally {
      seconds[step] = Math.round(performance.now() - started) / 1000;
    }
  };
  const summary = await timed('sweep', () => finishRun(runEnd, input.runId, input.failure));
  // After the sweep (a deleted plot is no one's duplicate), on connections of their own: the
  // duplicate check, which scans and groups plots and needs no statistics, from now until it is
  // done; and beside it the statistics of the tables the next steps plan joins over, then those
  // steps: the analysts' summaries (warehouse/analyst-summaries.ts) and, with PostGIS and only when
  // plots changed, the overlap check (docs/postgis.md), with the other tables' statistics beside
  // them (table-statistics.ts). One after the other, each of these was alone on
  // one core: at a million plots the duplicate check 18 s past the statistics, the summaries 69 s;
  // at 100,000 with PostGIS the overlap check 7.5 s. Inside this activity, not new ones: the
  // workflow's commands stay as recorded histories replay them.
  const duplicateCheck = timed('duplicates', () => checkGeometryDuplicatesAfterRun(runEnd, input.runId));
  // refreshTableStatistics reports its failures; should it throw all the same, the check still settles first.
  // The tables the summaries and the overlap check plan over first; the others beside those steps.
  const statistics = await timed('statistics', () => refreshTableStatistics(runEnd, summary.counts, 'planned')).catch(
    async (error: unknown) => {
      await duplicateCheck.catch(() => undefined);
      throw error;
    },
  );
  // A making's failure fails the activity (retried), once every step has settled: none outlives the
  // attempt. The checks never fail the run (a rejection would be a bug, reported as a failed check).
  const [checked, made, checkedDuplicates, otherStatistics] = await Promise.allSettled([
    timed('overlaps', () => checkOverlapsAfterRun(runEnd, input.runId)),
    timed('summaries', () => refreshSummariesAfterRun(runEnd, input.runId)),
    duplicateCheck,
    timed('otherStatistics', () => refreshTableStatistics(runEnd, summary.counts, 'others')),
  ]);
  const analyzed = [
    statistics,
    otherStatistics.status === 'fulfilled'
      ? otherStatistics.value
      : { analyzed: [], failed: String(otherStatistics.reason) },
  ];
  for (const outcome of analyzed)
    if ('failed' in outcome)
      log.warn({ runId: input.runId, error: outcome.failed }, 'could not refresh table statistics');
  if (made.status === 'rejected') throw made.reason;
  const [overlaps, duplicates] = [checked, checkedDuplicates].map((c) =>
    c.status === 'fulfilled' ? c.value : { ran: false as const, failed: String(c.reason) },
  ) as [OverlapOutcome, DuplicateOutcome];
  if ('failed' in duplicates)
    log.warn({ runId: input.runId, error: duplicates.failed }, 'geometry duplicate check failed');
  if ('failed' in overlaps) log.warn({ runId: input.runId, error: overlaps.failed }, 'overlap check failed');
  // The making read one snapshot, and the checks' findings may have committed after it (on a first
  // load they must: their notes wait for the filling lock the making holds). So when a check wrote
  // findings, a second making moves the summaries by what it changed: the plots its findings
  // touched, as the triggers noted them.
  const summaries = [made.value];
  if ([overlaps, duplicates].some((c) => c.ran && c.opened + c.closed > 0))
    summaries.push(await timed('summariesAfterChecks', () => refreshSummariesAfterRun(runEnd, input.runId)));
  log.info(
    {
      runId: input.runId,
      status: summary.status,
      seconds: summary.seconds,
      pages: summary.pages,
      plots: summary.plotsSeen,
      rowsWritten: summary.rowsWritten,
      overlaps,
      duplicates,
      summaries,
      analyzed: analyzed.flatMap((a) => a.analyzed),
      stepSeconds: seconds,
    },
    'refresh finished',
  );
  return summary;
}
