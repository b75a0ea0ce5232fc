import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  condition,
  defineQuery,
  defineSignal,
  isCancellation,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
} from '@temporalio/workflow';
import type { SubmissionActivities, TransactionView } from '../activities/submission/activities.ts';
import { failureMessage } from './failure-message.ts';
// A pure module (no I/O): safe in the workflow bundle.
import { EU_POLL_NOT_BEFORE_MS } from '../schema/upstream/service-facts.ts';
import { nextPollDelay, nextPollWait } from './scheduling/poll-backoff.ts';

/**
 * One shipment, from request to DDS reference: create the DRAFT (customId = key, exactly once),
 * submit it, then follow it with durable timers, backing off, never polling a SUBMITTED transaction
 * sooner than `euWaitMs` after it was seen SUBMITTED (the EU system's wish), and woken at once by a
 * `transactionUpdated` signal (the webhook receiver's). Ends at AVAILABLE, ERROR or WITHDRAWN, or at
 * the deadline. A refusal by the service (not entitled, invalid, ddsync's credentials refused) ends it
 * at once as failed; 429, 5xx, 401 and network errors are retried, without end, by the activities.
 * A key that failed without the service refusing it can run again (bulk-submit's `restart`): this
 * workflow then goes on with what the key has at the service (createAndSubmitTransaction).
 */
export interface TransactionTiming {
  /** First wait after submitting (default 1 minute). */
  firstPollMs: number;
  /** Longest wait between two reads (default 1 hour). */
  maxPollMs: number;
  /** No read of a SUBMITTED transaction sooner than this after it was seen SUBMITTED (default 30 minutes). */
  euWaitMs: number;
  /** Give up following after this long (default 7 days): the transaction ends as timed_out. */
  deadlineMs: number;
  /**
   * After a create whose answer was lost, how long it may take to appear under its customId before
   * a second create is sent (default 2 minutes, well past the client's request timeout).
   */
  createSettleMs?: number;
}

export const DEFAULT_TRANSACTION_TIMING: TransactionTiming = {
  firstPollMs: 60_000,
  maxPollMs: 3_600_000,
  euWaitMs: EU_POLL_NOT_BEFORE_MS,
  deadlineMs: 7 * 86_400_000,
};

export interface SubmitTransactionInput {
  key: string;
  batchId: string;
  timing?: Partial<TransactionTiming>;
}

export type TransactionOutcome = 'available' | 'error' | 'withdrawn' | 'failed' | 'timed_out' | 'cancelled';

export interface SubmitTransactionResult {
  key: string;
  outcome: TransactionOutcome;
  transactionId: string | null;
  status: string | null;
}

/** Sent by the webhook receiver when the service says the transaction changed. */
export const transactionUpdatedSignal = defineSignal<[{ status?: string }]>('transactionUpdated');
export const transactionStatusQuery = defineQuery<{
  key: string;
  phase: string;
  status: string | null;
  transactionId: string | null;
  polls: number;
}>('status');

export const transactionWorkflowId = (key: string) => `transaction/${key}`;

// Local activities: each call runs in the worker that runs the transaction's workflow, without a
// round trip through the server (a bulk submission is thousands of them). Creating stays exactly-once
// when a worker dies mid-call: the attempt is counted in the warehouse before the request is sent,
// so the replayed call looks the transaction up by its customId first.
const { createAndSubmitTransaction, pollTransactionStatus } = proxyLocalActivities<SubmissionActivities>({
  startToCloseTimeout: '2 minutes',
  // Without end: a transaction must never be lost to an outage. Refusals are not retried (non-retryable).
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '5 minutes' },
});
const { recordTransactionEnd, deleteDraftTransaction } = proxyActivities<SubmissionActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

/**
 * A refusal by the service (a non-retryable failure of an activity), as opposed to a cancellation.
 * A local activity's failure may arrive unwrapped, an ordinary activity's inside an ActivityFailure.
 */
function isRefusal(error: unknown): boolean {
  const failure = error instanceof ActivityFailure ? error.cause : error;
  return failure instanceof ApplicationFailure && failure.nonRetryable === true;
}

export async function submitTransaction(input: SubmitTransactionInput): Promise<SubmitTransactionResult> {
  try {
    return await followShipment(input);
  } catch (error) {
    // Whatever ends this workflow, the warehouse must say so: the bulk submission waits for it.
    if (!isCancellation(error))
      await CancellationScope.nonCancellable(() =>
        recordTransactionEnd({ key: input.key, state: 'failed', error: failureMessage(error) }),
      );
    throw error;
  }
}

async function followShipment(input: SubmitTransactionInput): Promise<SubmitTransactionResult> {
  const timing = { ...DEFAULT_TRANSACTION_TIMING, ...input.timing };
  const { key } = input;
  const state = { phase: 'creating', status: null as string | null, transactionId: null as string | null, polls: 0 };
  let woken = false;
  setHandler(transactionUpdatedSignal, () => {
    woken = true;
  });
  setHandler(transactionStatusQuery, () => ({ key, ...state }));
  const end = async (outcome: TransactionOutcome, error: string | null): Promise<SubmitTransactionResult> => {
    if (outcome === 'failed' || outcome === 'timed_out' || outcome === 'cancelled')
      await recordTransactionEnd({ key, state: outcome, error });
    state.phase = 'done';
    return { key, outcome, transactionId: state.transactionId, status: state.status };
  };

  let current: TransactionView;
  try {
    current = await createAndSubmitTransaction({
      key,
      ...(timing.createSettleMs !== undefined ? { createSettleMs: timing.createSettleMs } : {}),
    });
    state.transactionId = current.transactionId;
  } catch (error) {
    if (isCancellation(error)) {
      // Cancelled before it was submitted: a draft is deleted, nothing reaches the EU system. One
      // whose submit reached the service as the batch was cancelled is at the EU: it is followed.
      const outcome = await CancellationScope.nonCancellable(() => deleteDraftTransaction({ key }));
      if (!(outcome.submitted && patched('follow-submitted-after-cancel'))) {
        return CancellationScope.nonCancellable(() => end('cancelled', 'cancelled before it was submitted'));
      }
      current = outcome.submitted;
      state.transactionId = current.transactionId;
    } else {
      if (isRefusal(error)) return CancellationScope.nonCancellable(() => end('failed', failureMessage(error)));
      throw error;
    }
  }
  state.phase = 'following';
  state.status = current.status;

  // Submitted transactions are followed to the end even if the batch is cancelled: they exist at the EU.
  return CancellationScope.nonCancellable(async () => {
    const startedAt = Date.now();
    let submittedSeenAt = current.status === 'SUBMITTED' ? startedAt : undefined;
    let delay = timing.firstPollMs;
    while (!current.final) {
      const wait = nextPollWait(timing, { startedAt, submittedSeenAt, delay }, Date.now());
      if (wait === null)
        return end(
          'timed_out',
          `no final status within ${Math.round(timing.deadlineMs / 60_000)} minutes (last: ${current.status})`,
        );
      const signalled = await condition(() => woken, wait);
      // Reset before reading: an update that arrives while reading wakes the next wait.
      woken = false;
      let next: TransactionView;
      try {
        next = await pollTransactionStatus({
          key,
          transactionId: current.transactionId,
          source: signalled ? 'webhook' : 'poll',
        });
      } catch (error) {
        if (isRefusal(error)) return end('failed', failureMessage(error));
        throw error;
      }
      state.polls++;
      if (next.status === 'SUBMITTED' && current.status !== 'SUBMITTED') submittedSeenAt = Date.now();
      current = next;
      state.status = current.status;
      delay = nextPollDelay(delay, timing);
    }
    return end(current.state as TransactionOutcome, null);
  });
}
