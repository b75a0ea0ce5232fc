import { Context } from '@temporalio/activity';
import type { ClientStats, UpstreamClient } from '../../upstream/index.ts';
import {
  emptyStats,
  hasMorePages,
  parseSupplierPlotsPage,
  PLOT_MAX_BYTES,
  serviceFacts,
  splitSupplierPlotsPage,
  UpstreamError,
  WHOLE_PAGE_MAX_BYTES,
} from '../../upstream/index.ts';
import type { InvalidRecord, RawPlotPage } from '../../upstream/index.ts';
import { warehouseFor, type Warehouse } from '../../warehouse/database.ts';
import type { Logger } from '../../platform/logger.ts';
import { rowsWritten } from '../../warehouse/refresh/counts.ts';
import { toInvitationRows, toNetwork } from '../../warehouse/refresh/network-rows.ts';
import {
  INVITATIONS_SCOPE,
  NETWORK_SCOPE,
  writeInvitations,
  writeNetwork,
} from '../../warehouse/refresh/network-writer.ts';
import type { RequestCounts } from '../../warehouse/refresh/page-ledger.ts';
import { PART_BYTES, storeParsedPlots, storePlotBatch, storeSplitPlots } from '../../warehouse/refresh/plot-batch.ts';
import { SOURCE_HASH_PREFIX } from '../../warehouse/refresh/plot-fingerprint.ts';
import { mapPlots } from '../../warehouse/refresh/plot-page.ts';
import type { RecordIssue } from '../../warehouse/refresh/issues.ts';
import type { PlotRows } from '../../warehouse/refresh/rows.ts';
import { ByteBudget } from '../../platform/byte-budget.ts';
import { reuseUnchangedPage, type PageOutcome } from '../../warehouse/refresh/plot-writer.ts';
import {
  beginRun,
  finishScope,
  noteScopeError,
  markScopeRunning,
  openScopes,
  OWN_PLOTS_SCOPE,
} from '../../warehouse/refresh/run-ledger.ts';
import { finishRun, type RunSummary } from '../../warehouse/refresh/sweep.ts';
import { refreshTableStatistics } from '../../warehouse/refresh/table-statistics.ts';
import { checkOverlapsAfterRun, type OverlapOutcome } from '../../warehouse/spatial/overlaps.ts';
import { checkGeometryDuplicatesAfterRun, type DuplicateOutcome } from '../../warehouse/spatial/geometry-duplicates.ts';
import { refreshSummariesAfterRun } from '../../warehouse/analyst-summaries.ts';
import { planVerification, verifySupplierScan, type VerifyStatus } from './scan-verification.ts';
import { recordVerification } from '../../warehouse/refresh/scan-verification.ts';
import { type PageRunInput, type PageRunResult, type PlotPageResult, runPages } from './page-run.ts';
import { largestFirst } from '../../domain/paging/supplier-order.ts';

export type { PageRunResult, PlotPageResult };

/**
 * The activities of a warehouse refresh. Rows travel API → activity → Postgres inside one activity;
 * what returns to the workflow is ids and counts only, so plot data never enters workflow history.
 */

export type RefreshApi = Pick<
  UpstreamClient,
  'listSuppliers' | 'listBuyers' | 'listBusinessInvitations' | 'getSupplierPlotsPageText' | 'ownPlots'
>;

export interface RefreshDeps {
  db: Warehouse;
  api: RefreshApi;
  log: Logger;
  /** Where a page is split and a plot refused (default: upstream's); tests read one dataset both ways. */
  pageLimits?: Partial<PageLimits> | undefined;
}

/** Pages of more bytes are split and written plot by plot; one plot of more bytes is refused unparsed. */
export interface PageLimits {
  wholePageMaxBytes: number;
  plotMaxBytes: number;
  /** Bytes of JSON of a split page's plots parsed, mapped and written at once. */
  partBytes: number;
}

/** A supplier whose plots the run reads, with the pages its connection's plotsCount predicts. */
export interface SupplierToRead {
  id: string;
  expectedPages: number | null;
}

export interface OwnPlotsResult {
  completed: boolean;
  pages: number;
  plots: number;
  error?: string;
}

/** Plots per write of the own-plots stream: the same batch size as a supplier page. */
const OWN_PLOTS_BATCH = 500;
/**
 * No page of a run of pages (loadPlotPages) starts after this many seconds: a run a retry must redo
 * (its worker died) stays short, and a slow service still ends runs well within their timeout.
 */
const PAGE_RUN_SECONDS = 30;
const { PLOT_PAGE_DEFAULT_LIMIT } = serviceFacts;

function requestCounts(stats: ClientStats): RequestCounts {
  return { requests: stats.requests, retries: stats.retries, rateLimited: stats.rateLimited };
}

function cancellation(): AbortSignal {
  return Context.current().cancellationSignal;
}

/** A non-retryable upstream answer ends a part of the run as failed, with the service's message. */
function isFinal(error: unknown): error is UpstreamError {
  return error instanceof UpstreamError && !error.retryable;
}

/**
 * A retryable failure of a part (the service away, the warehouse for a moment) is noted on its scope
 * before the attempt fails: if the last retry fails too, the run says why the part failed, not only
 * that it "did not finish". A part that later succeeds clears it. Returns the error to rethrow.
 */
async function withReasonNoted(db: RefreshDeps['db'], runId: string, scope: string, error: unknown): Promise<unknown> {
  if (error instanceof UpstreamError) await noteScopeError(db, runId, scope, error.message).catch(() => undefined);
  return error;
}

/**
 * The bytes of supplier pages parsed, mapped and being written at once, in this worker. A page's plots
 * take several times its bytes in the heap while it is parsed and mapped (a geometry's numbers as
 * arrays, its JSON text again in the rows, the COPY text): four suppliers' pages of boundaries with a
 * thousand vertices (12 MB each) at once took the worker past its heap limit, which V8 ends with a
 * fatal error (docs/benchmarks.md). Ordinary pages (about 1.4 MB) hardly ever wait: 16 MB holds eleven
 * of them. A page above WHOLE_PAGE_MAX_BYTES (4 MB) is split and written part by part (storeSplitPage)
 * and takes the whole budget: it runs alone, whatever it weighs.
 */
export const PAGE_MEMORY_BYTES = 16 * 1024 * 1024;

export function createRefreshActivities({ db, api, log, pageLimits }: RefreshDeps) {
  const limits: PageLimits = {
    wholePageMaxBytes: pageLimits?.wholePageMaxBytes ?? WHOLE_PAGE_MAX_BYTES,
    plotMaxBytes: pageLimits?.plotMaxBytes ?? PLOT_MAX_BYTES,
    partBytes: pageLimits?.partBytes ?? PART_BYTES,
  };
  const pageMemory = new ByteBudget(PAGE_MEMORY_BYTES);
  /** Pages are hashed as they arrive, and a page too large to parse whole is kept on disk meanwhile. */
  const pageReading = { hashPrefix: SOURCE_HASH_PREFIX, spillAboveBytes: limits.wholePageMaxBytes };
  /**
   * Parses a page and starts its write. Synchronous, so that no variable of a caller holds the parsed
   * page while it is written: storeParsedPlots lets it go once mapped (see there).
   */
  function storePage(
    raw: RawPlotPage,
    p: { runId: string; supplierId: string; page: number; requests: RequestCounts; sourceHash: string },
  ): Omit<PlotPageResult, 'written'> & { storing: Promise<PageOutcome> } {
    const parsed = parseSupplierPlotsPage(raw, { skipInvalid: true });
    const { plots } = parsed;
    return {
      more: parsed.more,
      received: plots.length + parsed.invalid.length,
      signature: plots.length === 0 ? '' : `${plots[0]!.id}…${plots[plots.length - 1]!.id}`,
      storing: storeParsedPlots(db, {
        runId: p.runId,
        scope: p.supplierId,
        supplierId: p.supplierId,
        page: p.page,
        plots,
        isOwn: false,
        invalid: parsed.invalid,
        requests: p.requests,
        sourceHash: p.sourceHash,
      }),
    };
  }

  /**
   * A page too large to parse whole (upstream WHOLE_PAGE_MAX_BYTES), split and written plot by plot in
   * one transaction (storeSplitPlots). It takes the whole page memory budget, so it runs alone among
   * the pages being parsed: its parts are small, but no two such pages then hold their bytes and
   * their transactions at once. Its bytes stay lent until its write ends (its plots are read from
   * them part by part).
   */
  async function storeSplitPage(
    raw: RawPlotPage,
    p: { runId: string; supplierId: string; page: number; requests: RequestCounts; sourceHash: string },
    signal: AbortSignal,
  ): Promise<PlotPageResult> {
    const split = splitSupplierPlotsPage(raw, limits.plotMaxBytes);
    const admitted = await pageMemory.acquire(PAGE_MEMORY_BYTES, signal);
    try {
      const { outcome, signature } = await storeSplitPlots(
        db,
        {
          runId: p.runId,
          scope: p.supplierId,
          supplierId: p.supplierId,
          page: p.page,
          isOwn: false,
          requests: p.requests,
          sourceHash: p.sourceHash,
        },
        split,
        limits.partBytes,
      );
      return { more: split.more, received: split.received, signature, written: rowsWritten(outcome.counts) };
    } finally {
      admitted();
    }
  }

  /** One page of a supplier's plots: fetch, validate, map, write in one transaction. */
  async function loadPage(runId: string, supplierId: string, page: number): Promise<PlotPageResult> {
    if (page === 1) await markScopeRunning(db, runId, supplierId);
    const stats = emptyStats();
    const signal = cancellation();
    const raw = await api.getSupplierPlotsPageText(supplierId, page, { stats, signal, ...pageReading });
    let storing: Promise<PageOutcome>;
    let result: Omit<PlotPageResult, 'written'>;
    let admitted: (() => void) | undefined;
    let released = false;
    try {
      const limit = raw.limit;
      const sourceHash = raw.hash!;
      const reused = await reuseUnchangedPage(db, {
        runId,
        scope: supplierId,
        page,
        hash: sourceHash,
        requests: requestCounts(stats),
      });
      if (reused)
        return {
          more: hasMorePages(reused.received, limit),
          received: reused.received,
          written: 0,
          signature: reused.signature,
        };
      const header = { runId, supplierId, page, requests: requestCounts(stats), sourceHash };
      if (raw.spilled || raw.byteLength > limits.wholePageMaxBytes) return await storeSplitPage(raw, header, signal);
      admitted = await pageMemory.acquire(raw.byteLength, signal);
      ({ storing, ...result } = storePage(raw, header));
      // Parsed: its buffer serves the next page while this one is written.
      raw.release();
      released = true;
    } catch (error) {
      admitted?.();
      throw error;
    } finally {
      if (!released) raw.release();
    }
    try {
      const outcome = await storing;
      return { ...result, written: rowsWritten(outcome.counts) };
    } finally {
      admitted();
    }
  }

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
      const { runId } = input;
      await markScopeRunning(db, runId, OWN_PLOTS_SCOPE);
      const stats = emptyStats();
      let batch: PlotRows[] = [];
      let issues: RecordIssue[] = [];
      let invalid: InvalidRecord[] = [];
      let pages = 0;
      let plots = 0;
      const flush = async () => {
        pages++;
        // Requests are counted on the batch during which they happened.
        const requests = requestCounts(stats);
        Object.assign(stats, emptyStats());
        await storePlotBatch(db, {
          runId,
          scope: OWN_PLOTS_SCOPE,
          supplierId: null,
          page: pages,
          rows: batch,
          issues,
          invalid,
          requests,
        });
        plots += batch.length + invalid.length;
        batch = [];
        issues = [];
        invalid = [];
        Context.current().heartbeat({ pages, plots });
      };
      try {
        for await (const plot of api.ownPlots({ stats, signal: cancellation(), onInvalid: (r) => invalid.push(r) })) {
          const mapped = mapPlots([plot], pages + 1, true, batch.length + invalid.length);
          batch.push(...mapped.rows);
          issues.push(...mapped.issues);
          if (batch.length + invalid.length >= OWN_PLOTS_BATCH) await flush();
        }
        if (batch.length + invalid.length > 0 || pages === 0) await flush();
      } catch (error) {
        if (!isFinal(error)) throw await withReasonNoted(db, runId, OWN_PLOTS_SCOPE, error);
        await finishScope(db, runId, OWN_PLOTS_SCOPE, 'failed', error.message);
        return { completed: false, pages, plots, error: error.message };
      }
      await finishScope(db, runId, OWN_PLOTS_SCOPE, 'succeeded');
      return { completed: true, pages, plots };
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
      // Statements over whole tables, minutes at a million plots: bounded as such (statement-bounds.ts).
      const runEnd = warehouseFor(db, 'long');
      // Each step's seconds go into the closing log line: where the end of a run spent its time.
      const seconds: Record<string, number> = {};
      const timed = async <T>(step: string, work: () => Promise<T>): Promise<T> => {
        const started = performance.now();
        try {
          return await work();
        } finally {
          seconds[step] = Math.round(performance.now() - started) / 1000;
        }
      };
      const summary = await timed('sweep', () => finishRun(runEnd, input.runId, input.failure));
      // After the sweep (a deleted plot is no one's duplicate), on connections of their own: the
      // duplicate check, which scans and groups plots and needs no statistics, from now until it is
      // done; and beside it the statistics of the tables the next steps plan joins over, then those
      // steps: the analysts' summaries (warehouse/analyst-summaries.ts) and, with PostGIS and only when
      // plots changed, the overlap check (docs/postgis.md), with the other tables' statistics beside
      // them (table-statistics.ts). One after the other, each of these was alone on
      // one core: at a million plots the duplicate check 18 s past the statistics, the summaries 69 s;
      // at 100,000 with PostGIS the overlap check 7.5 s. Inside this activity, not new ones: the
      // workflow's commands stay as recorded histories replay them.
      const duplicateCheck = timed('duplicates', () => checkGeometryDuplicatesAfterRun(runEnd, input.runId));
      // refreshTableStatistics reports its failures; should it throw all the same, the check still settles first.
      // The tables the summaries and the overlap check plan over first; the others beside those steps.
      const statistics = await timed('statistics', () =>
        refreshTableStatistics(runEnd, summary.counts, 'planned'),
      ).catch(async (error: unknown) => {
        await duplicateCheck.catch(() => undefined);
        throw error;
      });
      // A making's failure fails the activity (retried), once every step has settled: none outlives the
      // attempt. The checks never fail the run (a rejection would be a bug, reported as a failed check).
      const [checked, made, checkedDuplicates, otherStatistics] = await Promise.allSettled([
        timed('overlaps', () => checkOverlapsAfterRun(runEnd, input.runId)),
        timed('summaries', () => refreshSummariesAfterRun(runEnd, input.runId)),
        duplicateCheck,
        timed('otherStatistics', () => refreshTableStatistics(runEnd, summary.counts, 'others')),
      ]);
      const analyzed = [
        statistics,
        otherStatistics.status === 'fulfilled'
          ? otherStatistics.value
          : { analyzed: [], failed: String(otherStatistics.reason) },
      ];
      for (const outcome of analyzed)
        if ('failed' in outcome)
          log.warn({ runId: input.runId, error: outcome.failed }, 'could not refresh table statistics');
      if (made.status === 'rejected') throw made.reason;
      const [overlaps, duplicates] = [checked, checkedDuplicates].map((c) =>
        c.status === 'fulfilled' ? c.value : { ran: false as const, failed: String(c.reason) },
      ) as [OverlapOutcome, DuplicateOutcome];
      if ('failed' in duplicates)
        log.warn({ runId: input.runId, error: duplicates.failed }, 'geometry duplicate check failed');
      if ('failed' in overlaps) log.warn({ runId: input.runId, error: overlaps.failed }, 'overlap check failed');
      // The making read one snapshot, and the checks' findings may have committed after it (on a first
      // load they must: their notes wait for the filling lock the making holds). So when a check wrote
      // findings, a second making moves the summaries by what it changed: the plots its findings
      // touched, as the triggers noted them.
      const summaries = [made.value];
      if ([overlaps, duplicates].some((c) => c.ran && c.opened + c.closed > 0))
        summaries.push(await timed('summariesAfterChecks', () => refreshSummariesAfterRun(runEnd, input.runId)));
      log.info(
        {
          runId: input.runId,
          status: summary.status,
          seconds: summary.seconds,
          pages: summary.pages,
          plots: summary.plotsSeen,
          rowsWritten: summary.rowsWritten,
          overlaps,
          duplicates,
          summaries,
          analyzed: analyzed.flatMap((a) => a.analyzed),
          stepSeconds: seconds,
        },
        'refresh finished',
      );
      return summary;
    },
  };
}

export type RefreshActivities = ReturnType<typeof createRefreshActivities>;
