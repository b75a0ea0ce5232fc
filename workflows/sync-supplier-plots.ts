import { ApplicationFailure, CancellationScope, continueAsNew, workflowInfo } from '@temporalio/workflow';
import { refreshActivities, type RefreshTimeouts } from './refresh-activities.ts';
import { failureMessage } from './failure-message.ts';

/**
 * Every page of one supplier's plots (its own and its upstream businesses'), one activity per page
 * of 500 that fetches, validates, maps and writes it. Only counts and "more?" come back, so plot
 * data never enters history; the workflow continues as new every `pagesPerRun` pages.
 */
export interface SyncSupplierPlotsInput {
  runId: string;
  supplierId: string;
  /** Continue-as-new every so many pages (default 100). */
  pagesPerRun?: number;
  /** Carried across continue-as-new. */
  page?: number;
  totals?: SupplierTotals;
  lastSignature?: string;
  timeouts?: RefreshTimeouts;
}

export interface SupplierTotals {
  pages: number;
  plots: number;
  written: number;
}

export const supplierPlotsWorkflowId = (runId: string, supplierId: string) => `refresh/${runId}/supplier/${supplierId}`;

export async function syncSupplierPlots(input: SyncSupplierPlotsInput): Promise<SupplierTotals> {
  const { runId, supplierId } = input;
  const pagesPerRun = input.pagesPerRun ?? 100;
  const { loadPlotPage, finishSupplier } = refreshActivities(input.timeouts);
  const totals = { ...(input.totals ?? { pages: 0, plots: 0, written: 0 }) };
  let page = input.page ?? 1;
  let lastSignature = input.lastSignature;
  let next: SyncSupplierPlotsInput | undefined;
  try {
    for (let inThisRun = 0; ; inThisRun++) {
      if (inThisRun >= pagesPerRun || workflowInfo().continueAsNewSuggested) {
        next = { ...input, page, totals, lastSignature };
        break;
      }
      const result = await loadPlotPage({ runId, supplierId, page });
      if (result.signature !== '' && result.signature === lastSignature) {
        throw ApplicationFailure.nonRetryable(`page ${page} repeats page ${page - 1} of supplier ${supplierId}: the service ignored the page parameter`, 'RepeatedPageError');
      }
      totals.pages++;
      totals.plots += result.received;
      totals.written += result.written;
      lastSignature = result.signature;
      if (!result.more) break;
      page++;
    }
  } catch (error) {
    await CancellationScope.nonCancellable(() => finishSupplier({ runId, supplierId, error: failureMessage(error) }));
    throw error;
  }
  if (next) return continueAsNew<typeof syncSupplierPlots>(next);
  await finishSupplier({ runId, supplierId });
  return totals;
}
