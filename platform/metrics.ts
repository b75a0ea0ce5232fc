import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * ddsync's Prometheus metrics: one registry per process, named by Prometheus's conventions (units in
 * the name, `_total` counters, labels of bounded cardinality: an endpoint template, a status code, a
 * table, a supplier; never a plot or transaction id).
 *
 * Two kinds of figures live here:
 * - what this process did (upstream requests, retries, token refreshes, webhook deliveries, whether
 *   its dependencies answer): counters and gauges kept in memory, reset when the process restarts;
 * - what the warehouse holds (refresh runs by outcome, rows written, deletions, per-supplier last
 *   successful scan, transactions by state, the PDF backlog): read from the warehouse when scraped
 *   (`WarehouseFigures`), so they are the warehouse's own numbers, survive restarts, and are the same
 *   in every process that reads the same warehouse (aggregate them with max, not sum).
 */

/** Buckets of a histogram the warehouse computed: cumulative counts per upper bound, as Prometheus wants. */
export interface HistogramFigures {
  /** Upper bounds (seconds), ascending; +Inf is implied and equals `count`. */
  bounds: readonly number[];
  /** Cumulative counts per bound. */
  cumulative: readonly number[];
  sum: number;
  count: number;
}

/** What the warehouse holds, as of one read. Timestamps are Unix seconds. */
export interface WarehouseFigures {
  refreshRuns: ReadonlyArray<{ outcome: string; runs: number }>;
  refreshDuration: HistogramFigures;
  lastSuccessfulRefresh: number | null;
  refreshPlotsSeen: number;
  refreshRowsWritten: ReadonlyArray<{ table: string; change: 'inserted' | 'updated' | 'deleted'; rows: number }>;
  refreshDeletions: { confirmed: number; deferred: number };
  /** Plot links whose deletion is deferred now (a supplier missed them, not yet confirmed gone). */
  deletionsWaiting: number;
  suppliers: ReadonlyArray<{ supplier: string; lastSuccessfulScan: number | null; failedScansInARow: number }>;
  transactions: ReadonlyArray<{ state: string; transactions: number }>;
  /** Since when the oldest transaction without a final status waits: its submission, or its batch's intake while unsent (null: none). */
  oldestNotFinal: number | null;
  /** From handing over (submission) to the final status, per transaction that has one. */
  timeToFinal: HistogramFigures;
  pdfArchive: ReadonlyArray<{ state: string; entries: number }>;
  webhooksFailing: number;
}

/** Reads the figures; a rejection means the warehouse cannot be read now (its series are then left out). */
export type WarehouseFiguresSource = () => Promise<WarehouseFigures>;

/** Bounds of the refresh duration: a small refresh takes seconds, 1,000,000 plots about an hour. */
export const REFRESH_SECONDS_BOUNDS = [5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200, 21600];
/** Bounds of the time to a final status: the EU system answers in 20-90 minutes, sometimes days. */
export const FINAL_SECONDS_BOUNDS = [60, 300, 900, 1800, 3600, 5400, 7200, 14400, 43200, 86400, 259200, 604800];

/** prom-client's Node gauges whose names end in _total. */
const PROMTOOL_REFUSED_DEFAULTS = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
];

type Sample = { labels?: Record<string, string>; value: number; metricName?: string };
type SnapshotType = 'counter' | 'gauge' | 'histogram';

/** Why a request was repeated, from the error's class name (bounded). */
export function retryReason(errorName: string): string {
  if (errorName === 'RateLimitedError') return 'rate_limited';
  if (errorName === 'ServerError') return 'server_error';
  if (errorName === 'NetworkError') return 'network_error';
  if (errorName === 'UnauthorizedError') return 'unauthorized';
  return 'other';
}

/** Histogram samples (`_bucket`, `_sum`, `_count`) from figures the warehouse computed. */
export function histogramSamples(name: string, h: HistogramFigures): Sample[] {
  return [
    ...h.bounds.map((le, i) => ({
      metricName: `${name}_bucket`,
      labels: { le: String(le) },
      value: h.cumulative[i] ?? 0,
    })),
    { metricName: `${name}_bucket`, labels: { le: '+Inf' }, value: h.count },
    { metricName: `${name}_sum`, value: h.sum },
    { metricName: `${name}_count`, value: h.count },
  ];
}

export interface MetricsOptions {
  /** Node's process metrics (CPU, memory, event loop lag); on by default, off in tests that count lines. */
  processMetrics?: boolean;
  /** How long one warehouse read serves scrapes (default 10 s): many scrapers, one query. */
  warehouseCacheMs?: number;
  /** A read slower than this is given up for this scrape (default 4 s, under Prometheus's 10 s scrape timeout). */
  warehouseTimeoutMs?: number;
  now?: () => number;
}

export class DdsyncMetrics {
  readonly registry = new Registry();
  readonly upstreamRequests: Counter<'endpoint' | 'status'>;
  readonly upstreamRequestDuration: Histogram<'endpoint'>;
  readonly upstreamRetries: Counter<'endpoint' | 'reason'>;
  readonly upstreamRateLimited: Counter<'endpoint'>;
  readonly upstreamTokenRefreshes: Counter;
  readonly webhookDeliveries: Counter<'outcome' | 'reason'>;
  private refreshIntervalSeconds: number | undefined;
  private readonly dependencies = new Map<string, () => boolean>();
  private warehouse: WarehouseFiguresSource | undefined;
  private cached: { at: number; figures: Promise<WarehouseFigures | undefined> } | undefined;
  private warehouseReadable: boolean | undefined;
  private readonly cacheMs: number;
  private readonly timeoutMs: number;
  private readonly now: () => number;

  constructor(options: MetricsOptions = {}) {
    this.cacheMs = options.warehouseCacheMs ?? 10_000;
    this.timeoutMs = options.warehouseTimeoutMs ?? 4_000;
    this.now = options.now ?? Date.now;
    const registers = [this.registry];
    if (options.processMetrics !== false) {
      collectDefaultMetrics({ register: this.registry });
      // Gauges named like counters: Prometheus's own checker (promtool check metrics) refuses them.
      for (const name of PROMTOOL_REFUSED_DEFAULTS) this.registry.removeSingleMetric(name);
    }
    this.upstreamRequests = new Counter({
      name: 'ddsync_upstream_requests_total',
      help: 'Requests to the due-diligence service by endpoint (method and path template) and HTTP status; network_error when no response came. Token requests and retries included.',
      labelNames: ['endpoint', 'status'],
      registers,
    });
    this.upstreamRequestDuration = new Histogram({
      name: 'ddsync_upstream_request_duration_seconds',
      help: 'Time to the response headers of a request to the service (or to its failure), by endpoint.',
      labelNames: ['endpoint'],
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    });
    this.upstreamRetries = new Counter({
      name: 'ddsync_upstream_retries_total',
      help: 'Requests to the service repeated after a failure, by endpoint and reason (rate_limited, server_error, network_error, unauthorized).',
      labelNames: ['endpoint', 'reason'],
      registers,
    });
    this.upstreamRateLimited = new Counter({
      name: 'ddsync_upstream_rate_limited_total',
      help: 'Responses 429 (rate limited) from the service, by endpoint.',
      labelNames: ['endpoint'],
      registers,
    });
    this.upstreamTokenRefreshes = new Counter({
      name: 'ddsync_upstream_token_refreshes_total',
      help: 'Access tokens obtained from the service (at start, on expiry, after a 401).',
      registers,
    });
    this.webhookDeliveries = new Counter({
      name: 'ddsync_webhook_deliveries_total',
      help: 'Webhook deliveries the receiver answered: accepted, or rejected with a reason (signature, unknown_webhook, too_large, malformed, warehouse_unavailable, ...).',
      labelNames: ['outcome', 'reason'],
      registers,
    });
    this.snapshot(
      'ddsync_refresh_interval_seconds',
      'gauge',
      "The refresh schedule's interval as this worker is configured (DDSYNC_REFRESH_INTERVAL): what the freshness alerts measure against; absent outside workers.",
      () => (this.refreshIntervalSeconds === undefined ? [] : [{ value: this.refreshIntervalSeconds }]),
    );
    this.snapshot(
      'ddsync_dependency_up',
      'gauge',
      'Whether a dependency answers this process now (1) or is in an outage (0): warehouse, temporal.',
      () => [...this.dependencies].map(([dependency, up]) => ({ labels: { dependency }, value: up() ? 1 : 0 })),
    );
    this.snapshot(
      'ddsync_warehouse_figures_up',
      'gauge',
      "Whether the last read of the warehouse's figures (the ddsync_refresh_*, ddsync_transactions*, ddsync_pdf_* and ddsync_supplier_* series) succeeded (1) or not (0); absent when this process does not read them.",
      () => (this.warehouseReadable === undefined ? [] : [{ value: this.warehouseReadable ? 1 : 0 }]),
    );
    this.defineWarehouseMetrics();
  }

  /** The refresh interval a worker is configured with (the freshness alerts compare against it). */
  setRefreshInterval(seconds: number): void {
    this.refreshIntervalSeconds = seconds;
  }

  /** A dependency this process reports as up or down (e.g. from its outage record). */
  watchDependency(name: string, up: () => boolean): void {
    this.dependencies.set(name, up);
  }

  /** Reads the warehouse's figures at scrape time from now on. */
  readWarehouse(source: WarehouseFiguresSource): void {
    this.warehouse = source;
  }

  /** What the upstream client tells (upstream/observer.ts), counted here. */
  upstreamObserver() {
    return {
      response: (endpoint: string, status: number | 'network_error', seconds: number) => {
        this.upstreamRequests.inc({ endpoint, status: String(status) });
        this.upstreamRequestDuration.observe({ endpoint }, seconds);
        if (status === 429) this.upstreamRateLimited.inc({ endpoint });
      },
      retry: (endpoint: string, errorName: string) =>
        this.upstreamRetries.inc({ endpoint, reason: retryReason(errorName) }),
      tokenRefreshed: () => this.upstreamTokenRefreshes.inc(),
    };
  }

  /** The exposition text of every metric of this registry. */
  async text(): Promise<string> {
    // The warehouse is read once per scrape (or per cache period), before the samples are gathered.
    await this.figures();
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  private async figures(): Promise<WarehouseFigures | undefined> {
    const source = this.warehouse;
    if (!source) return undefined;
    const now = this.now();
    if (!this.cached || now - this.cached.at >= this.cacheMs) {
      // A warehouse that hangs (not refusing) must not make the whole scrape time out: the process's
      // own series still go out, with ddsync_warehouse_figures_up 0.
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('the warehouse did not answer in time')), this.timeoutMs);
        timer.unref?.();
      });
      const read = source();
      read.catch(() => undefined);
      const figures = Promise.race([read, deadline])
        .finally(() => clearTimeout(timer))
        .then(
          (f) => {
            this.warehouseReadable = true;
            return f;
          },
          () => {
            this.warehouseReadable = false;
            // Read again at the next scrape, not after the cache period.
            this.cached = undefined;
            return undefined;
          },
        );
      this.cached = { at: now, figures };
    }
    return this.cached.figures;
  }

  /** A metric whose samples are computed at scrape time. */
  private snapshot(name: string, type: SnapshotType, help: string, samples: () => Sample[]): void {
    this.registry.registerMetric({
      name,
      help,
      type,
      get: async () => ({ name, help, type, values: samples(), aggregator: 'max' }),
    } as never);
  }

  /** A metric from the warehouse's figures: no samples while they cannot be read. */
  private fromWarehouse(name: string, type: SnapshotType, help: string, samples: (f: WarehouseFigures) => Sample[]) {
    this.registry.registerMetric({
      name,
      help,
      type,
      get: async () => {
        const f = await this.figures();
        return { name, help, type, values: f ? samples(f) : [], aggregator: 'max' };
      },
    } as never);
  }

  private defineWarehouseMetrics(): void {
    this.fromWarehouse(
      'ddsync_refresh_runs_total',
      'counter',
      'Refreshes recorded in the warehouse by outcome: succeeded, partial (some suppliers failed), failed, running.',
      (f) => f.refreshRuns.map((r) => ({ labels: { outcome: r.outcome }, value: r.runs })),
    );
    this.fromWarehouse(
      'ddsync_refresh_duration_seconds',
      'histogram',
      'Duration of the finished refreshes, from start to finish.',
      (f) => histogramSamples('ddsync_refresh_duration_seconds', f.refreshDuration),
    );
    this.fromWarehouse(
      'ddsync_refresh_last_success_timestamp_seconds',
      'gauge',
      'When the last successful refresh finished (Unix time); absent before the first.',
      (f) => (f.lastSuccessfulRefresh === null ? [] : [{ value: f.lastSuccessfulRefresh }]),
    );
    this.fromWarehouse(
      'ddsync_refresh_plots_seen_total',
      'counter',
      'Plots read by every refresh (a plot reached through two suppliers is read twice).',
      (f) => [{ value: f.refreshPlotsSeen }],
    );
    this.fromWarehouse(
      'ddsync_refresh_rows_written_total',
      'counter',
      'Rows written by every refresh, by table and change (inserted, updated, deleted: soft-deleted).',
      (f) => f.refreshRowsWritten.map((r) => ({ labels: { table: r.table, change: r.change }, value: r.rows })),
    );
    this.fromWarehouse(
      'ddsync_refresh_deletions_total',
      'counter',
      'Plot links every refresh found missing, by outcome: confirmed (deleted) or deferred (kept until a later read confirms).',
      (f) => [
        { labels: { outcome: 'confirmed' }, value: f.refreshDeletions.confirmed },
        { labels: { outcome: 'deferred' }, value: f.refreshDeletions.deferred },
      ],
    );
    this.fromWarehouse(
      'ddsync_refresh_deletions_waiting',
      'gauge',
      'Plot links whose deletion is deferred now, waiting for a later read to confirm it.',
      (f) => [{ value: f.deletionsWaiting }],
    );
    this.fromWarehouse(
      'ddsync_supplier_last_successful_scan_timestamp_seconds',
      'gauge',
      "When each supplier's plots were last read completely (Unix time); absent for a supplier never read completely.",
      (f) =>
        f.suppliers.flatMap((s) =>
          s.lastSuccessfulScan === null ? [] : [{ labels: { supplier: s.supplier }, value: s.lastSuccessfulScan }],
        ),
    );
    this.fromWarehouse(
      'ddsync_supplier_failed_scans_in_a_row',
      'gauge',
      "Refreshes in a row, up to the latest finished one, in which a supplier's read failed (0: the last one succeeded).",
      (f) => f.suppliers.map((s) => ({ labels: { supplier: s.supplier }, value: s.failedScansInARow })),
    );
    this.fromWarehouse(
      'ddsync_transactions',
      'gauge',
      "Transactions by ddsync's state: pending, created, submitted (not final), available, error, withdrawn, failed, timed_out, cancelled (final).",
      (f) => f.transactions.map((t) => ({ labels: { state: t.state }, value: t.transactions })),
    );
    this.fromWarehouse(
      'ddsync_transactions_oldest_not_final_timestamp_seconds',
      'gauge',
      "Since when the oldest transaction without a final status waits (Unix time): its submission, or its batch's intake while not sent (as bi_sync_status); absent when none waits.",
      (f) => (f.oldestNotFinal === null ? [] : [{ value: f.oldestNotFinal }]),
    );
    this.fromWarehouse(
      'ddsync_transaction_time_to_final_seconds',
      'histogram',
      'Time from handing a transaction over (its batch) to its final status, per transaction with one.',
      (f) => histogramSamples('ddsync_transaction_time_to_final_seconds', f.timeToFinal),
    );
    this.fromWarehouse(
      'ddsync_pdf_archive_entries',
      'gauge',
      'Survey-response PDFs in the archive queue by state: queued, waiting, retrying (the backlog), archived, gone.',
      (f) => f.pdfArchive.map((p) => ({ labels: { state: p.state }, value: p.entries })),
    );
    this.fromWarehouse(
      'ddsync_webhooks_failing',
      'gauge',
      'Webhooks at the service whose deliveries are failing (bi_webhook_health.failing).',
      (f) => [{ value: f.webhooksFailing }],
    );
  }
}
