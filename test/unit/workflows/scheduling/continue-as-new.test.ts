import { describe, it, expect } from 'vitest';
import {
  CHILDREN_PER_RUN,
  HISTORY_EVENTS_PER_RUN,
  historyFull,
  mayStartChild,
} from '../../../../workflows/scheduling/continue-as-new.ts';

describe('when long-running workflows continue as new', () => {
  it.each([
    { why: 'a short history', info: { historyLength: 120, continueAsNewSuggested: false }, full: false },
    {
      why: 'exactly at the limit',
      info: { historyLength: HISTORY_EVENTS_PER_RUN, continueAsNewSuggested: false },
      full: false,
    },
    {
      why: 'past the limit',
      info: { historyLength: HISTORY_EVENTS_PER_RUN + 1, continueAsNewSuggested: false },
      full: true,
    },
    {
      why: "Temporal's suggestion, however short",
      info: { historyLength: 120, continueAsNewSuggested: true },
      full: true,
    },
  ])('historyFull with $why: $full', ({ info, full }) => {
    expect(historyFull(info)).toBe(full);
  });

  it("takes a limit of its own (bulk submission's historyLimit)", () => {
    expect([
      historyFull({ historyLength: 31, continueAsNewSuggested: false }, 30),
      historyFull({ historyLength: 30, continueAsNewSuggested: false }, 30),
    ]).toEqual([true, false]);
  });

  it.each([
    { why: 'the first child', started: 0, suggested: false, perRun: undefined, may: true },
    { why: 'the 500th child', started: CHILDREN_PER_RUN - 1, suggested: false, perRun: undefined, may: true },
    { why: 'the 501st child', started: CHILDREN_PER_RUN, suggested: false, perRun: undefined, may: false },
    { why: 'a child past a budget of 2', started: 2, suggested: false, perRun: 2, may: false },
    {
      why: 'a child when Temporal suggests continue-as-new',
      started: 0,
      suggested: true,
      perRun: undefined,
      may: false,
    },
  ])('mayStartChild for $why: $may', ({ started, suggested, perRun, may }) => {
    expect(mayStartChild(started, { continueAsNewSuggested: suggested }, perRun)).toBe(may);
  });
});
