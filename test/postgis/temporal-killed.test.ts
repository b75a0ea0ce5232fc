import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { sql } from 'kysely';
import { Client, Connection } from '@temporalio/client';
import { startTemporalDevServer, type RunningDevServer } from '../../infra/temporal-dev-server.ts';
import { freePort } from '../../infra/ports.ts';
import { startSimulator, type Simulator } from '../../simulator/index.ts';
import { openWarehouse, type Warehouse } from '../../warehouse/database.ts';
import { migrateToLatest } from '../../warehouse/migrate.ts';
import { startRefresh } from '../../cli/refresh-runner.ts';
import {
  runDdsync,
  processesMentioning,
  type RunningCommand,
  isRunning,
  ddsyncEnv,
  fastSubmission,
} from '../support/processes.ts';
import { simulatorPlotFacts, warehousePlotFacts } from '../support/warehouse-facts.ts';
import { shipmentRow, writeShipments } from '../support/shipments.ts';
import { createTestDatabase } from '../support/databases.ts';
import { waitUntil } from '../support/wait.ts';

/**
 * Issue 34, part 5: Temporal going away hard. The dev server is killed (SIGKILL: no shutdown, as a
 * machine or a container dies) while a bulk submission (`ddsync submit --wait`) and a refresh
 * (`ddsync refresh --wait`) run at once, and started again on its database file 40 s later: longer than
 * every bound of ddsync's on the way (a client call's own retries, about 20 s; the worker's Temporal
 * outage settling, 5 s; a CLI follower's back-off, 5 s), shorter than the follower's 10 minutes. The
 * worker is a real `ddsync worker` process, the Temporal server its own (killed here), the warehouse a
 * database of the extra suite's cluster. What is asserted: each key sent once at the service, none left
 * in DRAFT, every transaction final; the refresh `succeeded` with the warehouse equal to the service;
 * the worker never restarted; and both `--wait` commands say they lost Temporal, follow through to the
 * end, and exit 0.
 */

const SIMULATOR = {
  seed: 3435,
  suppliers: 4,
  plots: 4000,
  timeScale: 0.001,
  transactionErrorRatio: 0,
};

/** Two seconds a request: both the refresh and the submission are still under way when Temporal dies. */
const SLOW = { latency: 1, latencyMs: [2_000_000, 2_000_000] as [number, number] };

const OUTAGE_MS = 40_000;

describe('a worker and two `--wait` commands that outlive Temporal killed', () => {
  let dir: string;
  let temporal: RunningDevServer;
  let temporalPort: number;
  let temporalDb: string;
  let sim: Simulator;
  let db: Warehouse;
  let client: Client;
  let env: NodeJS.ProcessEnv;
  let worker: RunningCommand;
  const taskQueue = `temporal-killed-${Math.random().toString(36).slice(2, 8)}`;

  const workerAlive = () => isRunning(worker);

  beforeAll(async () => {
    const root = resolve('.ddsync/test');
    mkdirSync(root, { recursive: true });
    dir = await mkdtemp(resolve(root, 'temporal-killed-'));
    temporalPort = await freePort();
    temporalDb = resolve(dir, 'temporal.db');
    let url: string;
    [temporal, sim, url] = await Promise.all([
      startTemporalDevServer({ port: temporalPort, dbFilename: temporalDb, startTimeoutMs: 60_000 }),
      startSimulator({ port: 0, ...SIMULATOR }),
      createTestDatabase('temporal_killed'),
    ]);
    db = openWarehouse(url, 2, 'temporal-killed-test');
    await migrateToLatest(db);
    client = new Client({
      connection: await Connection.connect({ address: temporal.address }),
      namespace: temporal.namespace,
    });
    env = ddsyncEnv(
      {
        upstreamUrl: sim.url,
        databaseUrl: url,
        taskQueue,
        temporal: { address: temporal.address, namespace: temporal.namespace },
      },
      {
        DDSYNC_PG_POOL_SIZE: '6',
        DDSYNC_WORKER_ACTIVITIES: '6',
        DDSYNC_PDF_ARCHIVE_DIR: resolve(dir, 'archive'),
        ...fastSubmission(),
      },
    );
    worker = runDdsync(['worker'], env);
    await worker.waitFor(/worker ready/, 90_000);
    // The warehouse as a team has it before submitting: refreshed once (the readiness gate reads it).
    const first = await startRefresh(client, taskQueue, { supplierConcurrency: 4 });
    expect((await first.handle.result()).status).toBe('succeeded');
  }, 240_000);

  afterAll(async () => {
    if (worker && workerAlive()) {
      worker.child.kill('SIGKILL');
      await worker.exited;
    }
    await db?.destroy().catch(() => undefined);
    await client?.connection.close().catch(() => undefined);
    await sim?.close();
    await temporal?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('sends each key once, ends the refresh true, and both commands follow through to the end', async () => {
    const workerPid = worker.child.pid;
    sim.control.setFaults(SLOW);
    let i = 0;
    for (const { plot } of [...sim.control.plots()])
      if (i++ % 5 === 0) sim.control.editPlot(plot['id'] as string, { name: `renamed before Temporal died ${i}` });
    const supplier = sim.control.suppliers()[0]!.id;
    const keys = Array.from({ length: 60 }, (_, k) => `killed-${taskQueue}-${k}`);
    const submit = runDdsync(['submit', writeShipments(keys.map((k) => shipmentRow(k, supplier))), '--wait'], env);
    const refresh = runDdsync(['refresh', '--wait'], env);
    const runId = /refresh (\S+) started/.exec(await refresh.waitFor(/refresh \S+ started/, 60_000))![1]!;
    await submit.waitFor(/batch \S+ started/, 60_000);
    // Early in both: the refresh has written a page, the submission has created a transaction at the service.
    await waitUntil(
      'a page written and a transaction created',
      async () => {
        const pages = await sql<{
          n: number;
        }>`select count(*)::int as n from sync_pages where run_id = ${runId}::uuid`.execute(db);
        const created = Object.keys(sim.control.transactionCountsByCustomId()).filter((k) => keys.includes(k));
        return pages.rows[0]!.n >= 1 && created.length >= 1;
      },
      60_000,
      100,
    );

    // Killed, as a machine dies: no shutdown, nothing flushed by the server.
    const pids = processesMentioning(temporalDb);
    expect(pids.length).toBeGreaterThan(0);
    for (const pid of pids) process.kill(pid, 'SIGKILL');
    await waitUntil('the Temporal server gone', () => processesMentioning(temporalDb).length === 0, 10_000, 50);
    // The outage's length is the scenario, not a wait for something to happen.
    await new Promise((r) => setTimeout(r, OUTAGE_MS));
    expect(workerAlive()).toBe(true);
    expect(submit.child.exitCode).toBeNull();
    expect(refresh.child.exitCode).toBeNull();
    temporal = await startTemporalDevServer({ port: temporalPort, dbFilename: temporalDb, startTimeoutMs: 60_000 });

    const [refreshCode, submitCode] = await Promise.all([refresh.exited, submit.exited]);
    // Both said they lost Temporal, kept following, and saw the work to its end.
    expect(refreshCode, refresh.output()).toBe(0);
    expect(refresh.output()).toMatch(/lost Temporal \([^)]+\): the refresh \S+ goes on in the workers/);
    expect(refresh.output()).toMatch(/Temporal answers again/);
    expect(refresh.output()).toMatch(/succeeded/);
    expect(submitCode, submit.output()).toBe(0);
    expect(submit.output()).toMatch(/lost Temporal \([^)]+\): the batch \S+ goes on in the workers/);
    expect(submit.output()).toMatch(/Temporal answers again/);
    expect(submit.output()).toMatch(/^batch \S+ \(.+\) done at /m);

    // Each key sent once, none left in DRAFT, every transaction final in the warehouse.
    const counts = sim.control.transactionCountsByCustomId();
    expect(keys.filter((k) => counts[k] !== 1)).toEqual([]);
    const drafts = sim.control.transactions().filter((t) => keys.includes(t.customId) && t.status === 'DRAFT');
    expect(drafts.map((t) => t.customId)).toEqual([]);
    const states = await sql<{ state: string; n: number }>`
      select state, count(*)::int as n from transactions where key like ${`killed-${taskQueue}-%`} group by state`.execute(
      db,
    );
    expect(Object.fromEntries(states.rows.map((r) => [r.state, r.n]))).toEqual({ available: keys.length });

    // The refresh succeeded, and the warehouse equals the service.
    const runs = await sql<{ status: string }>`select status from sync_runs where id = ${runId}::uuid`.execute(db);
    expect(runs.rows[0]!.status).toBe('succeeded');
    expect(await warehousePlotFacts(db)).toEqual(simulatorPlotFacts(sim));
    // The worker was never restarted.
    expect(workerAlive()).toBe(true);
    expect(worker.child.pid).toBe(workerPid);
  }, 360_000);
});
