import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { metricsScenario, type MetricsScenario } from '../support/metrics-scenario.ts';
import { sample } from '../support/exposition.ts';

// A real worker after a refresh, a submission and refused deliveries: what it serves at /metrics is
// what the warehouse holds, and what it did itself.
describe('a worker with DDSYNC_METRICS_ADDRESS', () => {
  let s: MetricsScenario;
  let text: string;
  beforeAll(async () => {
    s = await metricsScenario('metrics');
    text = await s.scrape();
  }, 240_000);
  afterAll(() => s?.close());

  const one = async <T>(query: ReturnType<typeof sql<T>>) => (await query.execute(s.db)).rows[0]!;

  it("serves the refresh's figures as the warehouse holds them", async () => {
    const runs = await one(sql<{ n: number; plots: number; confirmed: number; deferred: number; last: Date }>`
      select count(*)::int as n, sum(plots_seen)::int as plots, sum(deletions_confirmed)::int as confirmed,
             sum(deletions_deferred)::int as deferred, max(finished_at) as last
      from sync_runs where status = 'succeeded'`);
    expect(runs.n).toBe(1);
    expect(sample(text, 'ddsync_refresh_runs_total', { outcome: 'succeeded' })).toBe(1);
    expect(sample(text, 'ddsync_refresh_plots_seen_total')).toBe(runs.plots);
    expect(runs.plots).toBeGreaterThanOrEqual(120);
    expect(sample(text, 'ddsync_refresh_deletions_total', { outcome: 'confirmed' })).toBe(runs.confirmed);
    expect(sample(text, 'ddsync_refresh_last_success_timestamp_seconds')).toBe(Math.round(runs.last.getTime() / 1000));
    expect(sample(text, 'ddsync_refresh_duration_seconds_count')).toBe(1);
    expect(sample(text, 'ddsync_refresh_duration_seconds_bucket', { le: '+Inf' })).toBe(1);

    const counts = (
      await sql<{ table_name: string; inserted: number }>`
        select table_name, sum(inserted)::int as inserted from sync_run_counts group by table_name`.execute(s.db)
    ).rows;
    expect(counts.length).toBeGreaterThan(3);
    for (const c of counts)
      expect(sample(text, 'ddsync_refresh_rows_written_total', { table: c.table_name, change: 'inserted' })).toBe(
        c.inserted,
      );
    expect(sample(text, 'ddsync_refresh_rows_written_total', { table: 'plots', change: 'inserted' })).toBe(
      s.sim.control.countPlots(),
    );
  });

  it('serves each supplier its last successful scan, and no series per plot', async () => {
    const suppliers = s.sim.control.suppliers();
    for (const supplier of suppliers) {
      expect(
        sample(text, 'ddsync_supplier_last_successful_scan_timestamp_seconds', { supplier: supplier.id }),
      ).toBeGreaterThan(1_700_000_000);
      expect(sample(text, 'ddsync_supplier_failed_scans_in_a_row', { supplier: supplier.id })).toBe(0);
    }
    const plotId = (await one(sql<{ id: string }>`select id from plots limit 1`)).id;
    expect(text).not.toContain(plotId);
  });

  it('serves the transactions by state as the warehouse holds them, with the time to a final status', async () => {
    const states = (
      await sql<{
        state: string;
        n: number;
      }>`select state, count(*)::int as n from transactions group by state`.execute(s.db)
    ).rows;
    expect(states.reduce((sum, r) => sum + r.n, 0)).toBe(8);
    for (const r of states) expect(sample(text, 'ddsync_transactions', { state: r.state })).toBe(r.n);
    // Every transaction has its answer: none waits, so there is no oldest.
    expect(sample(text, 'ddsync_transactions', { state: 'submitted' })).toBe(0);
    expect(sample(text, 'ddsync_transactions_oldest_not_final_timestamp_seconds')).toBeUndefined();
    expect(sample(text, 'ddsync_transaction_time_to_final_seconds_count')).toBe(8);
    expect(sample(text, 'ddsync_pdf_archive_entries', { state: 'queued' })).toBe(0);
  });

  it('serves what the process did: requests by endpoint and status, token refreshes, refused deliveries', () => {
    const pages = sample(text, 'ddsync_upstream_requests_total', {
      endpoint: 'GET /businesses/{businessId}/plots',
      status: '200',
    });
    expect(pages).toBeGreaterThanOrEqual(3);
    expect(sample(text, 'ddsync_upstream_requests_total', { endpoint: 'POST /transactions', status: '201' })).toBe(8);
    expect(sample(text, 'ddsync_upstream_token_refreshes_total')).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'ddsync_webhook_deliveries_total', { outcome: 'rejected', reason: 'unsigned' })).toBe(1);
    expect(sample(text, 'ddsync_webhook_deliveries_total', { outcome: 'rejected', reason: 'unknown_webhook' })).toBe(1);
    expect(sample(text, 'ddsync_dependency_up', { dependency: 'warehouse' })).toBe(1);
    expect(sample(text, 'ddsync_dependency_up', { dependency: 'temporal' })).toBe(1);
    expect(sample(text, 'ddsync_warehouse_figures_up')).toBe(1);
  });

  it("appends the Temporal core's worker metrics, named as Prometheus wants", () => {
    expect(text).toMatch(/^# TYPE temporal_\w+_total counter$/m);
    expect(text).toMatch(/^temporal_workflow_task_execution_latency_seconds_bucket\{/m);
    expect(text).toMatch(/^temporal_num_pollers\{/m);
  });

  it('says nothing secret, and answers 404 elsewhere', async () => {
    expect(text).not.toContain('ddsync-demo-secret');
    expect(text).not.toContain('postgres://');
    const other = await fetch(s.metricsUrl.replace('/metrics', '/'));
    expect(other.status).toBe(404);
  });
});
