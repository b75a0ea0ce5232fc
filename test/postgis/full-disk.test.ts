import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { mkdirSync, renameSync, symlinkSync } from 'node:fs';
import { resolve } from 'node:path';
import { sql } from 'kysely';
import { Client, Connection } from '@temporalio/client';
import pg from 'pg';
import { startEmbeddedPostgres, type RunningPostgres } from '../../infra/embedded-postgres.ts';
import { freePort } from '../../infra/ports.ts';
import { startSimulator, type Simulator } from '../../simulator/index.ts';
import { openWarehouse, type Warehouse } from '../../warehouse/database.ts';
import { migrateToLatest } from '../../warehouse/migrate.ts';
import { startRefresh } from '../../cli/refresh-runner.ts';
import {
  runDdsync,
  lastJsonLine,
  type RunningCommand,
  isRunning,
  logMessages,
  ddsyncEnv,
} from '../support/processes.ts';
import { simulatorPlotFacts, warehousePlotFacts } from '../support/warehouse-facts.ts';
import { waitUntil } from '../support/wait.ts';
import { sample } from '../support/exposition.ts';
import { embeddedStack } from '../support/stack.ts';
import { mountTmpfs, type Tmpfs } from '../support/tmpfs.ts';

/**
 * Issue 34, part 3: a full disk, for real. A cluster of its own whose WAL (pg_wal) is on one tmpfs and
 * whose database `ddsync` lives in a tablespace on another (a data disk and a WAL disk, as production
 * often has them). Each is filled mid-refresh by a file until the kernel says ENOSPC, then grown with
 * `mount -o remount`:
 * - the data disk full: reads work, every write of a page fails with 53100; the worker waits, `ddsync
 *   status` is critical (its write probe is refused) and the worker's metrics say the warehouse is down;
 * - the WAL disk full: PostgreSQL panics and stops; status cannot connect and says so, critical.
 * Either way, once the disk is grown (and the server started again), the refresh ends `succeeded` with
 * the warehouse equal to the service, and the worker process never restarted. Needs root, to mount.
 */

const SIMULATOR = {
  seed: 3434,
  suppliers: 4,
  plots: 4000,
  timeScale: 0.001,
  transactionErrorRatio: 0,
  // Every request takes 0.7 s of real time, so the refresh is still writing when the disk fills.
  faults: { latency: 1, latencyMs: [700_000, 700_000] as [number, number] },
};

interface StatusJson {
  level: string;
  exitCode: number;
  checks: Array<{ check: string; level: string; message: string; reason: string | null }>;
}

describe('a refresh that outlives a full disk', () => {
  let dir: string;
  let postgres: RunningPostgres;
  let walDisk: Tmpfs | undefined;
  let dataDisk: Tmpfs | undefined;
  let sim: Simulator;
  let db: Warehouse;
  let client: Client;
  let env: NodeJS.ProcessEnv;
  let worker: RunningCommand;
  let workerPid: number;
  let metricsUrl: string;
  /** The server's log lines: the proof that it was the WAL disk that stopped it. */
  const serverLog: string[] = [];
  const taskQueue = `full-disk-${Math.random().toString(36).slice(2, 8)}`;

  const workerAlive = () => isRunning(worker);
  const said = (prefix: string) => logMessages(worker, prefix);

  async function status(): Promise<StatusJson> {
    const run = runDdsync(['status', '--json'], env);
    const code = await run.exited;
    const json = lastJsonLine<StatusJson>(run.output());
    expect(json.exitCode, run.output()).toBe(code);
    return json;
  }

  async function warehouseUp(): Promise<number | undefined> {
    const text = await (await fetch(metricsUrl)).text();
    return sample(text, 'ddsync_dependency_up', { dependency: 'warehouse' });
  }

  /** Whether the worker's last read of the warehouse's figures succeeded (reads work on a full data disk). */
  async function figuresUp(): Promise<number | undefined> {
    return sample(await (await fetch(metricsUrl)).text(), 'ddsync_warehouse_figures_up');
  }

  async function pagesWritten(runId: string): Promise<number> {
    return sql<{ n: number }>`select count(*)::int as n from sync_pages where run_id = ${runId}::uuid`
      .execute(db)
      .then((r) => r.rows[0]!.n)
      .catch(() => 0);
  }

  /** Can a new session be made? false once nothing listens (the server stopped). */
  async function serverAnswers(): Promise<boolean> {
    const probe = new pg.Client({ connectionString: postgres.urlFor('postgres'), connectionTimeoutMillis: 2_000 });
    probe.on('error', () => undefined);
    try {
      await probe.connect();
      return true;
    } catch (error) {
      return (error as { code?: string }).code !== 'ECONNREFUSED';
    } finally {
      await probe.end().catch(() => undefined);
    }
  }

  async function expectTrueWarehouse(runId: string, result: { status: string; error?: string | null }) {
    const unfinished = await sql`
      select scope, status, error from sync_run_scopes where run_id = ${runId}::uuid and status <> 'succeeded'`.execute(
      db,
    );
    expect(result.status, `${result.error}\n${JSON.stringify(unfinished.rows)}`).toBe('succeeded');
    expect(await warehousePlotFacts(db)).toEqual(simulatorPlotFacts(sim));
  }

  beforeAll(async () => {
    const root = resolve('.ddsync/test');
    mkdirSync(root, { recursive: true });
    dir = await mkdtemp(resolve(root, 'full-disk-'));
    [postgres, sim] = await Promise.all([
      // Checkpoints often enough that the WAL disk holds a bounded number of segments.
      startEmbeddedPostgres({
        dataDir: resolve(dir, 'postgres'),
        persistent: false,
        settings: ['max_wal_size=96MB', 'min_wal_size=32MB'],
        onLog: (line) => serverLog.push(line),
      }),
      startSimulator({ port: 0, ...SIMULATOR }),
    ]);
    // The WAL moves to a disk of its own (what `initdb --waldir` does: pg_wal a link to it).
    await postgres.halt('fast');
    walDisk = mountTmpfs(resolve(dir, 'wal-disk'), '256m');
    const wal = resolve(walDisk.dir, 'pg_wal');
    execFileSync('cp', ['-a', resolve(postgres.dataDir, 'pg_wal'), wal]);
    renameSync(resolve(postgres.dataDir, 'pg_wal'), resolve(dir, 'pg_wal.before'));
    symlinkSync(wal, resolve(postgres.dataDir, 'pg_wal'));
    await postgres.resume();
    // The database `ddsync` moves to a data disk of its own (its tables, indexes, catalogs, temporary tables).
    dataDisk = mountTmpfs(resolve(dir, 'data-disk'), '256m');
    const location = resolve(dataDisk.dir, 'tablespace');
    mkdirSync(location);
    execFileSync('chown', ['postgres:postgres', location]);
    const admin = new pg.Client({ connectionString: postgres.urlFor('postgres') });
    await admin.connect();
    try {
      await admin.query(`create tablespace ddsync_data location '${location}'`);
      await admin.query('alter database ddsync set tablespace ddsync_data');
    } finally {
      await admin.end();
    }
    db = openWarehouse(postgres.url, 2, 'full-disk-test');
    await migrateToLatest(db);
    const connection = await Connection.connect({ address: embeddedStack().temporalAddress });
    client = new Client({ connection, namespace: embeddedStack().temporalNamespace });
    env = ddsyncEnv(
      { upstreamUrl: sim.url, databaseUrl: postgres.url, taskQueue },
      {
        DDSYNC_PG_POOL_SIZE: '6',
        DDSYNC_WORKER_ACTIVITIES: '6',
        DDSYNC_PDF_ARCHIVE_DIR: resolve(dir, 'archive'),
      },
    );
    const metricsPort = await freePort();
    metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
    worker = runDdsync(['worker'], { ...env, DDSYNC_METRICS_ADDRESS: `127.0.0.1:${metricsPort}` });
    await worker.waitFor(/worker ready/, 90_000);
    workerPid = worker.child.pid!;
  }, 180_000);

  afterAll(async () => {
    if (worker && workerAlive()) {
      worker.child.kill('SIGKILL');
      await worker.exited;
    }
    await db?.destroy().catch(() => undefined);
    await client?.connection.close().catch(() => undefined);
    await sim?.close();
    // Whatever happened, the disks are given room, the server stopped, and both unmounted.
    for (const disk of [dataDisk, walDisk]) disk?.empty();
    await postgres?.stop().catch(() => undefined);
    for (const disk of [dataDisk, walDisk]) disk?.unmount();
    await rm(dir, { recursive: true, force: true });
  });

  it('waits while the data disk is full (status critical, the metric down), and ends true once it is grown', async () => {
    const started = await startRefresh(client, taskQueue, { supplierConcurrency: 4 });
    await waitUntil('a first page written', async () => (await pagesWritten(started.runId)) >= 1, 60_000, 100);
    dataDisk!.fill();

    // The worker meets it on its next write: it says so once, and its metrics say the warehouse is down.
    await waitUntil(
      'the worker says the disk is full',
      () => said('the warehouse is unavailable: the server is out of disk space').length > 0,
      60_000,
      100,
    );
    await waitUntil('the metrics say the warehouse is down', async () => (await warehouseUp()) === 0, 30_000, 200);
    // Every read still works, so only the write probe tells: critical, with the server's words.
    const during = await status();
    expect(during.level).toBe('critical');
    expect(during.exitCode).toBe(2);
    const check = during.checks.find((c) => c.check === 'warehouse');
    expect(check?.level).toBe('critical');
    expect(check?.message).toMatch(
      /^the warehouse cannot write: out of disk space in tablespace ddsync_data \(\/.+\/data-disk\/tablespace\) \(53100: could not extend file .*No space left on device\)$/,
    );
    // The refresh's own check still reads as it is (the run is running, nothing failed).
    expect(during.checks.map((c) => c.check)).toContain('refresh');
    expect(await warehouseUp()).toBe(0);
    // The disk stays full 15 s more (the outage's length is the scenario): activities wait for a write to
    // succeed, not for a read, so they do not run again, re-reading their pages from the service, meanwhile.
    await new Promise((r) => setTimeout(r, 15_000));
    expect(await warehouseUp()).toBe(0);
    // Down while its figures are still read: what DdsyncWarehouseRefusesWrites (deploy/prometheus) alerts on.
    expect(await figuresUp()).toBe(1);

    dataDisk!.grow('4g');
    const result = await started.handle.result();
    expect(workerAlive()).toBe(true);
    expect(worker.child.pid).toBe(workerPid);
    await expectTrueWarehouse(started.runId, result);
    const back = said('the warehouse is available again');
    expect(back.length).toBeGreaterThanOrEqual(1);
    // Each activity in flight failed once, then waited (6 in 26 s); a read-only probe ended every wait at
    // once, so pages ran again and again (63 failed attempts in 24 s).
    const attempts = back.map((line) => Number(/; (\d+) failed attempts?/.exec(line)?.[1] ?? 0));
    expect(Math.max(...attempts), back.join('\n')).toBeLessThanOrEqual(12);
    await waitUntil('the metrics say the warehouse is up', async () => (await warehouseUp()) === 1, 30_000, 200);
    const after = await status();
    expect(after.checks.filter((c) => c.level === 'critical')).toEqual([]);
    expect(after.checks.find((c) => c.check === 'warehouse')).toBeUndefined();
  }, 300_000);

  it('starts again after PostgreSQL stopped on a full WAL disk, and the refresh ends true', async () => {
    // Something to write: a fifth of the plots change at the service.
    let i = 0;
    for (const { plot } of [...sim.control.plots()])
      if (i++ % 5 === 0) sim.control.editPlot(plot['id'] as string, { name: `renamed before the WAL filled ${i}` });
    const started = await startRefresh(client, taskQueue, { supplierConcurrency: 4 });
    await waitUntil('a first page written', async () => (await pagesWritten(started.runId)) >= 1, 60_000, 100);
    walDisk!.fill();
    // The next WAL segment cannot be made: PostgreSQL panics, its recovery cannot write either, and it stops.
    const admin = new pg.Client({ connectionString: postgres.urlFor('postgres') });
    admin.on('error', () => undefined);
    await admin.connect();
    await admin.query('select pg_switch_wal()').catch(() => undefined);
    await admin.query('create table if not exists wal_filler as select 1 as x').catch(() => undefined);
    await admin.end().catch(() => undefined);
    await waitUntil('the server stopped', async () => !(await serverAnswers()), 60_000, 250);
    expect(serverLog.join('')).toMatch(/PANIC: +could not write to file "pg_wal\/[^"]+": No space left on device/);

    const during = await status();
    expect(during.exitCode).toBe(2);
    const check = during.checks.find((c) => c.check === 'warehouse');
    expect(check?.level).toBe('critical');
    expect(check?.message).toMatch(
      /^cannot reach the warehouse at 127\.0\.0\.1:\d+\/ddsync: connection refused \(nothing listens there\): is its server running\? \(a PostgreSQL whose WAL disk filled stops itself/,
    );
    await waitUntil('the metrics say the warehouse is down', async () => (await warehouseUp()) === 0, 30_000, 200);
    // Gone altogether: no reads either (DdsyncDependencyDown's case, not DdsyncWarehouseRefusesWrites').
    await waitUntil('the figures unread', async () => (await figuresUp()) === 0, 30_000, 200);
    expect(workerAlive()).toBe(true);

    walDisk!.grow('4g');
    await postgres.resume();
    const result = await started.handle.result();
    expect(workerAlive()).toBe(true);
    expect(worker.child.pid).toBe(workerPid);
    await expectTrueWarehouse(started.runId, result);
    const after = await status();
    expect(after.checks.filter((c) => c.level === 'critical')).toEqual([]);
  }, 300_000);
});
