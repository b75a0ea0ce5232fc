import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { startSimulator, type Simulator } from '../../simulator/index.ts';
import { openWarehouse, type Warehouse } from '../../warehouse/database.ts';
import { createTestDatabase } from '../support/databases.ts';
import {
  ddsyncEnv,
  runDdsync,
  startWorkerProcess,
  stopProcess,
  type RunningCommand,
  lastJsonLine,
} from '../support/processes.ts';
import { connectTemporal, type TemporalForTest } from '../support/temporal.ts';
import { startRefresh } from '../../cli/refresh-runner.ts';
import { waitUntil } from '../support/wait.ts';

describe('ddsync refresh', () => {
  let sim: Simulator;
  let env: NodeJS.ProcessEnv;
  let worker: RunningCommand;
  let db: Warehouse;

  beforeAll(async () => {
    sim = await startSimulator({ port: 0, suppliers: 3, plots: 900 });
    const databaseUrl = await createTestDatabase('clirefresh');
    env = ddsyncEnv({ upstreamUrl: sim.url, databaseUrl, taskQueue: `cli-refresh-${randomUUID()}` });
    worker = await startWorkerProcess(env);
    db = openWarehouse(databaseUrl, 2);
  }, 120_000);
  afterAll(async () => {
    await stopProcess(worker);
    await db?.destroy();
    await sim?.close();
  });

  it('--wait --json follows the refresh and prints its summary as one JSON object', async () => {
    const run = runDdsync(['refresh', '--wait', '--json'], env);
    expect(await run.exited).toBe(0);
    const summary = lastJsonLine(run.output());
    expect(summary).toMatchObject({
      status: 'succeeded',
      suppliers: 3,
      rowsWritten: expect.any(Number),
      runId: expect.any(String),
    });
    const plots = await sql<{ n: number }>`select count(*)::int as n from plots where deleted_at is null`.execute(db);
    expect(plots.rows[0]!.n).toBe(900);
    expect(run.output()).not.toContain('ddsync-demo-secret');
  }, 120_000);

  it('--wait prints a progress line and a per-table summary; a second run writes nothing', async () => {
    const run = runDdsync(['refresh', '--wait'], env);
    expect(await run.exited).toBe(0);
    const out = run.output();
    expect(out).toMatch(/suppliers 3\/3 +plots [\d,]+\/[\d,]+ \(\+[\d,]+ own\) +[\d,]+ plots\/s/);
    expect(out).toMatch(/refresh [0-9a-f-]{36} succeeded in [\d.]+ s/);
    expect(out).toContain('rows written 0 (nothing changed)');
    // Every plot was unchanged, each counted once however many suppliers reach it (900 plots).
    expect(out).toMatch(/\n {2}plots +0 +0 +900 +0/);
  }, 120_000);

  it('follows a refresh that is already running instead of starting a second one', async () => {
    // No worker polls this queue, so the first refresh stays running.
    const temporal: TemporalForTest = await connectTemporal();
    try {
      const first = await startRefresh(temporal.client, temporal.taskQueue, {});
      expect(first.attached).toBe(false);
      await waitUntil('the refresh to be visible', async () => {
        for await (const w of temporal.client.workflow.list({ query: `WorkflowId = '${first.workflowId}'` }))
          return w.status.name === 'RUNNING';
        return false;
      });
      const second = await startRefresh(temporal.client, temporal.taskQueue, {});
      expect(second).toMatchObject({ attached: true, workflowId: first.workflowId });
      // Another task queue is another deployment: its refresh is its own.
      const elsewhere = await startRefresh(temporal.client, `${temporal.taskQueue}-other`, {});
      expect(elsewhere.attached).toBe(false);
      await elsewhere.handle.terminate('test done');
      await first.handle.terminate('test done');
    } finally {
      await temporal.close();
    }
  });

  it('without --wait prints the run it started', async () => {
    const run = runDdsync(['refresh', '--json'], env);
    expect(await run.exited).toBe(0);
    const started = lastJsonLine(run.output());
    expect(started).toMatchObject({
      runId: expect.any(String),
      workflowId: `refresh/${started['runId']}`,
      attached: false,
    });
  });
});
