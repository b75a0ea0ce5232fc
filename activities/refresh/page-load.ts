import {
  emptyStats,
  hasMorePages,
  parsedHeapEstimate,
  parseSupplierPlotsPage,
  PLOT_MAX_BYTES,
  splitSupplierPlotsPage,
  WHOLE_PAGE_MAX_BYTES,
} from '../../upstream/index.ts';
import type { RawPlotPage } from '../../upstream/index.ts';
import type { Warehouse } from '../../warehouse/database.ts';
import { ByteBudget } from '../../platform/byte-budget.ts';
import { rowsWritten } from '../../warehouse/refresh/counts.ts';
import type { RequestCounts } from '../../warehouse/refresh/page-ledger.ts';
import { PART_BYTES, storeParsedPlots, storeSplitPlots } from '../../warehouse/refresh/plot-batch.ts';
import { SOURCE_HASH_PREFIX } from '../../warehouse/refresh/plot-fingerprint.ts';
import { reuseUnchangedPage, type PageOutcome } from '../../warehouse/refresh/plot-writer.ts';
import { markScopeRunning } from '../../warehouse/refresh/run-ledger.ts';
import type { PlotPageResult } from './page-run.ts';
import { cancellation, requestCounts } from './activity-support.ts';
import type { RefreshApi } from './activity-support.ts';

/**
 * One page of a supplier's plots: fetched (kept on disk when large, hashed on the way), found
 * unchanged by its hash or parsed (whole, or split plot by plot when large), mapped and written in one
 * transaction, within the worker's page memory budget.
 */

/** Pages of more bytes are split and written plot by plot; one plot of more bytes is refused unparsed. */
export interface PageLimits {
  wholePageMaxBytes: number;
  plotMaxBytes: number;
  /** Bytes of JSON of a split page's plots parsed, mapped and written at once. */
  partBytes: number;
}

/**
 * The heap that supplier pages parsed, mapped and being written at once may take in this worker, as
 * estimated from their bytes and arrays (upstream parsedHeapEstimate): four suppliers' pages of
 * boundaries with a thousand vertices (12 MB each) at once took the worker past its heap limit, which
 * V8 ends with a fatal error (docs/benchmarks.md), and a page of 4 MB written as short positions
 * (`[0,0],`) parses to 48 MB, so weighing a page by its bytes alone would let four of them past the
 * worker's 192 MB (infra/production.ts). Ordinary pages (about 1.2 MB, estimated 1.7) hardly ever
 * wait: 16 MB holds nine of them, more than a refresh reads at once by default (four suppliers, two
 * pages each). A page estimated above the budget runs alone, whatever it weighs. A page above
 * WHOLE_PAGE_MAX_BYTES (4 MB) is split and written part by part (storeSplitPage) and takes the whole
 * budget: it runs alone too.
 */
export const PAGE_MEMORY_BYTES = 16 * 1024 * 1024;

export function createPageLoader({
  db,
  api,
  pageLimits,
  pageMemory = new ByteBudget(PAGE_MEMORY_BYTES),
}: {
  db: Warehouse;
  api: Pick<RefreshApi, 'getSupplierPlotsPageText'>;
  /** Where a page is split and a plot refused (default: upstream's); tests read one dataset both ways. */
  pageLimits?: Partial<PageLimits> | undefined;
  /** The heap pages parsed at once may take (default: PAGE_MEMORY_BYTES, one per worker); tests watch it. */
  pageMemory?: ByteBudget;
}) {
  const limits: PageLimits = {
    wholePageMaxBytes: pageLimits?.wholePageMaxBytes ?? WHOLE_PAGE_MAX_BYTES,
    plotMaxBytes: pageLimits?.plotMaxBytes ?? PLOT_MAX_BYTES,
    partBytes: pageLimits?.partBytes ?? PART_BYTES,
  };
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
    const admitted = await pageMemory.acquire(pageMemory.capacity, signal);
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
      admitted = await pageMemory.acquire(parsedHeapEstimate(raw.bytes), signal);
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

  return { loadPage, pageReading };
}
