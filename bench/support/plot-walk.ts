// Reading every plot a refresh reads, the way the refresh reads it, but with no database: the
// supplier listing, each supplier's pages of 500 (suppliers `concurrency` at a time, a supplier's
// pages one after another, as one child workflow reads them) and the own-plots stream.
import { PLOT_MAX_BYTES, type UpstreamClient } from '../../upstream/index.ts';
import { toNetwork } from '../../warehouse/refresh/network-rows.ts';
import type { Plot } from '../../schema/upstream.ts';

export type WalkApi = Pick<UpstreamClient, 'listSuppliers' | 'listBuyers' | 'getSupplierPlotsPage' | 'ownPlots'>;

export interface PlotBatch {
  plots: Plot[];
  /** Plots the service sent, valid or not: what the refresh counts as plots seen. */
  received: number;
  isOwn: boolean;
}

/** Called once per page (or per 500 own plots); the walk waits for it before reading on. */
export type OnBatch = (batch: PlotBatch) => void | Promise<void>;

const PAGE_LIMIT = 500;
/** loadOwnPlots writes the stream in batches of this size. */
const OWN_PLOTS_BATCH = 500;

/** The direct suppliers whose plots a refresh reads, as syncNetwork finds them. */
export async function listSupplierIds(api: WalkApi): Promise<string[]> {
  const [suppliers, buyers] = await Promise.all([api.listSuppliers(), api.listBuyers()]);
  return toNetwork(suppliers, buyers).suppliers.map((s) => s.id);
}

export async function walkSupplierPages(
  api: WalkApi,
  supplierIds: readonly string[],
  concurrency: number,
  onBatch: OnBatch,
): Promise<void> {
  await inPool(supplierIds, concurrency, async (supplierId) => {
    for (let page = 1; ; page++) {
      const result = await api.getSupplierPlotsPage(supplierId, page, { skipInvalid: true, limit: PAGE_LIMIT });
      // A plot the refresh refuses (larger than PLOT_MAX_BYTES) is left out of the baselines too: mapped,
      // one of 50 MB took this process past a 4 GB heap.
      const plots = result.plots.filter((p) => JSON.stringify(p).length <= PLOT_MAX_BYTES);
      await onBatch({ plots, received: result.plots.length + result.invalid.length, isOwn: false });
      if (!result.more) return;
    }
  });
}

export async function walkOwnPlots(api: WalkApi, onBatch: OnBatch): Promise<void> {
  let plots: Plot[] = [];
  let invalid = 0;
  const flush = async () => {
    const batch = { plots, received: plots.length + invalid, isOwn: true };
    plots = [];
    invalid = 0;
    await onBatch(batch);
  };
  for await (const plot of api.ownPlots({ onInvalid: () => invalid++ })) {
    plots.push(plot);
    if (plots.length + invalid >= OWN_PLOTS_BATCH) await flush();
  }
  if (plots.length + invalid > 0) await flush();
}

/** Runs `task` over `items`, at most `concurrency` at once. */
async function inPool<T>(items: readonly T[], concurrency: number, task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await task(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, lane));
}

export interface FetchOnlyResult {
  supplierIds: string[];
  seconds: number;
  /** Plots received, shared plots once per supplier that reaches them (the refresh's plotsSeen). */
  plots: number;
  pages: number;
}

/** The refresh's reads alone: listings, then suppliers `concurrency` at a time beside the own plots. */
export async function measureFetchOnly(api: WalkApi, concurrency: number): Promise<FetchOnlyResult> {
  let plots = 0;
  let pages = 0;
  const count: OnBatch = (batch) => {
    plots += batch.received;
    pages++;
  };
  const started = performance.now();
  const supplierIds = await listSupplierIds(api);
  // The refresh reads its own plots beside the first supplier children.
  await Promise.all([walkOwnPlots(api, count), walkSupplierPages(api, supplierIds, concurrency, count)]);
  return { supplierIds, seconds: (performance.now() - started) / 1000, plots, pages };
}
