import { ApplicationFailure, CancellationScope, continueAsNew, patched, workflowInfo } from '@temporalio/workflow';
import type { PlotPageResult } from '../activities/refresh/activities.ts';
import { refreshActivities, type PageActivityMode, type RefreshTimeouts } from './refresh-activities.ts';
import { failureMessage } from './failure-message.ts';
import { afterPage, pagesToStart } from '../domain/paging/page-read-ahead.ts';

/**
 * Every page of one supplier's plots (its own and its upstream businesses'), each page of 500
 * fetched, validated, mapped and written by an activity: local activities reading runs of pages
 * (activities/refresh/page-run.ts), or in task-queue mode one activity per page. Only counts and
 * "more?" come back, so plot data never enters history; the workflow continues as new every
 * `pagesPerRun` pages.
 *
 * After the last page, one activity checks what the scan missed (activities/refresh/scan-verification.ts).
 *
 * Within the pages the connection's plotsCount predicts, up to `pageWindow` pages are read at once;
 * past them pages go one by one until the first that is not full (lists have no total: a full page
 * means "ask again"), so a stale plotsCount costs nothing but speed (domain/paging/page-read-ahead.ts).
 */
export interface SyncSupplierPlotsInput {
  runId: string;
  supplierId: string;
  /** Pages the connection's plotsCount predicts; null when unknown. */
  expectedPages?: number | null;
  /** Pages read at once within the expected ones (default 2). */
  pageWindow?: number;
  /** Continue-as-new every so many pages (default 100). */
  pagesPerRun?: number;
  /** Carried across continue-as-new. */
  page?: number;
  totals?: SupplierTotals;
  lastSignature?: string;
  timeouts?: RefreshTimeouts;
  pageActivities?: PageActivityMode;
}

export interface SupplierTotals {
  pages: number;
  plots: number;
  written: number;
}

export const supplierPlotsWorkflowId = (runId: string, supplierId: string) => `refresh/${runId}/supplier/${supplierId}`;

export async function syncSupplierPlots(input: SyncSupplierPlotsInput): Promise<SupplierTotals> {
  const { runId, supplierId } = input;
  // At least one page per run: with none, a run could start nothing and continue as new for ever.
  const pagesPerRun = Math.max(1, input.pagesPerRun ?? 100);
  const expected = input.expectedPages ?? 0;
  const window = Math.max(1, input.pageWindow ?? 2);
  const { loadPlotPage, loadPlotPages, closeSupplierScan, verifySupplierScan, finishSupplier } = refreshActivities(
    input.timeouts,
    input.pageActivities,
  );
  const totals = { ...(input.totals ?? { pages: 0, plots: 0, written: 0 }) };
  const reading: Reading = {
    input,
    first: input.page ?? 1,
    expected,
    window,
    pagesPerRun,
    totals,
    lastSignature: input.lastSignature,
  };
  let next: SyncSupplierPlotsInput | undefined;
  try {
    // Local page loads go as runs of pages, one activity for many (activities/refresh/page-run.ts).
    // Runs started before keep one activity per page, as their histories record.
    next =
      (input.pageActivities ?? 'local') === 'local' && patched('supplier-page-runs')
        ? await readInRuns(reading, loadPlotPages)
        : await readPageByPage(reading, loadPlotPage);
    // What the scan missed is proven gone, found again or deferred (offset pages are not a snapshot).
    // Settled in the warehouse alone when no page needs reading again (closeSupplierScan, local).
    if (!next && patched('close-supplier-scan-locally') && (await closeSupplierScan({ runId, supplierId })))
      return totals;
    if (!next && patched('verify-supplier-scan')) await verifySupplierScan({ runId, supplierId });
  } catch (error) {
    await CancellationScope.nonCancellable(() => finishSupplier({ runId, supplierId, error: failureMessage(error) }));
    throw error;
  }
  if (next) return continueAsNew<typeof syncSupplierPlots>(next);
  await finishSupplier({ runId, supplierId });
  return totals;
}

function repeatedPage(page: number, supplierId: string): ApplicationFailure {
  return ApplicationFailure.nonRetryable(
    `page ${page} repeats page ${page - 1} of supplier ${supplierId}: the service ignored the page parameter`,
    'RepeatedPageError',
  );
}

/** Where a supplier workflow run reads from, and what it has counted (mutated as pages come in). */
interface Reading {
  input: SyncSupplierPlotsInput;
  first: number;
  expected: number;
  window: number;
  pagesPerRun: number;
  totals: SupplierTotals;
  lastSignature: string | undefined;
}

type Activities = ReturnType<typeof refreshActivities>;

/** Reads in runs of pages until the last page or the run's page budget; returns the input to continue as new with, if any. */
async function readInRuns(
  r: Reading,
  loadPlotPages: Activities['loadPlotPages'],
): Promise<SyncSupplierPlotsInput | undefined> {
  const { input, totals } = r;
  let collect = r.first;
  for (;;) {
    const maxPages = r.pagesPerRun - (collect - r.first);
    if (maxPages <= 0 || workflowInfo().continueAsNewSuggested)
      return { ...input, page: collect, totals, lastSignature: r.lastSignature };
    const run = await loadPlotPages({
      runId: input.runId,
      supplierId: input.supplierId,
      first: collect,
      expected: r.expected,
      window: r.window,
      maxPages,
      lastSignature: r.lastSignature,
    });
    totals.pages += run.pages;
    totals.plots += run.received;
    totals.written += run.written;
    if (run.repeated !== undefined) throw repeatedPage(run.repeated, input.supplierId);
    // A run collects a page or fails (page-run.ts); never loop on one that did neither.
    if (run.pages === 0)
      throw ApplicationFailure.nonRetryable(`a run of pages of supplier ${input.supplierId} read no page`);
    collect = run.next;
    r.lastSignature = run.signature;
    if (run.ended) return undefined;
  }
}

/** One activity per page (task-queue mode, and runs started before runs of pages). */
async function readPageByPage(
  r: Reading,
  loadPlotPage: Activities['loadPlotPage'],
): Promise<SyncSupplierPlotsInput | undefined> {
  const { input, first, totals } = r;
  const { runId, supplierId } = input;
  const inFlight = new Map<number, Promise<PlotPageResult>>();
  let launch = first;
  let collect = first;
  let ended = false;
  // What workflowInfo() says now: read at each step, as Temporal updates it between activations.
  const limits = () => ({
    expected: r.expected,
    window: r.window,
    pagesPerRun: r.pagesPerRun,
    continueAsNewSuggested: workflowInfo().continueAsNewSuggested,
  });
  for (;;) {
    for (const page of pagesToStart({ first, launch, collect, inFlight: inFlight.size, ended }, limits())) {
      const load = loadPlotPage({ runId, supplierId, page });
      // A page read ahead can fail after an earlier page has already ended the supplier (both ran out
      // of retries in one outage of the service). Unhandled, that rejection failed every workflow task
      // of the supplier, replay after replay: it never ended and its refresh hung. Handled here, it is
      // simply not awaited. (No command changes: histories replay as before.)
      load.catch(() => undefined);
      inFlight.set(page, load);
      launch = page + 1;
    }
    const pending = inFlight.get(collect);
    if (!pending) {
      // Nothing could start (Temporal already suggests continuing as new): never end a supplier
      // as read without reading it, continue as new from here instead.
      if (!ended && patched('no-empty-supplier-run'))
        return { ...input, page: collect, totals, lastSignature: r.lastSignature };
      return undefined;
    }
    const result = await pending;
    inFlight.delete(collect);
    if (result.signature !== '' && result.signature === r.lastSignature) throw repeatedPage(collect, supplierId);
    totals.pages++;
    totals.plots += result.received;
    totals.written += result.written;
    r.lastSignature = result.signature;
    collect++;
    if (!result.more) ended = true;
    const step = afterPage({ first, launch, collect, inFlight: inFlight.size, ended }, limits());
    if (step === 'done') return undefined;
    if (step === 'continue-as-new') return { ...input, page: collect, totals, lastSignature: r.lastSignature };
  }
}
