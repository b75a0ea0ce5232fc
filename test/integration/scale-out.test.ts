import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { startSimulator, type Simulator } from '../../simulator/index.ts';
import { createUpstreamClient } from '../../upstream/index.ts';
import { openWarehouse, type Warehouse } from '../../warehouse/database.ts';
import { migrateToLatest } from '../../warehouse/migrate.ts';
import type { RunSummary } from '../../warehouse/refresh/sweep.ts';
import { createDdsyncWorker } from '../../infra/worker.ts';
import { createLogger } from '../../platform/logger.ts';
import { startRefresh } from '../../cli/refresh-runner.ts';
import type { RefreshInput } from '../../workflows/refresh-warehouse.ts';
import { createTestDatabase } from '../support/databases.ts';
import { connectTemporal, workflowBundle, type TemporalForTest } from '../support/temporal.ts';
import { ddsyncEnv, lastJsonLine, runDdsync } from '../support/processes.ts';
import { killWorker, startWorkerProcesses, type WorkerProcess } from '../support/worker-processes.ts';
import {
  activityRuns,
  readWorkflowTree,
  runningActivities,
  runsByIdentity,
  type WorkflowTreeReading,
} from '../support/activity-runs.ts';
import { comparableSummary, refreshFingerprint, type RefreshFingerprint } from '../support/warehouse-fingerprint.ts';
import { simulatorPlotFacts, warehousePlotFacts } from '../support/warehouse-facts.ts';
import { shipmentRow, writeShipments } from '../support/shipments.ts';
import { waitUntil } from '../support/wait.ts';

/**
 * Scale-out (issue 13, part 3): several `ddsync worker` processes on one task queue, one warehouse and
 * one Temporal. Real worker processes started through the CLI, a real Temporal dev server, a real
 * Postgres, the simulator over HTTP. Which worker ran what is read from Temporal itself (histories and
 * pending activities: test/support/activity-runs.ts), never from what the workers say.
 */

const RUN = Math.random().toString(36).slice(2, 8);

/**
 * Five suppliers of about 1,800 plots each (four pages of 500), every request 40 ms slower: enough
 * pages for two workers to share and for one to be killed mid-run. The simulator's clock runs 1,000
 * times fast (its latency is given in simulated ms), so a transaction's EU validation takes seconds.
 */
const SIMULATOR = {
  seed: 1313,
  suppliers: 5,
  plots: 9000,
  timeScale: 0.001,
  transactionErrorRatio: 0,
  faults: { latency: 1, latencyMs: [40_000, 40_000] as [number, number] },
};

/** A dead worker's ordinary refresh activities are retried elsewhere after this (the default is 30 s). */
const TEST_TIMEOUTS: RefreshInput['timeouts'] = { heartbeatTimeout: '2 seconds' };

/** Transaction waits for a simulator whose clock runs 1,000 times fast (FAST_TIMING of worker-harness.ts, as settings). */
const FAST_SUBMISSION = {
  DDSYNC_SUBMIT_CONCURRENCY: '40',
  DDSYNC_TX_FIRST_POLL: '100ms',
  DDSYNC_TX_MAX_POLL: '1s',
  DDSYNC_TX_EU_WAIT: '1800ms',
  DDSYNC_TX_DEADLINE: '2m',
  DDSYNC_TX_CREATE_SETTLE: '300ms',
};

interface Deployment {
  db: Warehouse;
  taskQueue: string;
  env: NodeJS.ProcessEnv;
  workers: WorkerProcess[];
}

describe('scale-out: two ddsync worker processes on one task queue', () => {
  let sim: Simulator;
  let temporal: TemporalForTest;
  const processes: WorkerProcess[] = [];
  const warehouses: Warehouse[] = [];
  /** The same refresh by one worker: what two workers must leave too. */
  let oneWorker: { summary: RunSummary; fingerprint: RefreshFingerprint };
  /** Two workers that share a refresh, then bulk submissions (one of them is killed in the last). */
  let shared: Deployment;
  /** Two workers for the refresh during which one of them is killed. */
  let killed: Deployment;

  /** A migrated warehouse of its own, and the environment of `ddsync worker` processes serving it on a task queue of their own. */
  async function deployment(prefix: string) {
    const databaseUrl = await createTestDatabase(prefix);
    const db = openWarehouse(databaseUrl, 4);
    warehouses.push(db);
    await migrateToLatest(db);
    const taskQueue = `scale-out-${prefix}-${randomUUID()}`;
    const env = ddsyncEnv(
      { upstreamUrl: sim.url, databaseUrl, taskQueue },
      { DDSYNC_LOG_LEVEL: 'warn', DDSYNC_PG_POOL_SIZE: '6', DDSYNC_WORKER_ACTIVITIES: '6' },
    );
    return { db, taskQueue, env };
  }

  async function withWorkers(d: Omit<Deployment, 'workers'>): Promise<Deployment> {
    const workers = await startWorkerProcesses(2, d.env, temporal.client, (w) => processes.push(w));
    return { ...d, workers };
  }

  /** The reference refresh, by one worker in this process (the same assembly as `ddsync worker`) on a task queue of its own. */
  async function refreshByOneWorker() {
    const { db, taskQueue } = await deployment('one');
    const worker = await createDdsyncWorker({
      connection: temporal.workerConnection,
      namespace: temporal.namespace,
      taskQueue,
      deps: {
        db,
        api: createUpstreamClient({ baseUrl: sim.url, clientId: 'ddsync-demo', clientSecret: 'ddsync-demo-secret' }),
        log: createLogger({ level: 'silent' }),
      },
      workflowBundle: await workflowBundle(),
      maxConcurrentActivities: 6,
    });
    const summary = await worker.runUntil(async () => {
      const started = await startRefresh(temporal.client, taskQueue, { supplierConcurrency: 4 });
      return started.handle.result();
    });
    expect(summary.status).toBe('succeeded');
    expect(await warehousePlotFacts(db)).toEqual(simulatorPlotFacts(sim));
    return { summary, fingerprint: await refreshFingerprint(db, summary.runId) };
  }

  beforeAll(async () => {
    sim = await startSimulator({ port: 0, ...SIMULATOR });
    temporal = await connectTemporal();
    const [a, b] = [await deployment('two'), await deployment('kill')];
    // The four worker processes start while the reference refresh runs.
    [oneWorker, shared, killed] = await Promise.all([refreshByOneWorker(), withWorkers(a), withWorkers(b)]);
  }, 180_000);

  afterAll(async () => {
    await Promise.allSettled(processes.map(killWorker));
    await Promise.allSettled(warehouses.map((db) => db.destroy()));
    await temporal?.close();
    await sim?.close();
  });

  const identities = (d: Deployment) => d.workers.map((w) => w.identity).sort();

  /** What the warehouse must hold after a refresh of the simulator's data, whoever ran it. */
  async function expectSameWarehouseAsOneWorker(db: Warehouse, summary: RunSummary) {
    expect(summary.status).toBe('succeeded');
    expect(comparableSummary(summary)).toEqual(comparableSummary(oneWorker.summary));
    expect(await refreshFingerprint(db, summary.runId)).toEqual(oneWorker.fingerprint);
    expect(await warehousePlotFacts(db)).toEqual(simulatorPlotFacts(sim));
  }

  it('spreads a refresh over both workers (each loads pages) and leaves the warehouse one worker leaves', async () => {
    // Page loads as ordinary activities (DDSYNC_REFRESH_PAGE_ACTIVITIES=task-queue): each page is a task either worker may take.
    const started = await startRefresh(temporal.client, shared.taskQueue, {
      supplierConcurrency: 4,
      pageActivities: 'task-queue',
    });
    const summary = await started.handle.result();
    const byWorker = runsByIdentity(await activityRuns(temporal.client, [started.workflowId]));
    expect(Object.keys(byWorker).sort()).toEqual(identities(shared));
    for (const id of identities(shared)) expect(byWorker[id]!['loadPlotPage']).toBeGreaterThan(0);
    await expectSameWarehouseAsOneWorker(shared.db, summary);
  }, 90_000);

  describe('a bulk submission (`ddsync submit`)', () => {
    /** `ddsync submit FILE --json` of one shipment per key, as a compliance team runs it: the batch and its workflow. */
    async function submit(keys: readonly string[]): Promise<{ batchId: string; workflowId: string }> {
      const supplier = sim.control.suppliers()[0]!.id;
      const file = writeShipments(keys.map((k) => shipmentRow(k, supplier)));
      const command = runDdsync(['submit', file, '--json'], { ...shared.env, ...FAST_SUBMISSION });
      expect(await command.exited, command.output()).toBe(0);
      const out = lastJsonLine<{ batchId: string; workflowId: string; accepted: number; started: boolean }>(
        command.output(),
      );
      expect(out).toMatchObject({ accepted: keys.length, started: true });
      return out;
    }

    /** The ledger's transactions of the batch, by state. */
    const states = async (batchId: string) =>
      Object.fromEntries(
        (
          await sql<{ state: string; n: number }>`
            select state, count(*)::int as n from transactions where batch_id = ${batchId}::uuid group by state`.execute(
            shared.db,
          )
        ).rows.map((r) => [r.state, r.n]),
      );

    /** Every key exactly once at the service (by customId) and AVAILABLE there; in the ledger, every key available. */
    async function expectEachKeySentOnce(batchId: string, keys: readonly string[]) {
      expect(await states(batchId)).toEqual({ available: keys.length });
      const counts = sim.control.transactionCountsByCustomId();
      expect(keys.filter((k) => counts[k] !== 1)).toEqual([]);
      const wanted = new Set(keys);
      const ours = sim.control.transactions().filter((t) => wanted.has(t.customId ?? ''));
      expect(ours.filter((t) => t.status !== 'AVAILABLE').map((t) => t.customId)).toEqual([]);
    }

    it('spreads a batch over both workers and sends each key exactly once', async () => {
      const keys = Array.from({ length: 300 }, (_, i) => `scale-${RUN}-spread-${i}`);
      const { batchId, workflowId } = await submit(keys);
      await temporal.client.workflow.getHandle(workflowId).result();
      await expectEachKeySentOnce(batchId, keys);
      // The batch's workflow and every workflow it started (whatever the design: one per transaction, or chunks).
      const byWorker = runsByIdentity(await activityRuns(temporal.client, [workflowId]));
      expect(Object.keys(byWorker).sort()).toEqual(identities(shared));
    }, 90_000);

    it('sends each key exactly once when one of the two workers is killed mid-batch', async () => {
      const keys = Array.from({ length: 300 }, (_, i) => `scale-${RUN}-kill-${i}`);
      const { batchId, workflowId } = await submit(keys);
      const created = async () =>
        (
          await sql<{ n: number }>`
            select count(*)::int as n from transactions where batch_id = ${batchId}::uuid and id is not null`.execute(
            shared.db,
          )
        ).rows[0]!.n;
      await waitUntil('some transactions created', async () => (await created()) >= 30, 60_000, 100);
      // From here every request takes 3 s: a chunk a worker is seen running is still sending or reading when
      // that worker is killed a few milliseconds later (at 40 ms a request, it might have just finished).
      sim.control.setFaults({ latency: 1, latencyMs: [3_000_000, 3_000_000] });
      const running = await waitUntil(
        'a chunk of the batch under way in a worker',
        async () => {
          const now = await runningActivities(temporal.client, [workflowId]);
          return now.length > 0 ? now : undefined;
        },
        60_000,
        50,
      );
      const victim = mostBusy(shared.workers, { runs: [], open: [], retried: noRetries() }, running);
      await killWorker(victim);
      sim.control.setFaults(SIMULATOR.faults);
      // The server still holds the dead worker's attempt as started: the kill cut it, it did not end.
      const cut = (await runningActivities(temporal.client, [workflowId])).filter(
        (a) => a.identity === victim.identity,
      );
      expect(cut.length).toBeGreaterThan(0);
      expect((await states(batchId))['available'] ?? 0).toBeLessThan(keys.length);

      await temporal.client.workflow.getHandle(workflowId).result();
      await expectEachKeySentOnce(batchId, keys);
      const after = await readWorkflowTree(temporal.client, [workflowId]);
      const survivor = shared.workers.find((w) => w !== victim)!;
      expect(runsByIdentity(after.runs)[survivor.identity]).toBeDefined();
      // The attempts the kill cut were done again by the survivor (Temporal's own record of it).
      expect(after.retried.activityAttemptsAfterFirst).toBeGreaterThan(0);
    }, 90_000);
  });

  it('finishes a refresh with the same warehouse when one of the two workers is killed mid-run', async () => {
    // As configured by default: page loads are local activities, in the worker that runs their supplier's workflow.
    const started = await startRefresh(temporal.client, killed.taskQueue, {
      supplierConcurrency: 4,
      timeouts: TEST_TIMEOUTS,
    });
    const pagesWritten = async () =>
      (
        await sql<{
          n: number;
        }>`select count(*)::int as n from sync_pages where run_id = ${started.runId}::uuid`.execute(killed.db)
      ).rows[0]!.n;
    // A few pages are in the warehouse and suppliers are being read (their workflows open in a worker's cache).
    const seen = await waitUntil(
      'suppliers being read, a few pages written',
      async () => {
        if ((await pagesWritten()) < 4) return undefined;
        const tree = await readWorkflowTree(temporal.client, [started.workflowId]);
        return tree.open.some((o) => o.workflowId !== started.workflowId) ? tree : undefined;
      },
      60_000,
      250,
    );
    // The one that holds the most open workflows (suppliers mid-read, in its cache): they must move to the survivor.
    const victim = mostBusy(killed.workers, seen, []);
    expect(busyWith(victim, seen, [])).toBeTruthy();
    await killWorker(victim);
    const atKill = await sql<{
      status: string;
    }>`select status from sync_runs where id = ${started.runId}::uuid`.execute(killed.db);
    expect(atKill.rows[0]!.status).toBe('running');
    expect(await pagesWritten()).toBeLessThan(oneWorker.summary.pages);

    const summary = await started.handle.result();
    await expectSameWarehouseAsOneWorker(killed.db, summary);
    const after = await readWorkflowTree(temporal.client, [started.workflowId]);
    expect(after.retried.workflowTasksTimedOut + after.retried.activityAttemptsAfterFirst).toBeGreaterThan(0);
  }, 90_000);
});

const noRetries = () => ({ workflowTasksTimedOut: 0, activityAttemptsAfterFirst: 0 });

/** What `worker` has under way: activities it runs now and workflows it holds open (in its cache). */
function busyWith(worker: WorkerProcess, tree: WorkflowTreeReading, running: ReadonlyArray<{ identity: string }>) {
  return [...running, ...tree.open].filter((r) => r.identity === worker.identity).length;
}

/** The worker to kill: the one running most activities now, else holding most open workflows, else that has run most. */
function mostBusy(
  workers: readonly WorkerProcess[],
  tree: WorkflowTreeReading,
  running: ReadonlyArray<{ identity: string }>,
): WorkerProcess {
  const score = (w: WorkerProcess) =>
    [running, tree.open, tree.runs].map((list) => list.filter((r) => r.identity === w.identity).length);
  const order = (a: number[], b: number[]) => b[0]! - a[0]! || b[1]! - a[1]! || b[2]! - a[2]!;
  return [...workers].sort((a, b) => order(score(a), score(b)))[0]!;
}
