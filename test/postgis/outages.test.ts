import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { sql } from 'kysely';
import { Client, Connection } from '@temporalio/client';
import pg from 'pg';
import { Webhook } from 'svix';
import { startEmbeddedPostgres, type RunningPostgres } from '../../infra/embedded-postgres.ts';
import { startTemporalDevServer, type RunningDevServer } from '../../infra/temporal-dev-server.ts';
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

/**
 * Issue 20: a worker outlives its dependencies. Everything is real and owned by this file, so it may be
 * stopped: an embedded PostgreSQL halted and resumed on the same data (fast and immediate shutdown),
 * its sessions terminated by an administrator, made read-only, its connections exhausted by other
 * clients, a lock held past lock_timeout; a Temporal dev server stopped and started on the same
 * database file. The worker is a real `ddsync worker` process. What is asserted is read from the
 * warehouse and the simulator's own records: the refresh ends as it would have without the outage
 * (the warehouse equals the service, each plot once, the run succeeded), every key is sent once, and
 * the worker process is still alive. Log lines are only counted, never the proof.
 */

/** Every request takes a second of real time, so a refresh is still under way when an outage begins. */
const SIMULATOR = {
  seed: 2020,
  suppliers: 4,
  plots: 5000,
  timeScale: 0.001,
  transactionErrorRatio: 0,
  faults: { latency: 1, latencyMs: [700_000, 700_000] as [number, number] },
};

describe('a worker that outlives the warehouse and Temporal going away', () => {
  let dir: string;
  let postgres: RunningPostgres;
  let temporal: RunningDevServer;
  let temporalPort: number;
  let temporalDb: string;
  let sim: Simulator;
  let db: Warehouse;
  let admin: pg.Client;
  let client: Client;
  let env: NodeJS.ProcessEnv;
  let worker: RunningCommand;
  let metricsUrl: string;
  const taskQueue = `outages-${Math.random().toString(36).slice(2, 8)}`;

  /** A Temporal client that survives the server's restarts (grpc reconnects by itself). */
  async function connectClient(): Promise<Client> {
    const connection = await Connection.connect({ address: temporal.address });
    return new Client({ connection, namespace: temporal.namespace });
  }

  /** A superuser session on the `postgres` database, for what an administrator does. */
  async function adminSession(): Promise<pg.Client> {
    const session = new pg.Client({ connectionString: postgres.urlFor('postgres') });
    session.on('error', () => undefined);
    await session.connect();
    return session;
  }

  /** Pages of the run written so far (sync_pages rows live while it runs), or undefined while the warehouse is away. */
  async function pagesWritten(runId: string): Promise<number | undefined> {
    return sql<{ n: number }>`select count(*)::int as n from sync_pages where run_id = ${runId}::uuid`
      .execute(db)
      .then((r) => r.rows[0]!.n)
      .catch(() => undefined);
  }

  async function runStatus(runId: string): Promise<string | undefined> {
    const { rows } = await sql<{ status: string }>`select status from sync_runs where id = ${runId}::uuid`.execute(db);
    return rows[0]?.status;
  }

  const workerAlive = () => isRunning(worker);
  /** The worker's log lines whose message starts with `prefix`. */
  const said = (prefix: string) => logMessages(worker, prefix);

  beforeAll(async () => {
    const root = resolve('.ddsync/test');
    mkdirSync(root, { recursive: true });
    dir = await mkdtemp(resolve(root, 'outages-'));
    temporalPort = await freePort();
    temporalDb = resolve(dir, 'temporal.db');
    [postgres, temporal, sim] = await Promise.all([
      // Few connections, so "exhausted by other clients" is a few dozen sessions away.
      startEmbeddedPostgres({ dataDir: resolve(dir, 'postgres'), persistent: false, settings: ['max_connections=30'] }),
      startTemporalDevServer({ port: temporalPort, dbFilename: temporalDb, startTimeoutMs: 60_000 }),
      startSimulator({ port: 0, ...SIMULATOR }),
    ]);
    db = openWarehouse(postgres.url, 3, 'outages-test');
    await migrateToLatest(db);
    admin = await adminSession();
    client = await connectClient();
    env = ddsyncEnv(
      {
        upstreamUrl: sim.url,
        databaseUrl: postgres.url,
        taskQueue,
        temporal: { address: temporal.address, namespace: temporal.namespace },
      },
      {
        DDSYNC_PG_POOL_SIZE: '6',
        DDSYNC_WORKER_ACTIVITIES: '6',
        DDSYNC_PDF_ARCHIVE_DIR: resolve(dir, 'archive'),
        ...fastSubmission('3m'),
      },
    );
    const metricsPort = await freePort();
    metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
    worker = runDdsync(['worker'], { ...env, DDSYNC_METRICS_ADDRESS: `127.0.0.1:${metricsPort}` });
    await worker.waitFor(/worker ready/, 90_000);
  }, 180_000);

  afterAll(async () => {
    if (worker && workerAlive()) {
      worker.child.kill('SIGKILL');
      await worker.exited;
    }
    await admin?.end().catch(() => undefined);
    await db?.destroy().catch(() => undefined);
    await client?.connection.close().catch(() => undefined);
    await sim?.close();
    await Promise.allSettled([temporal?.stop(), postgres?.stop()]);
    await rm(dir, { recursive: true, force: true });
  });

  /** The webhook `main` made at the service and in the warehouse, and a `ddsync receiver` for it on a port of its own. */
  async function receiverSetup() {
    const url = 'https://hooks.ddsync.test/hooks/main';
    const receiverPort = await freePort();
    const receiverEnv = {
      ...env,
      DDSYNC_WEBHOOKS: JSON.stringify([{ name: 'main', url }]),
      DDSYNC_RECEIVER_PORT: String(receiverPort),
    };
    const reconcile = runDdsync(['webhooks', 'reconcile'], receiverEnv);
    expect(await reconcile.exited, reconcile.output()).toBe(0);
    const secret = sim.control.webhooks().find((w) => w['url'] === url)!.secret;
    const startReceiver = async () => {
      const receiver = runDdsync(['receiver'], receiverEnv);
      await receiver.waitFor(/webhook receiver listening/, 60_000);
      return receiver;
    };
    return { receiverPort, secret, startReceiver };
  }

  /** Each plot once, one current history row each, and the warehouse equal to the service. */
  async function expectTrueWarehouse(summary: RunSummary) {
    // On failure: the parts that did not succeed, and what the worker warned of.
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
    expect(await runStatus(summary.runId)).toBe('succeeded');
    expect(await warehousePlotFacts(db)).toEqual(simulatorPlotFacts(sim));
    const { rows } = await sql<{ plots: number; current: number; distinct: number }>`
      select (select count(*)::int from plots where deleted_at is null) as plots,
             (select count(*)::int from plot_history where valid_to is null) as current,
             (select count(distinct plot_id)::int from plot_history where valid_to is null) as distinct`.execute(db);
    expect(rows[0]!.current).toBe(rows[0]!.distinct);
    expect(rows[0]!.current).toBe(rows[0]!.plots);
  }

  it('finishes a refresh true to the service across restarts (fast, immediate) and terminated sessions, and stays up', async () => {
    const started = await startRefresh(client, taskQueue, { supplierConcurrency: 4 });
    await waitUntil('a first page written', async () => ((await pagesWritten(started.runId)) ?? 0) >= 1, 60_000, 100);

    // 1. A restart, as pg_ctl stop -m fast does it: every session ended, mid-page or mid-COPY.
    await postgres.halt('fast');
    await new Promise((r) => setTimeout(r, 3_000));
    expect(workerAlive()).toBe(true);
    // Its metrics still answer, and say the warehouse is away (its figures left out, not made up).
    const scrape = async () => (await fetch(metricsUrl)).text();
    await waitUntil('the metrics say the warehouse is down', async () => {
      const text = await scrape();
      return sample(text, 'ddsync_dependency_up', { dependency: 'warehouse' }) === 0;
    });
    const during = await scrape();
    expect(sample(during, 'ddsync_warehouse_figures_up')).toBe(0);
    expect(sample(during, 'ddsync_refresh_runs_total', { outcome: 'succeeded' })).toBeUndefined();
    await postgres.resume();

    // 2. An administrator ends every session of ddsync's worker.
    await admin.end();
    admin = await adminSession();
    await admin.query(
      "select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'ddsync-worker'",
    );

    // 3. A crash-like stop (immediate: no clean shutdown, recovery at the next start).
    const before = await pagesWritten(started.runId);
    await waitUntil(
      'more pages written',
      async () => ((await pagesWritten(started.runId)) ?? 0) > (before ?? 0),
      60_000,
      100,
    );
    await admin.end().catch(() => undefined);
    await postgres.halt('immediate');
    await new Promise((r) => setTimeout(r, 2_000));
    await postgres.resume();
    admin = await adminSession();

    const summary = await started.handle.result();
    expect(workerAlive()).toBe(true);
    await expectTrueWarehouse(summary);
    // Told once per outage (each of the three is at most one line, and each has its end), not per failed statement.
    const down = said('the warehouse is unavailable');
    expect(down.length).toBeGreaterThanOrEqual(1);
    expect(down.length).toBeLessThanOrEqual(3);
    expect(said('the warehouse is available again')).toHaveLength(down.length);
    expect(worker.output()).not.toMatch(/Unhandled 'error' event/);
    const after = await (await fetch(metricsUrl)).text();
    expect(sample(after, 'ddsync_dependency_up', { dependency: 'warehouse' })).toBe(1);
    expect(sample(after, 'ddsync_warehouse_figures_up')).toBe(1);
  }, 240_000);

  it('waits out a read-only warehouse, exhausted connections and a lock held past lock_timeout', async () => {
    // The next refresh has something to write: a fifth of the plots change at the service.
    let i = 0;
    for (const { plot } of [...sim.control.plots()])
      if (i++ % 5 === 0) sim.control.editPlot(plot['id'] as string, { name: `renamed during outages ${i}` });
    await admin.query(`alter database ddsync set lock_timeout = '500ms'`);
    // Sessions that exist keep their settings: new ones get the timeout.
    await admin.query(
      "select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'ddsync-worker'",
    );

    const started = await startRefresh(client, taskQueue, { supplierConcurrency: 4 });
    await waitUntil('the run started', async () => (await runStatus(started.runId)) === 'running', 60_000, 100);

    // A failover's standby, or an operator making the warehouse read-only for a while.
    await admin.query('alter system set default_transaction_read_only = on');
    await admin.query('select pg_reload_conf()');
    await new Promise((r) => setTimeout(r, 2_500));
    await admin.query('alter system reset default_transaction_read_only');
    await admin.query('select pg_reload_conf()');

    // Other clients take every connection there is.
    const hogs: pg.Client[] = [];
    for (;;) {
      const hog = new pg.Client({ connectionString: postgres.urlFor('ddsync') });
      hog.on('error', () => undefined);
      try {
        await hog.connect();
        hogs.push(hog);
      } catch {
        break;
      }
    }
    await new Promise((r) => setTimeout(r, 2_500));
    await Promise.allSettled(hogs.map((h) => h.end()));

    // An analyst holds a lock on plots past ddsync's lock_timeout (writes wait for it, then time out).
    const analyst = new pg.Client({ connectionString: postgres.urlFor('ddsync') });
    analyst.on('error', () => undefined);
    await analyst.connect();
    await analyst.query('begin');
    // The analyst waits as long as it takes for the lock (the database's 500 ms lock_timeout is ddsync's).
    await analyst.query('set local lock_timeout = 0');
    await analyst.query('lock table plots in exclusive mode');
    await new Promise((r) => setTimeout(r, 3_000));
    await analyst.query('commit');
    await analyst.end();

    const summary = await started.handle.result();
    expect(workerAlive()).toBe(true);
    await expectTrueWarehouse(summary);
    await admin.query('alter database ddsync reset lock_timeout');
  }, 240_000);

  it('carries a bulk submission through a warehouse restart: every key sent once, every transaction final', async () => {
    const supplier = sim.control.suppliers()[0]!.id;
    const keys = Array.from({ length: 60 }, (_, i) => `outage-${taskQueue}-${i}`);
    const submit = runDdsync(['submit', writeShipments(keys.map((k) => shipmentRow(k, supplier))), '--json'], env);
    expect(await submit.exited, submit.output()).toBe(0);
    const { batchId, workflowId } = lastJsonLine<{ batchId: string; workflowId: string }>(submit.output());
    await waitUntil(
      'some transactions created',
      async () => Object.keys(sim.control.transactionCountsByCustomId()).filter((k) => keys.includes(k)).length >= 5,
      60_000,
      100,
    );
    await postgres.halt('fast');
    await new Promise((r) => setTimeout(r, 3_000));
    await postgres.resume();
    await client.workflow.getHandle(workflowId).result();
    expect(workerAlive()).toBe(true);
    const counts = sim.control.transactionCountsByCustomId();
    expect(keys.filter((k) => counts[k] !== 1)).toEqual([]);
    const { rows } = await sql<{ state: string; n: number }>`
      select state, count(*)::int as n from transactions where batch_id = ${batchId}::uuid group by state`.execute(db);
    expect(Object.fromEntries(rows.map((r) => [r.state, r.n]))).toEqual({ available: keys.length });
  }, 240_000);

  it('reconnects to Temporal restarted on its database file, and `refresh --wait` says it lost it and carries on', async () => {
    // Two seconds a request: the refresh is still reading when Temporal goes.
    sim.control.setFaults({ latency: 1, latencyMs: [2_000_000, 2_000_000] });
    const follow = runDdsync(['refresh', '--wait'], env);
    await follow.waitFor(/started|following/, 60_000);
    await temporal.stop();
    // Longer than the client's own retries of a call (about 20 s): the follower must notice and say so.
    await new Promise((r) => setTimeout(r, 30_000));
    expect(workerAlive()).toBe(true);
    temporal = await startTemporalDevServer({ port: temporalPort, dbFilename: temporalDb, startTimeoutMs: 60_000 });
    expect(await follow.exited, follow.output()).toBe(0);
    expect(follow.output()).toMatch(/lost Temporal/);
    expect(follow.output()).toMatch(/succeeded/);
    expect(workerAlive()).toBe(true);
    // The worker took up its work again: a new refresh runs to its end on it.
    const started = await startRefresh(client, taskQueue, { supplierConcurrency: 4 });
    const summary = await started.handle.result();
    await expectTrueWarehouse(summary);
    expect(said('Temporal is unavailable')).toHaveLength(1);
  }, 240_000);

  it('stores every valid delivery once while the receiver is killed and restarted and the warehouse restarts under a burst', async () => {
    const { receiverPort, secret, startReceiver } = await receiverSetup();
    let receiver = await startReceiver();
    const receivers = [receiver];

    // The service's side: each message delivered until it is answered 2xx, as Svix retries.
    const svix = new Webhook(secret);
    const ids = Array.from({ length: 200 }, (_, i) => `msg_outage_${taskQueue}_${i}`);
    const answers: number[] = [];
    let accepted = 0;
    const deliver = async (msgId: string) => {
      const body = JSON.stringify({ event: 'transaction.updated', data: { id: `tx-${msgId}`, status: 'SUBMITTED' } });
      const deadline = Date.now() + 120_000;
      for (;;) {
        const when = new Date();
        const headers = {
          'content-type': 'application/json',
          'svix-id': msgId,
          'svix-timestamp': String(Math.floor(when.getTime() / 1000)),
          'svix-signature': svix.sign(msgId, when, body),
        };
        const status = await fetch(`http://127.0.0.1:${receiverPort}/hooks/main`, {
          method: 'POST',
          body,
          headers,
        }).then(
          (r) => r.status,
          () => 0,
        );
        answers.push(status);
        if (status >= 200 && status < 300) {
          accepted++;
          return;
        }
        if (Date.now() > deadline) throw new Error(`${msgId} never accepted (last answer ${status})`);
        await new Promise((r) => setTimeout(r, 200));
      }
    };
    let next = 0;
    const senders = Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < ids.length) await deliver(ids[next++]!);
      }),
    );
    // Killed mid-burst, as a machine dies, and started again on the same port.
    await waitUntil('50 deliveries accepted', () => accepted >= 50, 60_000, 10);
    receiver.child.kill('SIGKILL');
    await receiver.exited;
    receiver = await startReceiver();
    receivers.push(receiver);
    // The warehouse restarts while deliveries keep coming.
    await waitUntil('120 deliveries accepted', () => accepted >= 120, 60_000, 10);
    await postgres.halt('fast');
    await new Promise((r) => setTimeout(r, 2_000));
    await postgres.resume();
    await senders;

    expect(receiver.child.exitCode).toBeNull();
    const { rows } = await sql<{ msg_id: string; deliveries: number }>`
      select msg_id, deliveries from webhook_events where msg_id like ${`msg_outage_${taskQueue}_%`}`.execute(db);
    expect(rows.map((r) => r.msg_id).sort()).toEqual([...ids].sort());
    // While the warehouse was away the receiver refused with 503 (the sender delivers again), and said so once.
    expect(answers).toContain(503);
    const lines = receiver
      .output()
      .split('\n')
      .filter((l) => l.includes('the warehouse is unavailable'));
    expect(lines).toHaveLength(1);
    receiver.child.kill('SIGTERM');
    expect(await receiver.exited).toBe(0);
  }, 240_000);

  it('archives every completed survey PDF through a warehouse restart, each once', async () => {
    const completed = sim.control
      .surveyResponses()
      .filter((r) => r.status === 'COMPLETED')
      .map((r) => r.id);
    expect(completed.length).toBeGreaterThan(0);
    const add = runDdsync(['pdfs', 'add', ...completed], env);
    expect(await add.exited, add.output()).toBe(0);
    const archive = runDdsync(['pdfs', 'archive', '--wait', '--json'], env);
    await archive.waitFor(/archive|started|\{/, 30_000).catch(() => undefined);
    await postgres.halt('fast');
    await new Promise((r) => setTimeout(r, 2_000));
    await postgres.resume();
    expect(await archive.exited, archive.output()).toBe(0);
    expect(workerAlive()).toBe(true);
    const { rows } = await sql<{ state: string; n: number }>`
      select state, count(*)::int as n from survey_response_pdfs group by state`.execute(db);
    expect(Object.fromEntries(rows.map((r) => [r.state, r.n]))).toEqual({ archived: completed.length });
  }, 180_000);

  it('stops the receiver loudly when the warehouse cannot be used, answering 503 meanwhile', async () => {
    const { receiverPort, secret, startReceiver } = await receiverSetup();
    const receiver = await startReceiver();
    const otherTool = new pg.Client({ connectionString: postgres.url });
    await otherTool.connect();
    await otherTool.query('alter table webhook_events rename to webhook_events_moved');
    try {
      const msgId = `msg_fatal_${taskQueue}`;
      const body = JSON.stringify({ event: 'transaction.updated', data: { id: 'tx-fatal', status: 'SUBMITTED' } });
      const when = new Date();
      const answer = await fetch(`http://127.0.0.1:${receiverPort}/hooks/main`, {
        method: 'POST',
        body,
        headers: {
          'content-type': 'application/json',
          'svix-id': msgId,
          'svix-timestamp': String(Math.floor(when.getTime() / 1000)),
          'svix-signature': new Webhook(secret).sign(msgId, when, body),
        },
      });
      expect(answer.status).toBe(503);
      expect(await receiver.exited).toBe(1);
      expect(receiver.output()).toMatch(
        /ddsync receiver: the warehouse cannot be used: a table ddsync's migrations made is missing: another tool changed the warehouse's schema/,
      );
    } finally {
      await otherTool.query('alter table webhook_events_moved rename to webhook_events');
      await otherTool.end();
    }
  }, 120_000);

  // Last: it ends the worker.
  it('dies loudly on a schema another tool broke: one sentence, exit 1, and the run it was doing marked failed', async () => {
    sim.control.setFaults({ latency: 1, latencyMs: [700_000, 700_000] });
    let i = 0;
    for (const { plot } of [...sim.control.plots()])
      if (i++ % 3 === 0) sim.control.editPlot(plot['id'] as string, { name: `renamed before the break ${i}` });
    const started = await startRefresh(client, taskQueue, { supplierConcurrency: 4 });
    await waitUntil('the run started', async () => (await runStatus(started.runId)) === 'running', 60_000, 100);
    // Another tool drops a column ddsync writes.
    const otherTool = new pg.Client({ connectionString: postgres.url });
    await otherTool.connect();
    await otherTool.query('alter table plots drop column description cascade');
    await otherTool.end();
    const code = await worker.exited;
    expect(code).toBe(1);
    const stderrLine = worker
      .output()
      .split('\n')
      .find((l) => l.startsWith('ddsync worker: '));
    expect(stderrLine).toMatch(
      /the warehouse cannot be used: a column ddsync's migrations made is missing: another tool changed the warehouse's schema/,
    );
    const { rows } = await sql<{ status: string; error: string | null }>`
      select status, error from sync_runs where id = ${started.runId}::uuid`.execute(db);
    expect(rows[0]!.status).toBe('failed');
    expect(rows[0]!.error).toMatch(/the warehouse cannot be used: .*another tool changed the warehouse's schema/);
  }, 120_000);
});
