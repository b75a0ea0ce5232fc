import { describe, it, expect, afterEach } from 'vitest';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { startWorkerHarness, type WorkerHarness } from '../support/worker-harness.ts';
import { simulatorPlotFacts, warehousePlotFacts } from '../support/warehouse-facts.ts';
import { waitUntil } from '../support/wait.ts';
import { refreshWarehouse, refreshWorkflowId } from '../../workflows/refresh-warehouse.ts';

/** Each plot once, one history row each, and counts that add up: what replays must not break. */
async function expectNoDuplicates(h: WorkerHarness, runId: string): Promise<void> {
  const plots = await sql<{ n: number }>`select count(*)::int as n from plots`.execute(h.db);
  const history = await sql<{
    n: number;
    plots: number;
  }>`select count(*)::int as n, count(distinct plot_id)::int as plots from plot_history`.execute(h.db);
  expect(history.rows[0]).toEqual({ n: plots.rows[0]!.n, plots: plots.rows[0]!.n });
  const counted = await sql<{
    inserted: number;
  }>`select inserted::int from sync_run_counts where run_id = ${runId}::uuid and table_name = 'plots'`.execute(h.db);
  expect(counted.rows[0]!.inserted).toBe(plots.rows[0]!.n);
}

describe('refresh resilience', () => {
  let h: WorkerHarness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it('leaves the same warehouse when the service fails often (5xx, 429, resets, truncated bodies, expired tokens)', async () => {
    h = await startWorkerHarness({ seed: 21, suppliers: 3, plots: 2500, faults: 'hostile', timeScale: 0.01 }, 'faults');
    const summary = await h.refresh();
    expect(summary.status).toBe('succeeded');
    expect(await warehousePlotFacts(h.db)).toEqual(simulatorPlotFacts(h.sim));
    expect(summary.retries).toBeGreaterThan(0);
    await expectNoDuplicates(h, summary.runId);
  });

  it('finishes with the same warehouse when its worker is killed mid-run and another starts', async () => {
    h = await startWorkerHarness(
      { seed: 22, suppliers: 3, plots: 6000, faults: { latency: 1, latencyMs: [40, 40] } },
      'crash',
    );
    const first = h.spawnWorker();
    const runId = randomUUID();
    const run = h.temporal.client.workflow.execute(refreshWarehouse, {
      taskQueue: h.temporal.taskQueue,
      workflowId: refreshWorkflowId(runId),
      // Page loads as ordinary activities here: a dead worker's page is noticed by its heartbeat timeout.
      args: [
        {
          runId,
          supplierConcurrency: 2,
          pagesPerRun: 2,
          pageActivities: 'task-queue',
          timeouts: { heartbeatTimeout: '2 seconds' },
        },
      ],
    });
    await waitUntil(
      'a few pages written',
      async () => {
        const r = await sql<{
          n: number;
        }>`select count(*)::int as n from sync_pages where run_id = ${runId}::uuid and entity = 'plots'`.execute(h!.db);
        return r.rows[0]!.n >= 3;
        // A worker process started on a machine busy with other test files may take most of a minute.
      },
      75_000,
    );
    first.child.kill('SIGKILL');
    await first.exited;
    // Killed mid-run: the run had neither finished nor read every page.
    const atKill = await sql<{ status: string; pages: number }>`
      select r.status, (select count(*)::int from sync_pages p where p.run_id = r.id and p.entity = 'plots') as pages
      from sync_runs r where r.id = ${runId}::uuid`.execute(h.db);
    expect(atKill.rows[0]!.status).toBe('running');
    expect(atKill.rows[0]!.pages).toBeLessThan(14);

    h.spawnWorker();
    const summary = await run;
    expect(summary.status).toBe('succeeded');
    expect(await warehousePlotFacts(h.db)).toEqual(simulatorPlotFacts(h.sim));
    await expectNoDuplicates(h, runId);
  }, 120_000);
});
