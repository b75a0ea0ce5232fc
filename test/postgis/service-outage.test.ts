import { describe, it, expect, afterEach } from 'vitest';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { startWorkerHarness, type WorkerHarness } from '../support/worker-harness.ts';
import { simulatorPlotFacts, warehousePlotFacts } from '../support/warehouse-facts.ts';
import { waitUntil } from '../support/wait.ts';
import { refreshWarehouse, refreshWorkflowId } from '../../workflows/refresh-warehouse.ts';
import { installTemporalRuntime } from '../../infra/temporal-connection.ts';
import { createLogger } from '../../platform/logger.ts';

// Two minutes of failing attempts are expected here: the runtime of this file's process says only errors.
installTemporalRuntime(createLogger({ level: 'error', format: 'json' }));

/**
 * Issue 20: the service down for minutes, not seconds. A refresh waits it out within its bounded retries
 * (the client's, then each activity's: about two minutes), then ends: never hangs, never calls itself
 * `succeeded`, sweeps nothing it could not read; the next refresh after the service returns ends true.
 */
describe('the service down for minutes', () => {
  let h: WorkerHarness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it('ends the refresh partial or failed, deletes nothing, and the next refresh is true to the service', async () => {
    h = await startWorkerHarness(
      { seed: 2024, suppliers: 3, plots: 3000, faults: { latency: 1, latencyMs: [200, 200] } },
      'svcdown',
      { upstreamMaxAttempts: 2 },
    );
    // A first refresh: what an outage must not take away.
    expect((await h.refresh()).status).toBe('succeeded');
    const live = async () =>
      (await sql<{ n: number }>`select count(*)::int as n from plots where deleted_at is null`.execute(h!.db)).rows[0]!
        .n;
    const before = await live();

    const runId = randomUUID();
    const run = h.temporal.client.workflow.execute(refreshWarehouse, {
      taskQueue: h.temporal.taskQueue,
      workflowId: refreshWorkflowId(runId),
      args: [{ runId, supplierConcurrency: 3 }],
    });
    await waitUntil(
      'a first page read',
      async () =>
        (
          await sql<{ n: number }>`select count(*)::int as n from sync_pages where run_id = ${runId}::uuid`.execute(
            h!.db,
          )
        ).rows[0]!.n >= 1,
      60_000,
      50,
    );
    // Every request is answered 503 from now on, for as long as the refresh takes to give up.
    h.sim.control.setFaults({ http503: 1 });
    const summary = await run;
    expect(['partial', 'failed']).toContain(summary.status);
    // Each part that could not be read says why: the service's 503.
    const failed = await sql<{ scope: string; error: string }>`
      select scope, error from sync_run_scopes where run_id = ${runId}::uuid and status = 'failed'`.execute(h.db);
    expect(failed.rows.length).toBeGreaterThan(0);
    for (const row of failed.rows) expect(row.error, row.scope).toMatch(/503/);
    expect(await live()).toBe(before);

    h.sim.control.setFaults('none');
    const after = await h.refresh();
    expect(after.status).toBe('succeeded');
    expect(await warehousePlotFacts(h.db)).toEqual(simulatorPlotFacts(h.sim));
  }, 400_000);
});
