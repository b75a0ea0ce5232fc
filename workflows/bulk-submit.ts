import {
  CancellationScope, ParentClosePolicy, WorkflowIdReusePolicy, allHandlersFinished, condition,
  continueAsNew, defineQuery, getExternalWorkflowHandle, isCancellation, proxyActivities, setHandler, startChild, workflowInfo,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { SubmissionActivities } from '../activities/submission/activities.ts';
import {
  submitTransaction, transactionProgressSignal, transactionWorkflowId, type TransactionOutcome, type TransactionTiming,
} from './submit-transaction.ts';

/**
 * A batch of accepted shipments: one `submitTransaction` child per key, started in file order with
 * at most `concurrency` of them still creating or submitting (a child frees its slot once submitted:
 * waiting hours for the EU system holds no slot). Children report their progress by signal, which a
 * `progress` query shows; the workflow continues as new as its history grows, and ends once every
 * child has ended. Cancelled: nothing more is started, drafts not yet submitted are deleted,
 * transactions already submitted are followed to the end (they exist at the EU).
 */
export interface BulkSubmitInput {
  batchId: string;
  /** Transactions being created or submitted at once (default 20). */
  concurrency?: number;
  timing?: Partial<TransactionTiming>;
  /** Carried across continue-as-new. */
  state?: BulkState;
}

export interface BulkProgress {
  started: number;
  submitted: number;
  available: number;
  error: number;
  withdrawn: number;
  failed: number;
  timedOut: number;
  cancelled: number;
  /** Started, not ended yet. */
  pending: number;
  /** Keys already started by an earlier submission (the same workflow id): not started again. */
  alreadyStarted: number;
}

interface BulkState {
  /** Line of the last request started. */
  cursor: number;
  /** Children started and not yet submitted (they hold a slot). */
  holding: string[];
  /** Children started and not yet ended. */
  open: string[];
  progress: BulkProgress;
  /** Every request has been started. */
  allStarted: boolean;
}

export const bulkProgressQuery = defineQuery<BulkProgress & { batchId: string; allStarted: boolean }>('progress');
export const bulkSubmitWorkflowId = (batchId: string) => `submission/${batchId}`;

const { nextRequestsOfBatch, closeSubmissionBatch } = proxyActivities<SubmissionActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

const READ_AHEAD = 200;
/** Continue as new past this many history events (Temporal's limit is 51,200). */
const HISTORY_LIMIT = 20_000;

const OUTCOME_COUNTER: Record<TransactionOutcome, keyof BulkProgress> = {
  available: 'available', error: 'error', withdrawn: 'withdrawn', failed: 'failed', timed_out: 'timedOut', cancelled: 'cancelled',
};

function emptyProgress(): BulkProgress {
  return { started: 0, submitted: 0, available: 0, error: 0, withdrawn: 0, failed: 0, timedOut: 0, cancelled: 0, pending: 0, alreadyStarted: 0 };
}

export async function bulkSubmit(input: BulkSubmitInput): Promise<BulkProgress> {
  const concurrency = Math.max(1, input.concurrency ?? 20);
  const s: BulkState = input.state ?? { cursor: 0, holding: [], open: [], progress: emptyProgress(), allStarted: false };
  const holding = new Set(s.holding);
  const open = new Set(s.open);
  const progress = s.progress;
  setHandler(transactionProgressSignal, ({ key, phase, outcome }) => {
    if (phase === 'submitted' || phase === 'done') holding.delete(key);
    if (phase === 'submitted') progress.submitted++;
    if (phase === 'done' && open.delete(key)) {
      progress[OUTCOME_COUNTER[outcome ?? 'failed']]++;
      progress.pending = open.size;
    }
  });
  setHandler(bulkProgressQuery, () => ({ ...progress, pending: open.size, batchId: input.batchId, allStarted: s.allStarted }));
  const tooLong = () => workflowInfo().historyLength > HISTORY_LIMIT || workflowInfo().continueAsNewSuggested;
  const carryOn = async () => {
    await condition(allHandlersFinished);
    return continueAsNew<typeof bulkSubmit>({ ...input, state: { ...s, holding: [...holding], open: [...open], progress } });
  };

  try {
    while (!s.allStarted) {
      const next = await nextRequestsOfBatch({ batchId: input.batchId, afterLine: s.cursor, limit: READ_AHEAD });
      if (next.length === 0) {
        s.allStarted = true;
        break;
      }
      for (const { key, line } of next) {
        await condition(() => holding.size < concurrency);
        try {
          await startChild(submitTransaction, {
            workflowId: transactionWorkflowId(key),
            args: [{ key, batchId: input.batchId, parentWorkflowId: workflowInfo().workflowId, ...(input.timing ? { timing: input.timing } : {}) }],
            // A transaction outlives this workflow's runs (continue-as-new) and its cancellation.
            parentClosePolicy: ParentClosePolicy.ABANDON,
            // One workflow per key, ever: starting the same key again never creates a second transaction.
            workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
          });
          holding.add(key);
          open.add(key);
          progress.started++;
        } catch (error) {
          if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
          progress.alreadyStarted++;
        }
        s.cursor = line;
        if (tooLong()) return await carryOn();
      }
    }
    while (open.size > 0) {
      await condition(() => open.size === 0 || tooLong());
      if (open.size > 0) return await carryOn();
    }
    await closeSubmissionBatch({ batchId: input.batchId, cancelled: false });
    return { ...progress, pending: 0 };
  } catch (error) {
    if (!isCancellation(error)) throw error;
    return CancellationScope.nonCancellable(async () => {
      // Children still creating or submitting are asked to stop; submitted ones carry on.
      await Promise.all([...holding].map((key) => getExternalWorkflowHandle(transactionWorkflowId(key)).cancel().catch(() => undefined)));
      await closeSubmissionBatch({ batchId: input.batchId, cancelled: true });
      return { ...progress, pending: open.size };
    });
  }
}
