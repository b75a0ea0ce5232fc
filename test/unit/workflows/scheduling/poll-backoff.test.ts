import { describe, it, expect } from 'vitest';
import { nextPollDelay, nextPollWait, type PollTiming } from '../../../../workflows/scheduling/poll-backoff.ts';
import { DEFAULT_TRANSACTION_TIMING } from '../../../../workflows/submit-transaction.ts';

const MIN = 60_000;

/**
 * When a followed transaction is read, as submit-transaction.ts drives it with no webhook: wait,
 * read (SUBMITTED from the read at `submittedAtRead`, 1-based, on), back off. Minutes after
 * following began, ending with 'timed out' when the deadline ends it.
 */
function reads(timing: PollTiming, submittedAtRead: number, count: number): Array<number | 'timed out'> {
  const out: Array<number | 'timed out'> = [];
  let now = 0;
  let submittedSeenAt: number | undefined;
  let delay = timing.firstPollMs;
  while (out.length < count) {
    const wait = nextPollWait(timing, { startedAt: 0, submittedSeenAt, delay }, now);
    if (wait === null) return [...out, 'timed out'];
    now += wait;
    out.push(now / MIN);
    if (out.length === submittedAtRead) submittedSeenAt = now;
    delay = nextPollDelay(delay, timing);
  }
  return out;
}

describe("following a submitted transaction: backoff, the EU system's wait, the deadline", () => {
  it('reads after 1 minute, then no sooner than 30 minutes after SUBMITTED, then doubling up to an hourly read', () => {
    expect(DEFAULT_TRANSACTION_TIMING).toMatchObject({ firstPollMs: MIN, maxPollMs: 60 * MIN, euWaitMs: 30 * MIN });
    expect(reads(DEFAULT_TRANSACTION_TIMING, 1, 10)).toEqual([1, 31, 35, 43, 59, 91, 151, 211, 271, 331]);
  });

  it('doubles from the first read when the transaction is not SUBMITTED yet', () => {
    expect(reads(DEFAULT_TRANSACTION_TIMING, Infinity, 8)).toEqual([1, 3, 7, 15, 31, 63, 123, 183]);
  });

  it('reads a last time at the deadline, then times out', () => {
    expect(reads({ ...DEFAULT_TRANSACTION_TIMING, deadlineMs: 120 * MIN }, 1, 20)).toEqual([
      1,
      31,
      35,
      43,
      59,
      91,
      120,
      'timed out',
    ]);
  });

  it.each([
    { why: "the backoff's delay", s: { submittedSeenAt: undefined, delay: 4 * MIN }, now: 10 * MIN, wait: 4 * MIN },
    {
      why: 'stretched to 30 minutes after SUBMITTED',
      s: { submittedSeenAt: 10 * MIN, delay: 4 * MIN },
      now: 12 * MIN,
      wait: 28 * MIN,
    },
    {
      why: "the delay once the EU's wait is over",
      s: { submittedSeenAt: 10 * MIN, delay: 4 * MIN },
      now: 45 * MIN,
      wait: 4 * MIN,
    },
    {
      why: 'cut to what is left before the deadline',
      s: { submittedSeenAt: undefined, delay: 60 * MIN },
      now: 100 * MIN,
      wait: 20 * MIN,
    },
    { why: 'the deadline reached', s: { submittedSeenAt: undefined, delay: MIN }, now: 120 * MIN, wait: null },
    { why: 'the deadline passed', s: { submittedSeenAt: 1, delay: MIN }, now: 121 * MIN, wait: null },
  ])('waits $why', ({ s, now, wait }) => {
    expect(nextPollWait({ ...DEFAULT_TRANSACTION_TIMING, deadlineMs: 120 * MIN }, { startedAt: 0, ...s }, now)).toBe(
      wait,
    );
  });

  it.each([
    { delay: MIN, next: 2 * MIN },
    { delay: 40 * MIN, next: 60 * MIN },
    { delay: 60 * MIN, next: 60 * MIN },
  ])('backs off from $delay ms to $next ms', ({ delay, next }) => {
    expect(nextPollDelay(delay, { maxPollMs: 60 * MIN })).toBe(next);
  });
});
