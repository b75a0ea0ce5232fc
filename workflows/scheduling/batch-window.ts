// Pure scheduling for workflow code: no I/O, no clock, no randomness; safe in the workflow bundle.

/**
 * Where a bulk submission's batch stands, as read from the warehouse (workflows/bulk-submit.ts).
 * Its window is not one of promises it holds (forEachInWindow): its transactions are workflows of
 * their own that outlive its runs, and one holds a slot only until it is submitted, so the slots
 * are counted from what the warehouse says each transaction is doing.
 */
export interface BatchStanding {
  /** Every request of the batch has been started. */
  allStarted: boolean;
  /** Started and not ended. */
  pending: number;
  /** Transactions still being created or submitted: the slots taken. */
  holding: number;
  /** Slots: transactions created or submitted at once. */
  concurrency: number;
}

export type BatchStep = { kind: 'close' } | { kind: 'start'; limit: number } | { kind: 'wait' };

/** How often the batch is read while transactions are being started, and while they are followed. */
export const STARTING_CHECK_MS = 250;
export const FOLLOWING_CHECK_MS = 2_000;

/**
 * What the bulk submission does after reading its batch: close it once everything started has
 * ended, start up to as many requests as slots are free, or wait for the next read.
 */
export function batchStep(s: BatchStanding): BatchStep {
  if (s.allStarted && s.pending === 0) return { kind: 'close' };
  const free = s.concurrency - s.holding;
  if (!s.allStarted && free > 0) return { kind: 'start', limit: free };
  return { kind: 'wait' };
}

/** The wait before the next read: short while starting, longer while only following. */
export function batchCheckMs(allStarted: boolean): number {
  return allStarted ? FOLLOWING_CHECK_MS : STARTING_CHECK_MS;
}
