import {
  CancellationScope,
  ParentClosePolicy,
  WorkflowIdReusePolicy,
  continueAsNew,
  defineQuery,
  getExternalWorkflowHandle,
  isCancellation,
  proxyLocalActivities,
  setHandler,
  sleep,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { SubmissionActivities } from '../activities/submission/activities.ts';
import { submitTransaction, transactionWorkflowId, type TransactionTiming } from './submit-transaction.ts';
import { batchCheckMs, batchStep } from './scheduling/batch-window.ts';
import type { BatchProgressFigures } from './scheduling/batch-chunks.ts';
import { historyFull } from './scheduling/continue-as-new.ts';

/**
 * A batch of accepted shipments: one `submitTransaction` workflow per key, started in file order
 * with at most `concurrency` of them not yet submitted (waiting hours for the EU system holds no
 * slot). Where each stands is read from the warehouse, which the transactions write as they go: one
 * read serves the whole batch, so a thousand transactions cost this workflow a few dozen steps, not
 * thousands of messages. A `progress` query shows it; the workflow continues as new as its history
 * grows and ends once every transaction has ended. Cancelled: nothing more is started, drafts not
 * yet submitted are deleted, transactions already submitted are followed to the end (they exist at
 * the EU and cannot be withdrawn).
 */
export interface BulkSubmitInput {
  batchId: string;
  /** Transactions being created or submitted at once (default 20). */
  concurrency?: number;
  timing?: Partial<TransactionTiming>;
  /**
   * A later run of a batch that ran before (`ddsync submissions retry`): only its pending keys are
   * started, and a key whose workflow closed is started again (that workflow goes on with whatever an
   * earlier one created, found by customId).
   */
  restart?: boolean;
  /** Continue as new past this many history events (default 10,000; Temporal's limit is 51,200). */
  historyLimit?: number;
  /** Carried across continue-as-new. */
  state?: BulkState;
}

/** One shape for both batch workflows' progress (scheduling/batch-chunks.ts). */
export type BulkProgress = BatchProgressFigures;

interface BulkState {
  /** Line of the last request started. */
  cursor: number;
  started: number;
  alreadyStarted: number;
  allStarted: boolean;
}

export const bulkProgressQuery = defineQuery<BulkProgress & { batchId: string }>('progress');
export const bulkSubmitWorkflowId = (batchId: string) => `submission/${batchId}`;

const { nextRequestsOfBatch, batchStanding, closeSubmissionBatch } = proxyLocalActivities<SubmissionActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

/** A cursor past every line (the largest int4): a restarted batch, once all started, answers for all its keys. */
const PAST_LAST_LINE = 2_147_483_647;

export async function bulkSubmit(input: BulkSubmitInput): Promise<BulkProgress> {
  const concurrency = Math.max(1, input.concurrency ?? 20);
  const s: BulkState = input.state ?? { cursor: 0, started: 0, alreadyStarted: 0, allStarted: false };
  let progress: BulkProgress = {
    started: s.started,
    states: {},
    ended: 0,
    pending: 0,
    available: 0,
    error: 0,
    failed: 0,
    alreadyStarted: s.alreadyStarted,
    allStarted: s.allStarted,
  };
  let holding: string[] = [];
  setHandler(bulkProgressQuery, () => ({ ...progress, batchId: input.batchId }));

  try {
    for (;;) {
      const standing = await batchStanding({ batchId: input.batchId, cursor: s.cursor });
      holding = standing.holding;
      progress = {
        started: standing.started,
        states: standing.states,
        ended: standing.ended,
        pending: standing.started - standing.ended,
        available: standing.states['available'] ?? 0,
        error: standing.states['error'] ?? 0,
        failed: (standing.states['failed'] ?? 0) + (standing.states['timed_out'] ?? 0),
        alreadyStarted: s.alreadyStarted,
        allStarted: s.allStarted,
      };
      const step = batchStep({
        allStarted: s.allStarted,
        pending: progress.pending,
        holding: holding.length,
        concurrency,
      });
      if (step.kind === 'close') break;
      if (step.kind === 'start') {
        const next = await nextRequestsOfBatch({
          batchId: input.batchId,
          afterLine: s.cursor,
          limit: step.limit,
          ...(input.restart ? { onlyPending: true } : {}),
        });
        if (next.length === 0) s.allStarted = true;
        // A restart skips keys that are not pending, some of them perhaps still followed: from now on they count too.
        if (next.length === 0 && input.restart) s.cursor = PAST_LAST_LINE;
        // Started together: one step of this workflow, however many slots were free.
        await Promise.all(next.map(({ key }) => startTransaction(key, input)));
        s.started += next.length;
        if (next.length > 0) s.cursor = next[next.length - 1]!.line;
        if (next.length > 0) continue;
      }
      if (historyFull(workflowInfo(), input.historyLimit)) {
        return await continueAsNew<typeof bulkSubmit>({ ...input, state: s });
      }
      await sleep(batchCheckMs(s.allStarted));
    }
    await closeSubmissionBatch({ batchId: input.batchId, cancelled: false });
    return progress;
  } catch (error) {
    if (!isCancellation(error)) throw error;
    return CancellationScope.nonCancellable(async () => {
      // Transactions still creating or submitting are asked to stop; submitted ones carry on.
      await Promise.all(
        holding.map((key) =>
          getExternalWorkflowHandle(transactionWorkflowId(key))
            .cancel()
            .catch(() => undefined),
        ),
      );
      await closeSubmissionBatch({ batchId: input.batchId, cancelled: true });
      return { ...progress, allStarted: s.allStarted };
    });
  }

  async function startTransaction(key: string, bulk: BulkSubmitInput): Promise<void> {
    try {
      await startChild(submitTransaction, {
        workflowId: transactionWorkflowId(key),
        args: [{ key, batchId: bulk.batchId, ...(bulk.timing ? { timing: bulk.timing } : {}) }],
        // A transaction outlives this workflow's runs (continue-as-new) and its cancellation.
        parentClosePolicy: ParentClosePolicy.ABANDON,
        // One workflow per key at a time, and none after the first unless the batch is restarted (then
        // only for keys reopened as pending): a second workflow never creates a second transaction.
        workflowIdReusePolicy: bulk.restart
          ? WorkflowIdReusePolicy.ALLOW_DUPLICATE
          : WorkflowIdReusePolicy.REJECT_DUPLICATE,
        // Its requests are local activities, which hold a workflow task open while a slow service
        // answers: a 5 s task hands it back every 4 s at most (see refresh-warehouse.ts, TMPRL1104).
        workflowTaskTimeout: '5 seconds',
      });
    } catch (error) {
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
      s.alreadyStarted++;
    }
  }
}
