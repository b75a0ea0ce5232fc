import { ApplicationFailure, CancellationScope, continueAsNew, patched, workflowInfo } from '@temporalio/workflow';
import type { PlotPageResult } from '../activities/refresh/activities.ts';
import { refreshActivities, type PageActivityMode, type RefreshTimeouts } from './refresh-activities.ts';
import { failureMessage } from './failure-message.ts';
import { afterPage, pagesToStart } from './scheduling/page-read-ahead.ts';

/**
 * Every page of one supplier's plots (its own and its upstream businesses'), one activity per page
 * of 500 that fetches, validates, maps and writes it. Only counts and "more?" come back, so plot
 * data never enters history; the workflow continues as new every `pagesPerRun` pages.
 *
 * After the last page, one activity checks what the scan missed (activities/refresh/scan-verification.ts).
 *
 * Within the pages the connection's plotsCount predicts, up to `pageWindow` pages are read at once;
 * past them pages go one by one until the first that is not full (lists have no total: a full page
 * means "ask again"), so a stale plotsCount costs nothing but speed (scheduling/page-read-ahead.ts).
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
  const { loadPlotPage, closeSupplierScan, verifySupplierScan, finishSupplier } = refreshActivities(
    input.timeouts,
    input.pageActivities,
  );
  const totals = { ...(input.totals ?? { pages: 0, plots: 0, written: 0 }) };
  const first = input.page ?? 1;
  let lastSignature = input.lastSignature;
  let next: SyncSupplierPlotsInput | undefined;
  try {
    const inFlight = new Map<number, Promise<PlotPageResult>>();
    let launch = first;
    let collect = first;
    let ended = false;
    // What workflowInfo() says now: read at each step, as Temporal updates it between activations.
    const limits = () => ({
      expected,
      window,
      pagesPerRun,
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
        if (!ended && patched('no-empty-supplier-run')) next = { ...input, page: collect, totals, lastSignature };
        break;
      }
      const result = await pending;
      inFlight.delete(collect);
      if (result.signature !== '' && result.signature === lastSignature) {
        throw ApplicationFailure.nonRetryable(
          `page ${collect} repeats page ${collect - 1} of supplier ${supplierId}: the service ignored the page parameter`,
          'RepeatedPageError',
        );
      }
      totals.pages++;
      totals.plots += result.received;
      totals.written += result.written;
      lastSignature = result.signature;
      collect++;
      if (!result.more) ended = true;
      const step = afterPage({ first, launch, collect, inFlight: inFlight.size, ended }, limits());
      if (step === 'done') break;
      if (step === 'continue-as-new') {
        next = { ...input, page: collect, totals, lastSignature };
        break;
      }
    }
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
