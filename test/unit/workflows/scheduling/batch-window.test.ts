import { describe, it, expect } from 'vitest';
import {
  FOLLOWING_CHECK_MS,
  STARTING_CHECK_MS,
  batchCheckMs,
  batchStep,
} from '../../../../workflows/scheduling/batch-window.ts';

describe("a bulk submission's step after reading its batch", () => {
  it.each([
    {
      why: 'starts as many as slots are free',
      s: { allStarted: false, pending: 3, holding: 3, concurrency: 5 },
      step: { kind: 'start', limit: 2 },
    },
    {
      why: 'starts a whole window at first',
      s: { allStarted: false, pending: 0, holding: 0, concurrency: 20 },
      step: { kind: 'start', limit: 20 },
    },
    // Transactions waiting for the EU system are pending but hold no slot.
    {
      why: 'counts only transactions being created or submitted',
      s: { allStarted: false, pending: 40, holding: 1, concurrency: 2 },
      step: { kind: 'start', limit: 1 },
    },
    {
      why: 'waits while every slot is taken',
      s: { allStarted: false, pending: 5, holding: 5, concurrency: 5 },
      step: { kind: 'wait' },
    },
    {
      why: 'waits while more are held than there are slots',
      s: { allStarted: false, pending: 9, holding: 9, concurrency: 5 },
      step: { kind: 'wait' },
    },
    {
      why: 'follows once everything is started',
      s: { allStarted: true, pending: 2, holding: 0, concurrency: 5 },
      step: { kind: 'wait' },
    },
    {
      why: 'closes once everything started has ended',
      s: { allStarted: true, pending: 0, holding: 0, concurrency: 5 },
      step: { kind: 'close' },
    },
    // Not all started: a batch whose first requests all ended keeps starting.
    {
      why: 'does not close while requests remain to start',
      s: { allStarted: false, pending: 0, holding: 0, concurrency: 5 },
      step: { kind: 'start', limit: 5 },
    },
  ])('$why', ({ s, step }) => {
    expect(batchStep(s)).toEqual(step);
  });

  it('reads often while starting, less often while only following', () => {
    expect([batchCheckMs(false), batchCheckMs(true)]).toEqual([STARTING_CHECK_MS, FOLLOWING_CHECK_MS]);
    expect(STARTING_CHECK_MS).toBeLessThan(FOLLOWING_CHECK_MS);
  });
});
