import type { WorkflowHandle } from '@temporalio/client';
import type { Warehouse } from '../activities/warehouse/database.ts';
import { batchReport, type BatchReport } from '../activities/submission/batch-report.ts';
import { progressPrinter } from './progress.ts';
import { batchProgressLine } from './submission-summary.ts';

/** Follows a bulk submission to its end, drawing progress from the warehouse on `stream`. */
export async function followBatch(db: Warehouse, handle: WorkflowHandle, batchId: string, stream: NodeJS.WriteStream | null): Promise<BatchReport> {
  const printer = stream ? progressPrinter(stream) : undefined;
  let finished = false;
  const result = handle.result().finally(() => {
    finished = true;
  });
  const draw = async () => {
    const r = await batchReport(db, batchId).catch(() => undefined);
    if (r && !finished) printer?.update(batchProgressLine(r));
  };
  const timer = printer ? setInterval(() => void draw(), 1_000) : undefined;
  try {
    await result;
  } finally {
    if (timer) clearInterval(timer);
  }
  const report = await batchReport(db, batchId);
  if (!report) throw new Error(`batch ${batchId} is not in the warehouse`);
  printer?.done(batchProgressLine(report));
  return report;
}
