import { Context } from '@temporalio/activity';
import { emptyStats, serviceFacts } from '../../upstream/index.ts';
import type { Warehouse } from '../../warehouse/database.ts';
import type { Logger } from '../../platform/logger.ts';
import { toInvitationRows, toNetwork } from '../../warehouse/refresh/network-rows.ts';
import {
  INVITATIONS_SCOPE,
  NETWORK_SCOPE,
  writeInvitations,
  writeNetwork,
} from '../../warehouse/refresh/network-writer.ts';
import {
  beginRun,
  finishScope,
  markScopeRunning,
  openScopes,
  OWN_PLOTS_SCOPE,
} from '../../warehouse/refresh/run-ledger.ts';
import type { RunSummary } from '../../warehouse/refresh/sweep.ts';
import { planVerification, verifySupplierScan, type VerifyStatus } from './scan-verification.ts';
import { recordVerification } from '../../warehouse/refresh/scan-verification.ts';
import { type PageRunInput, type PageRunResult, type PlotPageResult, runPages } from './page-run.ts';
import { largestFirst } from '../../domain/paging/supplier-order.ts';
import { cancellation, isFinal, type RefreshApi, requestCounts, withReasonNoted } from './activity-support.ts';
import { createPageLoader, type PageLimits } from './page-load.ts';
import { loadOwnPlots, type OwnPlotsResult } from './own-plots.ts';
import { finishRefresh } from './run-end.ts';

export type { OwnPlotsResult, PageLimits, PageRunResult, PlotPageResult, RefreshApi };

/**
 * The activities of a warehouse refresh. Rows travel API → activity → Postgres inside one activity;
 * what returns to the workflow is ids and counts only, so plot data never enters workflow history.
 */

export interface RefreshDeps {
  db: Warehouse;
  api: RefreshApi;
  log: Logger;
  /** Where a page is split and a plot refused (default: upstream's); tests read one dataset both ways. */
  pageLimits?: Partial<PageLimits> | undefined;
}

/** A supplier whose plots the run reads, with the pages its connection's plotsCount predicts. */
export interface SupplierToRead {
  id: string;
  expectedPages: number | null;
}

/**
 * No page of a run of pages (loadPlotPages) starts after this many seconds: a run a retry must redo
 * (its worker died) stays short, and a slow service still ends runs well within their timeout.
 */
const PAGE_RUN_SECONDS = 30;
const { PLOT_PAGE_DEFAULT_LIMIT } = serviceFacts;

export function createRefreshActivities({ db, api, log, pageLimits }: RefreshDeps) {
  const { loadPage, pageReading } = createPageLoader({ db, api, pageLimits });

  return {
    async beginRefresh(input: { runId: string }): Promise<void> {
      await beginRun(db, input.runId, Context.current().info.workflowExecution?.workflowId ?? null);
      log.info({ runId: input.runId }, 'refresh started');
    },

    /** Suppliers and buyers → businesses and connections; declares the run's parts. Returns the suppliers to read. */
    async syncNetwork(input: { runId: string }): Promise<{ suppliers: SupplierToRead[] }> {
      const { runId } = input;
      await openScopes(db, runId, [{ scope: NETWORK_SCOPE, kind: 'network' }]);
      await markScopeRunning(db, runId, NETWORK_SCOPE);
      const stats = emptyStats();
      const signal = cancellation();
      const [suppliers, buyers] = await Promise.all([
        api.listSuppliers({ stats, signal }),
        api.listBuyers({ stats, signal }),
      ]);
      const network = toNetwork(suppliers, buyers);
      await writeNetwork(db, runId, network, requestCounts(stats));
      await openScopes(db, runId, [
        ...network.suppliers.map((s) => ({
          scope: s.id,
          kind: 'supplier' as const,
          supplierId: s.id,
          plotsExpected: s.plotsCount,
        })),
        { scope: OWN_PLOTS_SCOPE, kind: 'own_plots' as const },
        { scope: INVITATIONS_SCOPE, kind: 'invitations' as const },
      ]);
      await finishScope(db, runId, NETWORK_SCOPE, 'succeeded');
      log.info({ runId, suppliers: network.suppliers.length, buyers: buyers.length }, 'network synced');
      return {
        suppliers: largestFirst(
          network.suppliers.map((s) => ({
            id: s.id,
            expectedPages: s.plotsCount === null ? null : Math.ceil(s.plotsCount / PLOT_PAGE_DEFAULT_LIMIT),
          })),
        ),
      };
    },

    async syncInvitations(input: { runId: string }): Promise<{ completed: boolean; error?: string }> {
      const { runId } = input;
      await markScopeRunning(db, runId, INVITATIONS_SCOPE);
      const stats = emptyStats();
      try {
        const invitations = await api.listBusinessInvitations({ stats, signal: cancellation() });
        const { rows, issues } = toInvitationRows(invitations);
        await writeInvitations(db, runId, rows, issues, requestCounts(stats));
      } catch (error) {
        if (!isFinal(error)) throw await withReasonNoted(db, runId, INVITATIONS_SCOPE, error);
        await finishScope(db, runId, INVITATIONS_SCOPE, 'failed', error.message);
        return { completed: false, error: error.message };
      }
      await finishScope(db, runId, INVITATIONS_SCOPE, 'succeeded');
      return { completed: true };
    },

    /** One page of a supplier's plots: fetch, validate, map, write in one transaction. */
    async loadPlotPage(input: { runId: string; supplierId: string; page: number }): Promise<PlotPageResult> {
      return loadPage(input.runId, input.supplierId, input.page);
    },

    /**
     * A run of a supplier's pages, read ahead and collected in order (page-run.ts): what loadPlotPage
     * does for one page, for up to `maxPages` pages or about PAGE_RUN_SECONDS.
     */
    async loadPlotPages(input: PageRunInput): Promise<PageRunResult> {
      const signal = cancellation();
      const result = await runPages(input, (page) => loadPage(input.runId, input.supplierId, page), {
        seconds: PAGE_RUN_SECONDS,
        now: () => performance.now(),
        cancelled: () => signal.aborted,
      });
      // Debug: the page is read again at once by the next run, and an outage behind it is told once
      // by the warehouse's or the client's own outage lines, not once per run it cut short.
      if (result.stoppedBy !== undefined)
        log.debug(
          { runId: input.runId, supplierId: input.supplierId, page: result.next, error: result.stoppedBy },
          'page failed; the pages before it are kept and it is read again',
        );
      return result;
    },

    /** The business's own plots (GET /plots), streamed and written in batches; heartbeats per batch. */
    async loadOwnPlots(input: { runId: string }): Promise<OwnPlotsResult> {
      return loadOwnPlots({ db, api }, input.runId);
    },

    /**
     * After a supplier's last page: what the scan missed is proven gone, found again (it slid across a
     * page boundary), or deferred to the next refresh, by one bounded verification read (scan-verification.ts).
     */
    async verifySupplierScan(input: {
      runId: string;
      supplierId: string;
    }): Promise<{ missing: number; status: VerifyStatus; pages: number; found: number }> {
      const { runId, supplierId } = input;
      const stats = emptyStats();
      const signal = cancellation();
      const outcome = await verifySupplierScan(
        {
          db,
          readPage: (page) => api.getSupplierPlotsPageText(supplierId, page, { stats, signal, ...pageReading }),
          onPage: (pages) => Context.current().heartbeat({ pages }),
        },
        runId,
        supplierId,
      );
      await recordVerification(db, runId, supplierId, outcome, stats.requests);
      if (outcome.missing > 0)
        log.info(
          {
            runId,
            supplierId,
            missing: outcome.missing,
            verify: outcome.status,
            pages: outcome.pages,
            found: outcome.found.length,
          },
          'supplier scan verified',
        );
      return { missing: outcome.missing, status: outcome.status, pages: outcome.pages, found: outcome.found.length };
    },

    /**
     * The end of a supplier's scan when the warehouse alone can settle it (nothing missing, or one
     * response): records the verification and ends the part as succeeded, and returns true. Returns
     * false, writing nothing, when pages must be read again: verifySupplierScan and finishSupplier then
     * follow. Bookkeeping only, so it runs as a local activity: two task-queue round trips fewer at
     * the end of every supplier, which a refresh with nothing changed waits for.
     */
    async closeSupplierScan(input: { runId: string; supplierId: string }): Promise<boolean> {
      const { runId, supplierId } = input;
      const plan = await planVerification(db, runId, supplierId);
      if (!plan.decided) return false;
      await recordVerification(db, runId, supplierId, plan.decided, 0);
      await finishScope(db, runId, supplierId, 'succeeded');
      return true;
    },

    async finishSupplier(input: { runId: string; supplierId: string; error?: string }): Promise<void> {
      await finishScope(
        db,
        input.runId,
        input.supplierId,
        input.error === undefined ? 'succeeded' : 'failed',
        input.error,
      );
    },

    /** Sweep, totals, outcome: see sweep.ts. `failure` ends the run as failed without sweeping. */
    async finishRefresh(input: { runId: string; failure?: string }): Promise<RunSummary> {
      return finishRefresh({ db, log }, input);
    },
  };
}

export type RefreshActivities = ReturnType<typeof createRefreshActivities>;
