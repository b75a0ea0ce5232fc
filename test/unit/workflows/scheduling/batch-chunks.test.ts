import { describe, it, expect } from 'vitest';
import {
  chunkPlan,
  followStep,
  progressOf,
  type FollowStanding,
} from '../../../../workflows/scheduling/batch-chunks.ts';

describe('chunks of a batch', () => {
  it('spreads a batch over the chunks in flight, 10 to 100 lines each (fewer only for a shorter file)', () => {
    expect(chunkPlan(200, 4)).toBe(50);
    expect(chunkPlan(10_000, 4)).toBe(100);
    expect(chunkPlan(100_000, 4)).toBe(100);
    expect(chunkPlan(30, 4)).toBe(10);
    expect(chunkPlan(3, 4)).toBe(3);
    expect(chunkPlan(0, 4)).toBe(1);
    // A batch of about 200 keys runs several chunks at once: several workers get some.
    expect(Math.ceil(200 / chunkPlan(200, 4))).toBeGreaterThan(1);
  });
});

describe('after reading the due transactions', () => {
  const base: FollowStanding = {
    allSent: true,
    sending: false,
    historyFull: false,
    states: { submitted: 3, available: 2 },
    nextDueInMs: 1_500,
    readAll: true,
    idleMs: 60_000,
  };

  it('ends once everything was sent and no transaction is unfinished', () => {
    expect(followStep({ ...base, states: { available: 4, error: 1, cancelled: 2 } })).toEqual({ kind: 'done' });
    // Not while chunks are still being sent, nor with a key not sent, a draft or a submitted one left.
    expect(followStep({ ...base, sending: true, allSent: false, states: { available: 4 } }).kind).not.toBe('done');
    for (const state of ['pending', 'created', 'submitted'])
      expect(followStep({ ...base, states: { available: 4, [state]: 1 } }).kind).not.toBe('done');
  });

  it('sleeps until the earliest transaction is due, reads again at once when some were left or are due', () => {
    expect(followStep(base)).toEqual({ kind: 'wait', waitMs: 1_500 });
    expect(followStep({ ...base, readAll: false })).toEqual({ kind: 'read' });
    expect(followStep({ ...base, nextDueInMs: 0 })).toEqual({ kind: 'read' });
  });

  it('waits for a signal (a chunk ending, a webhook) when nothing is due while sending; looks again now and then after', () => {
    expect(followStep({ ...base, allSent: false, sending: true, nextDueInMs: null, states: { pending: 5 } })).toEqual({
      kind: 'wait',
      waitMs: null,
    });
    expect(followStep({ ...base, nextDueInMs: null })).toEqual({ kind: 'wait', waitMs: 60_000 });
  });

  it('counts again at the next allowed time when the counts are older than the last read, not after the whole wait', () => {
    // An hour of EU wait ahead; the last step read (a transaction may have become available) without counting.
    const waiting = { ...base, nextDueInMs: 3_600_000 };
    expect(followStep({ ...waiting, recountInMs: 3_200 })).toEqual({ kind: 'wait', waitMs: 3_200 });
    // Nothing due, chunks still sending (a chunk's end wakes it): the recount still comes.
    expect(
      followStep({
        ...base,
        allSent: false,
        sending: true,
        nextDueInMs: null,
        states: { pending: 5 },
        recountInMs: 800,
      }),
    ).toEqual({ kind: 'wait', waitMs: 800 });
    // A count already allowed: read (and count) now.
    expect(followStep({ ...waiting, recountInMs: 0 })).toEqual({ kind: 'read' });
    // Something due sooner than the recount: that first.
    expect(followStep({ ...base, recountInMs: 4_000 })).toEqual({ kind: 'wait', waitMs: 1_500 });
    // Counts taken by the last step: the whole wait.
    expect(followStep(waiting)).toEqual({ kind: 'wait', waitMs: 3_600_000 });
  });

  it('continues as new when the history is full, once no chunk is being sent', () => {
    expect(followStep({ ...base, historyFull: true })).toEqual({ kind: 'continue' });
    expect(followStep({ ...base, historyFull: true, sending: true, allSent: false })).toEqual({
      kind: 'wait',
      waitMs: 1_500,
    });
    // Done beats continuing: a finished batch closes in this run.
    expect(followStep({ ...base, historyFull: true, states: { available: 5 } })).toEqual({ kind: 'done' });
  });
});

describe('progress of a batch', () => {
  it('counts as bulkSubmit did: started (sent or ended), ended, pending (started, not ended), failed with timed out', () => {
    expect(
      progressOf({ pending: 3, created: 1, submitted: 2, available: 4, error: 1, failed: 1, timed_out: 1 }, false),
    ).toEqual({
      started: 10,
      states: { pending: 3, created: 1, submitted: 2, available: 4, error: 1, failed: 1, timed_out: 1 },
      ended: 7,
      pending: 3,
      available: 4,
      error: 1,
      failed: 2,
      alreadyStarted: 0,
      allStarted: false,
    });
  });
});
