import { afterPage, pagesToStart, type PageReadAhead } from '../../domain/paging/page-read-ahead.ts';

/**
 * A run of a supplier's pages inside one activity: the pages read ahead exactly as the supplier
 * workflow reads them one activity per page (domain/paging/page-read-ahead.ts: within the expected
 * pages `window` at once, past them one by one until the first page that is not full), collected in
 * order. One activity for many pages instead of one per page spares every page a hand-over through
 * the workflow thread and a workflow task (about a tenth of the worker's CPU at 20,000 plots).
 *
 * Bounded, so a run never grows past what a retry may redo: at most `maxPages` pages, and no page is
 * started after `seconds`. What is collected is never lost to a later failure: a page that fails after
 * others were collected ends the run there, and the workflow starts the next run at that page (the
 * retry policy applies to a run whose first page fails). Every page started is settled before the run
 * returns, so no write of a run outlives it.
 */

/** What one page did (activities.ts loadPlotPage's result). */
export interface PlotPageResult {
  /** Whether a next page may hold more plots (the page was full). */
  more: boolean;
  /** Plots the service sent on this page, valid or not. */
  received: number;
  /** Rows inserted, updated or soft-deleted by this page. */
  written: number;
  /** First and last plot id: a page equal to the previous one means the service ignored `page`. */
  signature: string;
}

export interface PageRunInput {
  runId: string;
  supplierId: string;
  /** The first page of this run. */
  first: number;
  /** Pages the connection's plotsCount predicts (0: unknown). */
  expected: number;
  /** Pages read at once within the expected ones. */
  window: number;
  /** Most pages this run collects. */
  maxPages: number;
  /** The signature of the page before `first`, if any. */
  lastSignature?: string | undefined;
}

export interface PageRunResult {
  /** Pages collected, in order from `first`. */
  pages: number;
  received: number;
  written: number;
  /** The next page to read. */
  next: number;
  /** A page that was not full was collected: the supplier's list is read. */
  ended: boolean;
  /** The last collected page's signature (the input's when none was collected). */
  signature?: string | undefined;
  /** A page equal to the one before it: the service ignored `page`; nothing after it was collected. */
  repeated?: number;
  /** A page failed after others were collected: the run ended before it, with this message. */
  stoppedBy?: string;
}

export interface PageRunLimits {
  /** No page is started after this many seconds (the pages started are collected). */
  seconds: number;
  /** Milliseconds, monotonic. */
  now(): number;
  /** The run was cancelled: a failure is then the cancellation's, not a page's to stop at. */
  cancelled(): boolean;
}

export async function runPages(
  input: PageRunInput,
  loadPage: (page: number) => Promise<PlotPageResult>,
  limits: PageRunLimits,
): Promise<PageRunResult> {
  const started = limits.now();
  const state: PageReadAhead = {
    first: input.first,
    launch: input.first,
    collect: input.first,
    inFlight: 0,
    ended: false,
  };
  const inFlight = new Map<number, Promise<PlotPageResult>>();
  const result: PageRunResult = {
    pages: 0,
    received: 0,
    written: 0,
    next: input.first,
    ended: false,
    signature: input.lastSignature,
  };
  const readAhead = () => ({
    expected: input.expected,
    window: Math.max(1, input.window),
    pagesPerRun: Math.max(1, input.maxPages),
    // The first page always starts: a run collects at least one page or fails.
    continueAsNewSuggested: state.launch > input.first && limits.now() - started > limits.seconds * 1000,
  });
  // Pages still running when the run ends (read ahead past the end, or past a failure) are let finish.
  const settle = () => Promise.allSettled(inFlight.values());
  try {
    for (;;) {
      for (const page of pagesToStart({ ...state, inFlight: inFlight.size }, readAhead())) {
        const load = loadPage(page);
        load.catch(() => undefined);
        inFlight.set(page, load);
        state.launch = page + 1;
      }
      const pending = inFlight.get(state.collect);
      if (!pending) break;
      let page: PlotPageResult;
      try {
        page = await pending;
      } catch (error) {
        if (result.pages === 0 || limits.cancelled()) throw error;
        result.stoppedBy = error instanceof Error ? error.message : String(error);
        break;
      } finally {
        inFlight.delete(state.collect);
      }
      if (page.signature !== '' && page.signature === result.signature) {
        result.repeated = state.collect;
        break;
      }
      result.pages++;
      result.received += page.received;
      result.written += page.written;
      result.signature = page.signature;
      state.collect++;
      result.next = state.collect;
      if (!page.more) state.ended = result.ended = true;
      if (afterPage({ ...state, inFlight: inFlight.size }, readAhead()) !== 'next') break;
    }
  } finally {
    await settle();
  }
  return result;
}
