// Pure scheduling for workflow code: no I/O, no clock, no randomness; safe in the workflow bundle.

/** The waits of a followed transaction (workflows/submit-transaction.ts, TransactionTiming). */
export interface PollTiming {
  /** First wait after submitting. */
  firstPollMs: number;
  /** Longest wait between two reads. */
  maxPollMs: number;
  /** No read of a SUBMITTED transaction sooner than this after it was seen SUBMITTED. */
  euWaitMs: number;
  /** Following ends this long after it began. */
  deadlineMs: number;
}

export interface PollState {
  /** When following began (workflow time, ms). */
  startedAt: number;
  /** When the transaction was first seen SUBMITTED, if it was. */
  submittedSeenAt: number | undefined;
  /** The backoff's current wait: firstPollMs, doubling after each read (nextPollDelay). */
  delay: number;
}

/**
 * How long to wait at `now` before reading the transaction again, or null once the deadline has
 * passed (the transaction ends timed out). The backoff's delay, stretched to the EU system's wait
 * after SUBMITTED, cut to what is left before the deadline. A webhook may end the wait sooner.
 */
export function nextPollWait(timing: PollTiming, s: PollState, now: number): number | null {
  if (now - s.startedAt >= timing.deadlineMs) return null;
  let wait = s.delay;
  if (s.submittedSeenAt !== undefined) wait = Math.max(wait, s.submittedSeenAt + timing.euWaitMs - now);
  return Math.min(wait, s.startedAt + timing.deadlineMs - now);
}

/** The backoff's next delay: doubled, at most maxPollMs. */
export function nextPollDelay(delay: number, timing: Pick<PollTiming, 'maxPollMs'>): number {
  return Math.min(delay * 2, timing.maxPollMs);
}
