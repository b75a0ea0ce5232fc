import type { WorkflowHandle } from '@temporalio/client';
import type { Warehouse } from '../warehouse/database.ts';
import { batchReport, type BatchReport } from '../warehouse/submission/batch-report.ts';
import { progressPrinter } from './progress.ts';
import { batchProgress } from './submission-summary.ts';
import { resultThroughOutages } from './follow-through-outages.ts';

/** Follows a bulk submission to its end, drawing progress from the warehouse on `stream`. */
export async function followBatch(
  db: Warehouse,
  handle: WorkflowHandle,
  batchId: string,
  stream: NodeJS.WriteStream | null,
): Promise<BatchReport> {
  const printer = stream ? progressPrinter(stream) : undefined;
  let finished = false;
  const result = resultThroughOutages(handle, {
    what: `batch ${batchId}`,
    again: `ddsync submissions status ${batchId} --wait`,
    note: (line) => (printer ? printer.note(line) : process.stderr.write(`${line}\n`)),
  }).finally(() => {
    finished = true;
  });
  // Each error a step keeps retrying (failed twice in a row: not a blip) is told once, as it appears.
  const told = new Set<string>();
  const draw = async () => {
    const r = await batchReport(db, batchId).catch(() => undefined);
    if (!r || finished) return;
    for (const p of r.retrying.filter((p) => p.attempts >= 2 && !told.has(p.reason))) {
      told.add(p.reason);
      printer?.note(`retrying: ${p.reason} (e.g. ${p.keys.join(', ')}); see ddsync submissions status ${batchId}`);
    }
    if (r.batchRetrying && r.batchRetrying.attempts >= 2 && !told.has(r.batchRetrying.reason)) {
      told.add(r.batchRetrying.reason);
      printer?.note(
        `retrying the batch's own step: ${r.batchRetrying.reason}; see ddsync submissions status ${batchId}`,
      );
    }
    printer?.update(batchProgress(r));
  };
  const timer = printer ? setInterval(() => void draw(), 1_000) : undefined;
  let report: BatchReport | undefined;
  try {
    await result;
    report = await batchReport(db, batchId);
  } finally {
    if (timer) clearInterval(timer);
    // Also when the workflow failed: the live line stops where it was.
    printer?.done(report ? batchProgress(report) : undefined);
  }
  if (!report) throw new Error(`batch ${batchId} is not in the warehouse`);
  return report;
}
