import { describe, it, expect } from 'vitest';
import {
  afterPage,
  mayStartPage,
  pagesToStart,
  type PageReadAhead,
  type PageReadAheadLimits,
} from '../../../../domain/paging/page-read-ahead.ts';

const limits = (l: Partial<PageReadAheadLimits> = {}): PageReadAheadLimits => ({
  expected: 0,
  window: 2,
  pagesPerRun: 100,
  continueAsNewSuggested: false,
  ...l,
});
const at = (s: Partial<PageReadAhead> = {}): PageReadAhead => ({
  first: 1,
  launch: 1,
  collect: 1,
  inFlight: 0,
  ended: false,
  ...s,
});

/**
 * One supplier workflow run, as sync-supplier-plots.ts drives it: start what pagesToStart says,
 * collect the next page (full, i.e. "more", up to page `pages`), ask afterPage. Returns the pages
 * started before each collection and how the run ends.
 */
function run(
  pages: number,
  l: PageReadAheadLimits,
  first = 1,
  suggestAfter = Infinity,
): { waves: number[][]; end: string } {
  let s = at({ first, launch: first, collect: first });
  const waves: number[][] = [];
  for (let collected = 0; ; collected++) {
    const now = { ...l, continueAsNewSuggested: collected >= suggestAfter };
    const started = pagesToStart(s, now);
    waves.push(started);
    s = { ...s, launch: s.launch + started.length, inFlight: s.inFlight + started.length };
    if (s.inFlight === 0) return { waves, end: 'nothing to collect' };
    s = { ...s, collect: s.collect + 1, inFlight: s.inFlight - 1, ended: s.ended || s.collect >= pages };
    const step = afterPage(s, now);
    if (step === 'done') return { waves, end: `done after page ${s.collect - 1}` };
    if (step === 'continue-as-new') return { waves, end: `continue as new at page ${s.collect}` };
  }
}

describe("a supplier's pages: read ahead within the expected ones, one by one past them", () => {
  it.each([
    {
      name: 'reads two at a time through the expected pages',
      pages: 3,
      l: limits({ expected: 3 }),
      waves: [[1, 2], [3], []],
      end: 'done after page 3',
    },
    {
      name: 'reads three at a time with a window of three',
      pages: 5,
      l: limits({ expected: 5, window: 3 }),
      waves: [[1, 2, 3], [4], [5], [], []],
      end: 'done after page 5',
    },
    // plotsCount was stale: more pages than it predicted, each asked for only once the one before was full.
    {
      name: 'goes one by one past the expected pages',
      pages: 4,
      l: limits({ expected: 2 }),
      waves: [[1, 2], [], [3], [4]],
      end: 'done after page 4',
    },
    // 1,000 plots: two full pages, then an empty third that says "no more".
    {
      name: 'asks once past a last page that was full',
      pages: 3,
      l: limits({ expected: 2 }),
      waves: [[1, 2], [], [3]],
      end: 'done after page 3',
    },
    {
      name: 'reads one at a time when nothing is expected',
      pages: 3,
      l: limits({ expected: 0, window: 4 }),
      waves: [[1], [2], [3]],
      end: 'done after page 3',
    },
    // plotsCount was stale the other way: the page read ahead is collected (empty), none after it started.
    {
      name: 'starts no page after one that was not full, however many were expected',
      pages: 1,
      l: limits({ expected: 4 }),
      waves: [[1, 2], []],
      end: 'done after page 2',
    },
    {
      name: 'continues as new after `pagesPerRun` pages',
      pages: 9,
      l: limits({ expected: 9, window: 3, pagesPerRun: 2 }),
      waves: [[1, 2], []],
      end: 'continue as new at page 3',
    },
    {
      name: "ends the run when the last page is the budget's last",
      pages: 2,
      l: limits({ expected: 2, pagesPerRun: 2 }),
      waves: [[1, 2], []],
      end: 'done after page 2',
    },
  ])('$name', ({ pages, l, waves, end }) => {
    expect(run(pages, l)).toEqual({ waves, end });
  });

  it("counts the budget from the run's first page after continue-as-new", () => {
    expect(run(9, limits({ expected: 9, window: 2, pagesPerRun: 3 }), 4)).toEqual({
      waves: [[4, 5], [6], []],
      end: 'continue as new at page 7',
    });
  });

  it('starts nothing more once Temporal suggests continue-as-new, and continues as new after what runs', () => {
    expect(run(9, limits({ expected: 9, window: 3 }), 1, 1)).toEqual({
      waves: [[1, 2, 3], [], []],
      end: 'continue as new at page 4',
    });
  });

  // The workflow would then have nothing to collect and leave its loop as if the supplier were done:
  // only a fresh run's small history (no hint) and a pagesPerRun of at least 1 keep that from happening.
  it('starts nothing when the hint is set before the first page', () => {
    expect(run(3, limits({ expected: 3 }), 1, 0)).toEqual({ waves: [[]], end: 'nothing to collect' });
  });

  it.each([
    { why: 'at the start', s: at(), l: limits(), may: true },
    { why: 'after a page that was not full', s: at({ ended: true }), l: limits(), may: false },
    {
      why: "with the run's pages all started",
      s: at({ first: 3, launch: 5 }),
      l: limits({ pagesPerRun: 2 }),
      may: false,
    },
    {
      why: "with one of the run's pages left",
      s: at({ first: 3, launch: 4 }),
      l: limits({ pagesPerRun: 2 }),
      may: true,
    },
    { why: 'when Temporal suggests continue-as-new', s: at(), l: limits({ continueAsNewSuggested: true }), may: false },
  ])('mayStartPage $why: $may', ({ s, l, may }) => {
    expect(mayStartPage(s, l)).toBe(may);
  });

  it.each([
    { why: 'a slot free within the expected pages', s: at({ launch: 3, collect: 2, inFlight: 1 }), pages: [3] },
    { why: 'the window full', s: at({ launch: 4, collect: 2, inFlight: 2 }), pages: [] },
    { why: 'past the expected pages, the page to collect', s: at({ launch: 6, collect: 6 }), pages: [6] },
    { why: 'past the expected pages, one running already', s: at({ launch: 7, collect: 6, inFlight: 1 }), pages: [] },
    { why: 'after a page that was not full', s: at({ launch: 3, collect: 3, ended: true }), pages: [] },
  ])('pagesToStart with $why: $pages', ({ s, pages }) => {
    const l = limits({ expected: 5 });
    expect(pagesToStart(s, l)).toEqual(pages);
  });

  it.each([
    {
      why: 'the last page in, one read ahead still running',
      s: at({ collect: 2, inFlight: 1, ended: true }),
      step: 'next',
    },
    { why: 'the last page in, nothing running', s: at({ collect: 2, ended: true }), step: 'done' },
    { why: 'more pages, nothing running', s: at({ launch: 3, collect: 3 }), step: 'next' },
    {
      why: "more pages, the run's budget spent",
      s: at({ launch: 3, collect: 3 }),
      l: limits({ pagesPerRun: 2 }),
      step: 'continue-as-new',
    },
    {
      why: 'more pages, Temporal suggests continue-as-new',
      s: at({ launch: 3, collect: 3 }),
      l: limits({ continueAsNewSuggested: true }),
      step: 'continue-as-new',
    },
  ])('afterPage with $why: $step', ({ s, l, step }) => {
    expect(afterPage(s, l ?? limits())).toBe(step);
  });
});
