// Pure scheduling of a supplier's page reads (workflows/sync-supplier-plots.ts, and the page runs of
// activities/refresh/page-run.ts): no I/O, no clock, no randomness; safe in the workflow bundle.

/**
 * Where a supplier workflow stands in its pages (workflows/sync-supplier-plots.ts). Pages are
 * started in order from `launch` and collected in order from `collect`.
 */
export interface PageReadAhead {
  /** The first page of this workflow run. */
  first: number;
  /** The next page to start. */
  launch: number;
  /** The next page to collect. */
  collect: number;
  /** Pages started and not collected yet. */
  inFlight: number;
  /** A page came back not full: no page after it is started. */
  ended: boolean;
}

export interface PageReadAheadLimits {
  /** Pages the connection's plotsCount predicts (0: unknown). */
  expected: number;
  /** Pages read at once within the expected ones. */
  window: number;
  /** Pages a workflow run starts before it continues as new. */
  pagesPerRun: number;
  /** Temporal's hint that the history is large (workflowInfo().continueAsNewSuggested). */
  continueAsNewSuggested: boolean;
}

/** Whether this run may start any further page: not past the last page, its page budget, or Temporal's hint. */
export function mayStartPage(s: Pick<PageReadAhead, 'first' | 'launch' | 'ended'>, l: PageReadAheadLimits): boolean {
  return !s.ended && s.launch - s.first < l.pagesPerRun && !l.continueAsNewSuggested;
}

/**
 * The pages to start now, in order. Within the expected pages up to `window` are read at once;
 * past them one at a time, and only the page to collect next (lists have no total: a full page
 * means "ask again"), so a stale plotsCount costs speed, never a page read in vain.
 */
export function pagesToStart(s: PageReadAhead, l: PageReadAheadLimits): number[] {
  const limit = s.collect <= l.expected ? l.window : 1;
  const pages: number[] = [];
  let launch = s.launch;
  while (
    mayStartPage({ ...s, launch }, l) &&
    s.inFlight + pages.length < limit &&
    (launch <= l.expected || launch === s.collect)
  ) {
    pages.push(launch++);
  }
  return pages;
}

/**
 * After a page was collected (the state already counts it): `done` when the last page is in and
 * nothing runs, `continue-as-new` when more pages remain but this run may start none, else `next`.
 */
export function afterPage(s: PageReadAhead, l: PageReadAheadLimits): 'next' | 'done' | 'continue-as-new' {
  if (s.inFlight > 0) return 'next';
  if (s.ended) return 'done';
  return mayStartPage(s, l) ? 'next' : 'continue-as-new';
}
