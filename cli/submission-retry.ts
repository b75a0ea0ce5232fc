import { WorkflowNotFoundError, type Client, type WorkflowHandle } from '@temporalio/client';
import type { Warehouse } from '../warehouse/database.ts';
import type { BatchReport } from '../warehouse/submission/batch-report.ts';
import { reopenResubmittable } from '../warehouse/submission/resubmission.ts';
import { pendingTransactions, recordBatchWorkflow } from '../warehouse/submission/batch-runs.ts';
import { submitBatch, submitBatchWorkflowId } from '../workflows/submit-batch.ts';
import type { TransactionTiming } from '../workflows/submit-transaction.ts';

/**
 * `ddsync submissions retry BATCH`: the batch's transactions that ended failed without the service
 * refusing them (resubmission.ts) are made pending again, and the batch runs again (submitBatch), which
 * sends only what the ledger says is unsent, each key going on with what it already has at the service.
 */

export type RetryOutcome =
  | { kind: 'restarted'; reopened: number; pending: number; handle: WorkflowHandle<typeof submitBatch> }
  | { kind: 'nothing' }
  | { kind: 'refused'; reason: string };

export async function retryBatch(
  db: Warehouse,
  client: Client,
  report: BatchReport,
  run: { taskQueue: string; concurrency: number; timing?: Partial<TransactionTiming> },
): Promise<RetryOutcome> {
  const { batchId } = report;
  if (report.status === 'cancelled')
    return { kind: 'refused', reason: `batch ${batchId} was cancelled: nothing more is sent for it` };
  const workflowId = submitBatchWorkflowId(batchId);
  // Its running workflow has passed the reopened keys by: they would wait for it, and it for them.
  if (await isRunning(client, workflowId))
    return {
      kind: 'refused',
      reason: `batch ${batchId} is still running: retry it once it has ended (ddsync submissions status ${batchId})`,
    };
  const reopened = await reopenResubmittable(db, batchId);
  // Pending also counts keys an interrupted retry reopened (or a batch never started): this one starts them.
  const pending = await pendingTransactions(db, batchId);
  if (pending === 0) return { kind: 'nothing' };
  const handle = await client.workflow.start(submitBatch, {
    taskQueue: run.taskQueue,
    workflowId,
    args: [{ batchId, concurrency: run.concurrency, restart: true, ...(run.timing ? { timing: run.timing } : {}) }],
  });
  await recordBatchWorkflow(db, batchId, workflowId);
  return { kind: 'restarted', reopened, pending, handle };
}

async function isRunning(client: Client, workflowId: string): Promise<boolean> {
  try {
    return (await client.workflow.getHandle(workflowId).describe()).status.name === 'RUNNING';
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return false;
    throw error;
  }
}
