import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { sql } from 'kysely';
import { Client, Connection } from '@temporalio/client';
import pg from 'pg';
import { startEmbeddedPostgres, type RunningPostgres } from '../../infra/embedded-postgres.ts';
import { freePort } from '../../infra/ports.ts';
import { startSimulator, type Simulator } from '../../simulator/index.ts';
import { openWarehouse, type Warehouse } from '../../warehouse/database.ts';
import { migrateToLatest } from '../../warehouse/migrate.ts';
import type { RunSummary } from '../../warehouse/refresh/sweep.ts';
import { startRefresh } from '../../cli/refresh-runner.ts';
import {
  runDdsync,
  lastJsonLine,
  type RunningCommand,
  isRunning,
  logMessages,
  ddsyncEnv,
  fastSubmission,
} from '../support/processes.ts';
import { simulatorPlotFacts, warehousePlotFacts } from '../support/warehouse-facts.ts';
import { shipmentRow, writeShipments } from '../support/shipments.ts';
import { waitUntil } from '../support/wait.ts';
import { sample } from '../support/exposition.ts';
import { embeddedStack } from '../support/stack.ts';

/**
 * Issue 34, part 2: a warehouse that freezes instead of refusing. A real `ddsync worker` process
 * refreshes and submits while its PostgreSQL is stopped with SIGSTOP (as a frozen VM, a black-holed
 * network or a stopped process do it: the kernel still acknowledges TCP, nothing fails by itself):
 * one backend in the middle of a page's work, the postmaster alone, then every process of the cluster,
 * each for longer than the worker's bounds (DDSYNC_PG_TIMEOUT_SCALE=0.05: a page's statement 6 s on
 * the server, 7 s on the client). After SIGCONT the warehouse equals the service, every key is sent
 * once, every transaction is final, and the worker is the same process. Slow (minutes), so it runs in
 * the extra suite.
 */

const SIMULATOR = {
  seed: 3434,
  suppliers: 4,
  plots: 4000,
  timeScale: 0.001,
  transactionErrorRatio: 0,
  // Every request takes 0.6 s of real time: a refresh is still under way when a freeze begins.
  faults: { latency: 1, latencyMs: [600_000, 600_000] as [number, number] },
};

/** Longer than the worker's client bound of a page's statement (7 s at scale 0.05). */
const FREEZE_MS = 15_000;

describe('a worker that outlives a frozen warehouse', () => {
  let dir: string;
  let postgres: RunningPostgres;
  let sim: Simulator;
  let db: Warehouse;
  let client: Client;
  let env: NodeJS.ProcessEnv;
  let worker: RunningCommand;
  let workerPid: number;
  let metricsUrl: string;
  const frozen = new Set<number>();
  const taskQueue = `frozen-${Math.random().toString(36).slice(2, 8)}`;

  function freeze(pids: readonly number[]): void {
    for (const pid of pids) {
      frozen.add(pid);
      process.kill(pid, 'SIGSTOP');
    }
  }
  function thaw(pids: readonly number[]): void {
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGCONT');
      } catch {
        // Gone meanwhile: nothing to thaw.
      }
      frozen.delete(pid);
    }
  }
  const hold = (ms: number) => new Promise((r) => setTimeout(r, ms));

  async function postmasterPid(): Promise<number> {
    return Number((await readFile(resolve(postgres.dataDir, 'postmaster.pid'), 'utf8')).split('\n')[0]);
  }

  /** The postmaster and every process it started (backends, checkpointer, WAL writer …). */
  async function clusterPids(): Promise<number[]> {
    const postmaster = await postmasterPid();
    const children: number[] = [];
    for (const entry of await readdir('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
      // pid (comm) state ppid …: comm may hold spaces, so read after its closing parenthesis.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === postmaster) children.push(Number(entry));
    }
    return [postmaster, ...children];
  }

  /** A superuser session, opened and closed around one query (never left open across a freeze). */
  async function adminQuery<R extends pg.QueryResultRow>(text: string): Promise<R[]> {
    const session = new pg.Client({ connectionString: postgres.urlFor('postgres') });
    session.on('error', () => undefined);
    await session.connect();
    try {
      return (await session.query<R>(text)).rows;
    } finally {
      await session.end();
    }
  }

  /**
   * The state of the worker's TCP connection from `clientPort` to the warehouse, as the kernel has it
   * (/proc/net/tcp: 01 established; after the worker destroys it, FIN_WAIT or gone), or undefined.
   */
  async function connectionState(clientPort: number): Promise<string | undefined> {
    const hex = (n: number) => n.toString(16).toUpperCase().padStart(4, '0');
    for (const line of (await readFile('/proc/net/tcp', 'utf8')).split('\n').slice(1)) {
      const [, local, remote, state] = line.trim().split(/\s+/);
      if (local?.endsWith(`:${hex(clientPort)}`) && remote?.endsWith(`:${hex(postgres.port)}`)) return state;
    }
    return undefined;
  }

  async function pagesWritten(runId: string): Promise<number> {
    return sql<{ n: number }>`select count(*)::int as n from sync_pages where run_id = ${runId}::uuid`
      .execute(db)
      .then((r) => r.rows[0]!.n);
  }

  const workerAlive = () => isRunning(worker);
  /** The worker's log lines whose message starts with `prefix`. */
  const said = (prefix: string) => logMessages(worker, prefix);
  /** Whether the worker said a statement went unanswered past the client's bound (7 s at this scale). */
  const boundSaid = () =>
    [...said('the warehouse answers, but'), ...said('the warehouse is unavailable')].some((m) =>
      /did not answer a statement within 7 s/.test(m),
    );

  beforeAll(async () => {
    const root = resolve('.ddsync/test');
    mkdirSync(root, { recursive: true });
    dir = await mkdtemp(resolve(root, 'frozen-'));
    [postgres, sim] = await Promise.all([
      startEmbeddedPostgres({ dataDir: resolve(dir, 'postgres'), persistent: false }),
      startSimulator({ port: 0, ...SIMULATOR }),
    ]);
    db = openWarehouse(postgres.url, 3, 'frozen-test');
    await migrateToLatest(db);
    const stack = embeddedStack();
    client = new Client({
      connection: await Connection.connect({ address: stack.temporalAddress }),
      namespace: stack.temporalNamespace,
    });
    env = ddsyncEnv(
      { upstreamUrl: sim.url, databaseUrl: postgres.url, taskQueue },
      {
        DDSYNC_PG_POOL_SIZE: '6',
        DDSYNC_WORKER_ACTIVITIES: '6',
        DDSYNC_PG_TIMEOUT_SCALE: '0.05',
        DDSYNC_PDF_ARCHIVE_DIR: resolve(dir, 'archive'),
        ...fastSubmission(),
      },
    );
    const metricsPort = await freePort();
    metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
    worker = runDdsync(['worker'], { ...env, DDSYNC_METRICS_ADDRESS: `127.0.0.1:${metricsPort}` });
    await worker.waitFor(/worker ready/, 90_000);
    workerPid = worker.child.pid!;
  }, 180_000);

  afterAll(async () => {
    // Never leave a process stopped, whatever failed.
    thaw([...frozen]);
    if (worker && workerAlive()) {
      worker.child.kill('SIGKILL');
      await worker.exited;
    }
    await db?.destroy().catch(() => undefined);
    await client?.connection.close().catch(() => undefined);
    await sim?.close();
    await postgres?.stop().catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  });

  async function expectTrueWarehouse(summary: RunSummary) {
    const unfinished = await sql`
      select scope, status, error from sync_run_scopes where run_id = ${summary.runId}::uuid and status <> 'succeeded'`.execute(
      db,
    );
    const warnings = worker
      .output()
      .split('\n')
      .filter((l) => /"level":[456]0/.test(l));
    expect(summary.status, `${summary.error}\n${JSON.stringify(unfinished.rows)}\n${warnings.join('\n')}`).toBe(
      'succeeded',
    );
    expect(await warehousePlotFacts(db)).toEqual(simulatorPlotFacts(sim));
    const { rows } = await sql<{ plots: number; current: number; distinct: number }>`
      select (select count(*)::int from plots where deleted_at is null) as plots,
             (select count(*)::int from plot_history where valid_to is null) as current,
             (select count(distinct plot_id)::int from plot_history where valid_to is null) as distinct`.execute(db);
    expect(rows[0]!.current).toBe(rows[0]!.distinct);
    expect(rows[0]!.current).toBe(rows[0]!.plots);
  }

  it('drops the connection of a backend frozen mid-statement at the client bound, and finishes the refresh true across it and a frozen postmaster', async () => {
    // Two seconds a request: the refresh is still reading while the freezes happen.
    sim.control.setFaults({ latency: 1, latencyMs: [2_000_000, 2_000_000] });
    const started = await startRefresh(client, taskQueue, { supplierConcurrency: 4 });
    await waitUntil('a first page written', async () => (await pagesWritten(started.runId)) >= 1, 60_000, 100);

    // 1. One backend of the worker's while it runs a statement (a COPY when one is caught). Frozen, it
    // still shows as active, and the worker waits for its answer: the client's bound (7 s) must drop the
    // connection while the backend is still frozen. A backend caught as it finished is let go, and another taken.
    let dropped = false;
    for (let attempt = 0; attempt < 5 && !dropped; attempt++) {
      let victim: { pid: number; port: number } | undefined;
      await waitUntil(
        "a backend of the worker's running a statement",
        async () => {
          const rows = await adminQuery<{ pid: number; port: number }>(`
            select pid, client_port as port from pg_stat_activity
            where application_name = 'ddsync-worker' and state = 'active' and backend_type = 'client backend'
            order by (query ilike 'copy%') desc, query_start limit 1`);
          victim = rows[0];
          return victim !== undefined;
        },
        60_000,
        20,
      );
      freeze([victim!.pid]);
      const [still] = await adminQuery<{ state: string }>(
        `select state from pg_stat_activity where pid = ${victim!.pid}`,
      );
      if (still?.state === 'active' && (await connectionState(victim!.port)) === '01') {
        dropped = await waitUntil(
          'the worker drops the frozen connection',
          async () => (await connectionState(victim!.port)) !== '01',
          20_000,
          100,
        ).then(
          () => true,
          () => false,
        );
        // Still frozen when the worker let go: the bound, not the thaw, ended the wait.
        expect(frozen.has(victim!.pid)).toBe(true);
        // A backend frozen just after it answered leaves its connection idle, and the pool closes an
        // idle connection after 10 s (a FIN, no error): that is not the bound. The bound is said.
        if (dropped)
          dropped = await waitUntil(
            'the worker says the statement was not answered',
            async () => boundSaid(),
            10_000,
            100,
          ).then(
            () => true,
            () => false,
          );
      }
      thaw([victim!.pid]);
    }
    expect(dropped).toBe(true);
    expect(workerAlive()).toBe(true);

    // 2. The postmaster alone: sessions that exist go on, a new connection is never answered.
    const postmaster = await postmasterPid();
    freeze([postmaster]);
    await hold(FREEZE_MS);
    expect(workerAlive()).toBe(true);
    thaw([postmaster]);
    sim.control.setFaults({ latency: 1, latencyMs: [600_000, 600_000] });

    const summary = await started.handle.result();
    expect(worker.child.pid).toBe(workerPid);
    expect(workerAlive()).toBe(true);
    await expectTrueWarehouse(summary);
    // The dropped statement is said (the warehouse answered meanwhile: one connection failed, not an
    // outage); whatever outage the postmaster's freeze opened was said with its end.
    expect(boundSaid()).toBe(true);
    expect(said('the warehouse is available again').length).toBe(said('the warehouse is unavailable').length);
  }, 300_000);

  it('carries a refresh and a bulk submission through every process of the cluster frozen, said within a minute', async () => {
    let i = 0;
    for (const { plot } of [...sim.control.plots()])
      if (i++ % 4 === 0) sim.control.editPlot(plot['id'] as string, { name: `renamed while frozen ${i}` });
    const before = said('the warehouse is unavailable').length;
    const supplier = sim.control.suppliers()[0]!.id;
    const keys = Array.from({ length: 40 }, (_, k) => `frozen-${taskQueue}-${k}`);
    const submit = runDdsync(['submit', writeShipments(keys.map((k) => shipmentRow(k, supplier))), '--json'], env);
    expect(await submit.exited, submit.output()).toBe(0);
    const { batchId, workflowId } = lastJsonLine<{ batchId: string; workflowId: string }>(submit.output());
    await waitUntil(
      'transactions created',
      async () => Object.keys(sim.control.transactionCountsByCustomId()).filter((k) => keys.includes(k)).length >= 3,
      180_000,
      100,
    );
    // Two seconds a request: the refresh is still reading when the cluster freezes.
    sim.control.setFaults({ latency: 1, latencyMs: [2_000_000, 2_000_000] });
    const started = await startRefresh(client, taskQueue, { supplierConcurrency: 4 });
    await waitUntil('a first page written', async () => (await pagesWritten(started.runId)) >= 1, 90_000, 100);

    const pids = await clusterPids();
    expect(pids.length).toBeGreaterThan(3);
    freeze(pids);
    const frozenAt = Date.now();
    try {
      // The metrics say so within a minute (the worker's own endpoint, not the warehouse, answers them).
      await waitUntil(
        'the metrics say the warehouse is down',
        async () =>
          sample(await (await fetch(metricsUrl)).text(), 'ddsync_dependency_up', { dependency: 'warehouse' }) === 0,
        60_000,
        250,
      );
      expect(Date.now() - frozenAt).toBeLessThan(60_000);
      // `ddsync status` cannot read a frozen warehouse: critical (2), in one sentence, without hanging.
      const status = runDdsync(['status'], env);
      expect(await status.exited, status.output()).toBe(2);
      expect(status.output()).toMatch(
        /cannot reach the warehouse at 127\.0\.0\.1:\d+\/ddsync: no connection within 10 s/,
      );
      const left = FREEZE_MS + 10_000 - (Date.now() - frozenAt);
      if (left > 0) await hold(left);
      expect(workerAlive()).toBe(true);
    } finally {
      thaw(pids);
      sim.control.setFaults({ latency: 1, latencyMs: [600_000, 600_000] });
    }

    const [summary] = await Promise.all([started.handle.result(), client.workflow.getHandle(workflowId).result()]);
    expect(worker.child.pid).toBe(workerPid);
    expect(workerAlive()).toBe(true);
    await expectTrueWarehouse(summary);
    const counts = sim.control.transactionCountsByCustomId();
    expect(keys.filter((k) => counts[k] !== 1)).toEqual([]);
    const { rows } = await sql<{ state: string; n: number }>`
      select state, count(*)::int as n from transactions where batch_id = ${batchId}::uuid group by state`.execute(db);
    expect(Object.fromEntries(rows.map((r) => [r.state, r.n]))).toEqual({ available: keys.length });
    // One line when the freeze began and one when it ended (a reminder at most), not one per statement.
    const down = said('the warehouse is unavailable').length - before;
    expect(down).toBeGreaterThanOrEqual(1);
    expect(down, said('the warehouse').join('\n')).toBeLessThanOrEqual(2);
    expect(said('the warehouse is available again').length).toBe(said('the warehouse is unavailable').length);
    expect(sample(await (await fetch(metricsUrl)).text(), 'ddsync_dependency_up', { dependency: 'warehouse' })).toBe(1);
  }, 400_000);
});
