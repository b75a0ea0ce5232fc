import { afterEach, describe, expect, it } from 'vitest';
import { DdsyncMetrics, histogramSamples, retryReason, type WarehouseFigures } from '../../../platform/metrics.ts';
import { createUpstreamClient } from '../../../upstream/client.ts';
import { fakeJwt, json, recordingSleep, startServer, tokenRoute, type LocalServer } from '../upstream/local-server.ts';
import { sample } from '../../support/exposition.ts';

const figures = (over: Partial<WarehouseFigures> = {}): WarehouseFigures => ({
  refreshRuns: [{ outcome: 'succeeded', runs: 3 }],
  refreshDuration: { bounds: [10, 60], cumulative: [1, 3], sum: 70, count: 3 },
  lastSuccessfulRefresh: 1_800_000_000,
  refreshPlotsSeen: 42,
  refreshRowsWritten: [{ table: 'plots', change: 'inserted', rows: 40 }],
  refreshDeletions: { confirmed: 1, deferred: 2 },
  deletionsWaiting: 2,
  suppliers: [{ supplier: 's-1', lastSuccessfulScan: null, failedScansInARow: 4 }],
  transactions: [{ state: 'submitted', transactions: 5 }],
  oldestNotFinal: 1_799_990_000,
  timeToFinal: { bounds: [60], cumulative: [0], sum: 0, count: 0 },
  pdfArchive: [{ state: 'queued', entries: 7 }],
  webhooksFailing: 1,
  ...over,
});

describe("ddsync's metrics registry", () => {
  it('renders the warehouse figures as their series, histograms cumulative with +Inf = count', async () => {
    const m = new DdsyncMetrics({ processMetrics: false });
    m.readWarehouse(async () => figures());
    const text = await m.text();
    expect(sample(text, 'ddsync_refresh_runs_total', { outcome: 'succeeded' })).toBe(3);
    expect(sample(text, 'ddsync_refresh_duration_seconds_bucket', { le: '10' })).toBe(1);
    expect(sample(text, 'ddsync_refresh_duration_seconds_bucket', { le: '+Inf' })).toBe(3);
    expect(sample(text, 'ddsync_refresh_duration_seconds_sum')).toBe(70);
    expect(sample(text, 'ddsync_refresh_rows_written_total', { table: 'plots', change: 'inserted' })).toBe(40);
    expect(sample(text, 'ddsync_refresh_deletions_total', { outcome: 'deferred' })).toBe(2);
    // A supplier never read completely has no timestamp (not 0, which would read as 1970), but its failures.
    expect(sample(text, 'ddsync_supplier_last_successful_scan_timestamp_seconds', { supplier: 's-1' })).toBeUndefined();
    expect(sample(text, 'ddsync_supplier_failed_scans_in_a_row', { supplier: 's-1' })).toBe(4);
    expect(sample(text, 'ddsync_transactions_oldest_not_final_timestamp_seconds')).toBe(1_799_990_000);
    expect(sample(text, 'ddsync_pdf_archive_entries', { state: 'queued' })).toBe(7);
    expect(sample(text, 'ddsync_warehouse_figures_up')).toBe(1);
    expect(text).toMatch(/^# TYPE ddsync_refresh_duration_seconds histogram$/m);
    expect(text).toMatch(/^# TYPE ddsync_refresh_runs_total counter$/m);
  });

  it('reads the warehouse once per cache period, however many scrapes', async () => {
    let now = 0;
    let reads = 0;
    const m = new DdsyncMetrics({ processMetrics: false, warehouseCacheMs: 10_000, now: () => now });
    m.readWarehouse(async () => {
      reads++;
      return figures({ refreshPlotsSeen: reads });
    });
    await Promise.all([m.text(), m.text(), m.text()]);
    now = 9_999;
    expect(sample(await m.text(), 'ddsync_refresh_plots_seen_total')).toBe(1);
    now = 10_000;
    expect(sample(await m.text(), 'ddsync_refresh_plots_seen_total')).toBe(2);
    expect(reads).toBe(2);
  });

  it('leaves the figures out while the warehouse cannot be read, says so, and reads again at the next scrape', async () => {
    let down = true;
    const m = new DdsyncMetrics({ processMetrics: false });
    m.readWarehouse(async () => {
      if (down) throw new Error('connection refused');
      return figures();
    });
    let outage = true;
    m.watchDependency('warehouse', () => !outage);
    const during = await m.text();
    expect(sample(during, 'ddsync_warehouse_figures_up')).toBe(0);
    expect(sample(during, 'ddsync_dependency_up', { dependency: 'warehouse' })).toBe(0);
    expect(sample(during, 'ddsync_refresh_runs_total', { outcome: 'succeeded' })).toBeUndefined();
    down = false;
    outage = false;
    const after = await m.text();
    expect(sample(after, 'ddsync_warehouse_figures_up')).toBe(1);
    expect(sample(after, 'ddsync_dependency_up', { dependency: 'warehouse' })).toBe(1);
    expect(sample(after, 'ddsync_refresh_runs_total', { outcome: 'succeeded' })).toBe(3);
  });

  it('answers the scrape without the figures when the warehouse hangs, rather than time out', async () => {
    const m = new DdsyncMetrics({ processMetrics: false, warehouseTimeoutMs: 50 });
    m.readWarehouse(() => new Promise<never>(() => undefined));
    m.upstreamTokenRefreshes.inc();
    const text = await m.text();
    expect(sample(text, 'ddsync_warehouse_figures_up')).toBe(0);
    expect(sample(text, 'ddsync_upstream_token_refreshes_total')).toBe(1);
    expect(sample(text, 'ddsync_refresh_plots_seen_total')).toBeUndefined();
  });

  it('serves no warehouse series at all in a process that does not read them', async () => {
    const text = await new DdsyncMetrics({ processMetrics: false }).text();
    expect(text).not.toMatch(/^ddsync_(refresh|transactions|warehouse_figures_up)/m);
    expect(text).toMatch(/^# TYPE ddsync_upstream_requests_total counter$/m);
  });

  it('names why a request was repeated from a bounded set', () => {
    expect(
      ['RateLimitedError', 'ServerError', 'NetworkError', 'UnauthorizedError', 'TypeError'].map(retryReason),
    ).toEqual(['rate_limited', 'server_error', 'network_error', 'unauthorized', 'other']);
    expect(histogramSamples('h', { bounds: [1], cumulative: [2], sum: 3, count: 4 })).toEqual([
      { metricName: 'h_bucket', labels: { le: '1' }, value: 2 },
      { metricName: 'h_bucket', labels: { le: '+Inf' }, value: 4 },
      { metricName: 'h_sum', value: 3 },
      { metricName: 'h_count', value: 4 },
    ]);
  });
});

describe('the upstream client told to its observer', () => {
  const servers: LocalServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });

  it('counts every response by endpoint template and status, the retries by reason, 429s and tokens', async () => {
    let calls = 0;
    const server = await startServer((req, res) => {
      if (tokenRoute(req, res, () => fakeJwt(1))) return;
      calls++;
      if (calls === 1) return json(res, 429, { message: 'slow down' }, { 'retry-after': '1' });
      if (calls === 2) return res.socket?.destroy();
      return json(res, 200, []);
    });
    servers.push(server);
    const m = new DdsyncMetrics({ processMetrics: false });
    const client = createUpstreamClient({
      baseUrl: server.url,
      clientId: 'c',
      clientSecret: 'secret-xyz',
      sleep: recordingSleep().sleep,
      observer: m.upstreamObserver(),
    });
    await client.listSuppliers();
    const text = await m.text();
    const endpoint = 'GET /business-connections/suppliers';
    expect(sample(text, 'ddsync_upstream_requests_total', { endpoint, status: '429' })).toBe(1);
    expect(sample(text, 'ddsync_upstream_requests_total', { endpoint, status: 'network_error' })).toBe(1);
    expect(sample(text, 'ddsync_upstream_requests_total', { endpoint, status: '200' })).toBe(1);
    expect(sample(text, 'ddsync_upstream_rate_limited_total', { endpoint })).toBe(1);
    expect(sample(text, 'ddsync_upstream_retries_total', { endpoint, reason: 'rate_limited' })).toBe(1);
    expect(sample(text, 'ddsync_upstream_retries_total', { endpoint, reason: 'network_error' })).toBe(1);
    expect(sample(text, 'ddsync_upstream_request_duration_seconds_count', { endpoint })).toBe(3);
    expect(sample(text, 'ddsync_upstream_token_refreshes_total')).toBe(1);
    expect(text).not.toContain('secret-xyz');
  });
});
