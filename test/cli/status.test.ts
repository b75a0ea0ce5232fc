import { describe, it, expect, beforeAll, afterAll, afterEach } from 'vitest';
import { randomBytes, randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { Client, ScheduleNotFoundError } from '@temporalio/client';
import type { Worker } from '@temporalio/worker';
// Deprecated for workflow code, where it belongs to the SDK's internals; the one way to build a proto Duration here.
import { msToTs } from '@temporalio/common';
import { startSimulator, type Simulator } from '../../simulator/index.ts';
import { createUpstreamClient } from '../../upstream/index.ts';
import { openWarehouse, type Warehouse } from '../../warehouse/database.ts';
import { migrateToLatest } from '../../warehouse/migrate.ts';
import { createDdsyncWorker } from '../../infra/worker.ts';
import { freePort } from '../../infra/ports.ts';
import { PDF_ARCHIVE_SCHEDULE_ID, REFRESH_SCHEDULE_ID, WEBHOOKS_SCHEDULE_ID } from '../../infra/schedules.ts';
import { createLogger } from '../../platform/logger.ts';
import { refreshWarehouse, refreshWorkflowId } from '../../workflows/refresh-warehouse.ts';
import { createTestDatabase } from '../support/databases.ts';
import { embeddedStack } from '../support/stack.ts';
import { connectTemporal, workflowBundle, type TemporalForTest } from '../support/temporal.ts';
import { lastJsonLine, runDdsync } from '../support/processes.ts';
import { waitUntil } from '../support/wait.ts';

// `ddsync status` as an operator runs it, against the embedded stack: a warehouse refreshed by a real
// worker, ddsync's schedules applied by `ddsync schedule apply`. Its schedules have fixed ids, so this
// file works in a Temporal namespace of its own (the schedules tests use the shared one).

interface StatusJson {
  level: string;
  exitCode: number;
  checks: Array<{ check: string; level: string; message: string; reason: string | null; oldest: string | null }>;
  warehouse: Record<string, unknown>;
  temporal: Record<string, unknown>;
  thresholds: Record<string, unknown>;
}

describe('ddsync status', () => {
  let temporal: TemporalForTest;
  let client: Client;
  let namespace: string;
  let sim: Simulator;
  let db: Warehouse;
  let databaseUrl: string;
  let worker: Worker;
  let working: Promise<void>;
  let env: NodeJS.ProcessEnv;
  const taskQueue = `status-${randomUUID()}`;

  async function status(extra: NodeJS.ProcessEnv = {}, ...flags: string[]) {
    const run = runDdsync(['status', ...flags], { ...env, ...extra });
    const code = await run.exited;
    return { code, out: run.output() };
  }
  async function statusJson(extra: NodeJS.ProcessEnv = {}, ...flags: string[]) {
    const { code, out } = await status(extra, '--json', ...flags);
    const json = lastJsonLine<StatusJson>(out);
    const check = (name: string) => json.checks.find((c) => c.check === name);
    return { code, out, json, check };
  }

  beforeAll(async () => {
    temporal = await connectTemporal();
    namespace = `status_${randomBytes(4).toString('hex')}`;
    await temporal.client.workflowService.registerNamespace({
      namespace,
      workflowExecutionRetentionPeriod: msToTs('1 day'),
    });
    client = new Client({ connection: temporal.client.connection, namespace });
    // A namespace just registered is served once the frontend's namespace cache has it.
    await waitUntil(
      `namespace ${namespace} to be served`,
      async () => {
        try {
          for await (const _ of client.schedule.list()) break;
          return true;
        } catch {
          return false;
        }
      },
      60_000,
      250,
    );
    sim = await startSimulator({ port: 0, suppliers: 3, plots: 300 });
    databaseUrl = await createTestDatabase('status');
    db = openWarehouse(databaseUrl, 4);
    await migrateToLatest(db);
    const log = createLogger({ level: 'silent' });
    worker = await createDdsyncWorker({
      connection: temporal.workerConnection,
      namespace,
      taskQueue,
      deps: {
        db,
        api: createUpstreamClient({ baseUrl: sim.url, clientId: 'ddsync-demo', clientSecret: 'ddsync-demo-secret' }),
        log,
      },
      workflowBundle: await workflowBundle(),
      maxConcurrentActivities: 8,
    });
    working = worker.run();
    const runId = randomUUID();
    const refreshed = await client.workflow.execute(refreshWarehouse, {
      taskQueue,
      workflowId: refreshWorkflowId(runId),
      args: [{ runId }],
    });
    expect(refreshed.status).toBe('succeeded');
    env = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DATABASE_URL: databaseUrl,
      TEMPORAL_ADDRESS: embeddedStack().temporalAddress,
      TEMPORAL_NAMESPACE: namespace,
      TEMPORAL_TASK_QUEUE: taskQueue,
      // Weekly: no scheduled refresh or archive run starts while this file runs and changes what it checks.
      DDSYNC_REFRESH_INTERVAL: '7d',
      DDSYNC_PDF_INTERVAL: '7d',
      DDSYNC_LOG_FORMAT: 'json',
    };
    const applied = runDdsync(['schedule', 'apply'], env);
    expect(await applied.exited, applied.output()).toBe(0);
  }, 180_000);

  afterAll(async () => {
    for (const id of [REFRESH_SCHEDULE_ID, WEBHOOKS_SCHEDULE_ID, PDF_ARCHIVE_SCHEDULE_ID])
      await client?.schedule
        .getHandle(id)
        .delete()
        .catch((error: unknown) => {
          if (!(error instanceof ScheduleNotFoundError)) throw error;
        });
    if (worker?.getState() === 'RUNNING') worker.shutdown();
    await working;
    await db?.destroy();
    await sim?.close();
    await temporal?.close();
  });

  // What a test adds to the warehouse, removed after it.
  const cleanups: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const step of cleanups.splice(0).reverse()) await step();
  });

  it('is ok, exit code 0, for a fresh refresh with the schedules applied and a worker polling', async () => {
    const { code, out } = await status();
    expect(code, out).toBe(0);
    const lines = out.trim().split('\n');
    expect(lines[0]).toMatch(/^ddsync status: OK \(8 ok\) at \d{4}-\d\d-\d\dT/);
    expect(lines.slice(1, 9).map((l) => l.trim().split(/\s+/).slice(0, 2))).toEqual([
      ['ok', 'refresh'],
      ['ok', 'scans'],
      ['ok', 'deletions'],
      ['ok', 'transactions'],
      ['ok', 'webhooks'],
      ['ok', 'pdfs'],
      ['ok', 'schedules'],
      ['ok', 'workers'],
    ]);
    expect(out).toMatch(
      /ok +refresh +last successful refresh finished \d{4}-\d\d-\d\d \d\d:\d\d UTC \((\d+ s|\d+ min) ago\)/,
    );
    expect(out).toMatch(
      /ok +scans +the last read of every part succeeded: 3 suppliers, invitations, network listing, own plots/,
    );
    expect(out).toMatch(/ok +schedules +ddsync-refresh every 7d, next .*; ddsync-pdf-archive every 7d, next /);
    expect(out).toContain(`1 worker polls task queue ${taskQueue}`);
    expect(out).toMatch(
      /^read the warehouse 127\.0\.0\.1:\d+\/status_\w+ as \w+ with DATABASE_URL, in a read-only transaction$/m,
    );
    // The thresholds follow DDSYNC_REFRESH_INTERVAL.
    expect(out).toContain('thresholds: refresh 252h / 14d,');
  });

  it('--json: one object with the level, exit code, every check, where it read and the thresholds', async () => {
    const { code, json } = await statusJson();
    expect(code).toBe(0);
    expect(json).toMatchObject({
      level: 'ok',
      exitCode: 0,
      warehouse: { seen: true, via: 'DATABASE_URL', readOnly: true, inReaderRole: false },
      temporal: { seen: true, where: `${embeddedStack().temporalAddress} (namespace ${namespace})`, taskQueue },
      thresholds: { refreshWarning: '252h', refreshCritical: '14d', failuresInARow: 3, pdfOverdue: '14d' },
    });
    expect(json.checks.map((c) => [c.check, c.level])).toEqual(
      ['refresh', 'scans', 'deletions', 'transactions', 'webhooks', 'pdfs', 'schedules', 'workers'].map((c) => [
        c,
        'ok',
      ]),
    );
    for (const c of json.checks)
      expect(Object.keys(c).sort()).toEqual([
        'ageSeconds',
        'check',
        'failing',
        'failuresInARow',
        'items',
        'level',
        'message',
        'oldest',
        'reason',
        'since',
        'source',
      ]);
  });

  it('reads as a login of the read-only BI role when DDSYNC_READER_URL is set, with no DATABASE_URL at all', async () => {
    const login = `bi_${randomBytes(3).toString('hex')}`;
    await sql.raw(`create role ${login} login password 'bi-status-pw' in role ddsync_reader`).execute(db);
    const outsider = `${login}_x`;
    await sql.raw(`create role ${outsider} login password 'bi-status-pw'`).execute(db);
    cleanups.push(() => sql.raw(`drop role ${login}; drop role ${outsider}`).execute(db));
    const as = (role: string) => databaseUrl.replace(/\/\/[^@]+@/, `//${role}:bi-status-pw@`);
    const bi = await statusJson({ DATABASE_URL: undefined, DDSYNC_READER_URL: as(login) });
    expect(bi.code, bi.out).toBe(0);
    expect(bi.json.warehouse).toMatchObject({ seen: true, via: 'DDSYNC_READER_URL', role: login, inReaderRole: true });
    expect(bi.out).not.toContain('bi-status-pw');

    // A login outside ddsync_reader is told what to do, and critical: the warehouse could not be seen.
    const refused = await status({ DATABASE_URL: undefined, DDSYNC_READER_URL: as(outsider) });
    expect(refused.code, refused.out).toBe(2);
    expect(refused.out).toMatch(
      /critical +warehouse +the role of DDSYNC_READER_URL may not read the warehouse's status \(permission denied for view bi_sync_status\): make it a member of ddsync_reader/,
    );
    expect(refused.out).not.toContain('bi-status-pw');
  });

  it('judges the last success against the thresholds of the flags, else DDSYNC_STATUS_*, else the interval', async () => {
    const { rows } = await sql<{ id: string; finished_at: Date }>`
      select id, finished_at from sync_runs where status = 'succeeded' order by finished_at desc limit 1`.execute(db);
    const last = rows[0]!;
    await sql`update sync_runs set finished_at = now() - interval '13 hours' where id = ${last.id}::uuid`.execute(db);
    cleanups.push(() =>
      sql`update sync_runs set finished_at = ${last.finished_at} where id = ${last.id}::uuid`.execute(db),
    );

    // Weekly refreshes: 13 hours old is fresh.
    expect((await status()).code).toBe(0);
    const flagged = await statusJson({}, '--refresh-warning', '6h', '--refresh-critical', '12h');
    expect(flagged.code).toBe(2);
    expect(flagged.check('refresh')).toMatchObject({
      level: 'critical',
      reason: 'the last success is older than 12h (--refresh-critical)',
      oldest: last.id,
    });
    expect(flagged.check('refresh')!.message).toContain('(13 h ago)');
    const set = await statusJson({ DDSYNC_STATUS_REFRESH_WARNING: '12h', DDSYNC_STATUS_REFRESH_CRITICAL: '1d' });
    expect(set.code).toBe(1);
    expect(set.check('refresh')).toMatchObject({
      level: 'warning',
      reason: 'the last success is older than 12h (DDSYNC_STATUS_REFRESH_WARNING)',
    });
  });

  it('names a supplier whose reads keep failing (a warning, critical at 3 in a row) and a batch stuck waiting', async () => {
    const { rows } = await sql<{ id: string; name: string }>`
      select c.partner_business_id as id, b.name from business_connections c join businesses b on b.id = c.partner_business_id
      where c.role = 'supplier' and c.deleted_at is null order by c.partner_business_id limit 1`.execute(db);
    const supplier = rows[0]!;
    // Each ends now, so after the refresh of beforeAll: the newest reads of the supplier.
    const failedRead = async () => {
      const runId = randomUUID();
      await sql`insert into sync_runs (id, status, started_at, finished_at, error)
                values (${runId}::uuid, 'partial', now() - interval '1 minute', now(), '1 supplier failed')`.execute(
        db,
      );
      await sql`insert into sync_run_scopes (run_id, scope, kind, supplier_id, status, error, finished_at)
                values (${runId}::uuid, ${supplier.id}, 'supplier', ${supplier.id}, 'failed', 'GET plots page 1: the service answered 503', now())`.execute(
        db,
      );
    };
    cleanups.push(() => sql`delete from sync_runs where error = '1 supplier failed'`.execute(db));
    await failedRead();
    let s = await statusJson();
    expect(s.code).toBe(1);
    expect(s.check('scans')).toMatchObject({ level: 'warning', reason: 'a last read failed', oldest: supplier.id });
    expect(s.check('scans')!.message).toContain(`${supplier.name} (${supplier.id}), 1 in a row since`);
    expect(s.check('scans')!.message).toContain('GET plots page 1: the service answered 503');
    // A partial refresh is not a failed one: the refresh check stays ok.
    expect(s.check('refresh')!.level).toBe('ok');
    await failedRead();
    await failedRead();
    s = await statusJson();
    expect(s.code).toBe(2);
    expect(s.check('scans')).toMatchObject({
      level: 'critical',
      reason: 'a read failed 3 times in a row (3: DDSYNC_STATUS_FAILURES)',
    });
    expect((await statusJson({}, '--failures', '4')).check('scans')!.level).toBe('warning');

    const batch = randomUUID();
    await sql`insert into submission_batches (id, source, created_at) values (${batch}::uuid, 'stuck.ndjson', now() - interval '5 hours')`.execute(
      db,
    );
    cleanups.push(() => sql`delete from submission_batches where id = ${batch}::uuid`.execute(db));
    await sql`insert into transactions (key, batch_id, state, status, submitted_at) values
      ('stuck-1', ${batch}::uuid, 'submitted', 'SUBMITTED', now() - interval '4 hours'),
      ('stuck-2', ${batch}::uuid, 'available', 'AVAILABLE', now() - interval '4 hours')`.execute(db);
    s = await statusJson({}, '--failures', '4');
    expect(s.code).toBe(1);
    expect(s.check('transactions')).toMatchObject({ level: 'warning', oldest: batch });
    expect(s.check('transactions')!.message).toMatch(
      new RegExp(
        `^1 transaction without a final status in 1 batch; the oldest, of batch ${batch}, waiting since .* \\(4 h ago\\)$`,
      ),
    );
    await sql`update transactions set submitted_at = now() - interval '2 days' where key = 'stuck-1'`.execute(db);
    s = await statusJson({}, '--failures', '4');
    expect(s.code).toBe(2);
    expect(s.check('transactions')).toMatchObject({
      level: 'critical',
      reason: 'a transaction has waited longer than 1d (a day)',
    });
  });

  it('warns of a paused schedule and of drift from DDSYNC_WEBHOOKS; no worker on the task queue is critical', async () => {
    const refresh = client.schedule.getHandle(REFRESH_SCHEDULE_ID);
    await refresh.pause('paused by the status test');
    cleanups.push(() => refresh.unpause());
    let s = await statusJson();
    expect(s.code).toBe(1);
    expect(s.check('schedules')).toMatchObject({
      level: 'warning',
      reason: 'ddsync-refresh is paused (paused by the status test)',
    });

    // Configured now, never reconciled: the webhook is missing at the service as last pulled, and so is its schedule.
    s = await statusJson({
      DDSYNC_WEBHOOKS: JSON.stringify([{ name: 'main', url: 'https://hooks.example.com/hooks/main' }]),
    });
    expect(s.check('webhooks')).toMatchObject({ level: 'warning' });
    expect(s.check('webhooks')!.message).toContain(
      'as last pulled, DDSYNC_WEBHOOKS differs from the service: main is not registered',
    );
    expect(s.check('schedules')!.reason).toContain('ddsync-webhooks is missing (`ddsync schedule apply` creates it)');

    // Another task queue: no worker polls it, and the schedules start their workflows elsewhere.
    s = await statusJson({ TEMPORAL_TASK_QUEUE: `${taskQueue}-nobody` });
    expect(s.code).toBe(2);
    expect(s.check('workers')).toMatchObject({
      level: 'critical',
      message: `no worker has polled task queue ${taskQueue}-nobody lately`,
    });
    expect(s.check('schedules')!.reason).toContain('ddsync-refresh differs from the configuration (taskQueue)');
  });

  it('says in one line what it could not see: Temporal (a warning), the warehouse (critical); never a stack trace', async () => {
    const closed = await freePort();
    const noTemporal = await status({ TEMPORAL_ADDRESS: `127.0.0.1:${closed}` });
    expect(noTemporal.code, noTemporal.out).toBe(1);
    expect(noTemporal.out).toMatch(
      new RegExp(
        `^ {2}warning +temporal +cannot reach Temporal at 127\\.0\\.0\\.1:${closed} \\(namespace ${namespace}\\): .*\\(schedules and workers not checked\\)$`,
        'm',
      ),
    );
    // The warehouse's checks are still answered.
    expect(noTemporal.out).toMatch(/^ {2}ok +refresh /m);
    expect(noTemporal.out).not.toMatch(/^\s+at /m);

    const noWarehouse = await status({ DATABASE_URL: `postgres://ddsync:hidden-pw@127.0.0.1:${closed}/ddsync` });
    expect(noWarehouse.code, noWarehouse.out).toBe(2);
    expect(noWarehouse.out).toMatch(
      new RegExp(
        `^ {2}critical +warehouse +cannot reach the warehouse at 127\\.0\\.0\\.1:${closed}/ddsync: .*; check DATABASE_URL \\(refresh, scans, deletions, transactions, webhooks and pdfs not checked\\)$`,
        'm',
      ),
    );
    expect(noWarehouse.out).toMatch(/^ {2}ok +workers /m);
    expect(noWarehouse.out).not.toMatch(/^\s+at /m);
    expect(noWarehouse.out).not.toContain('hidden-pw');
  });

  it('refuses a bad threshold with the rule, exit code 2', async () => {
    const bad = await status({}, '--tx-warning', 'soon');
    expect(bad.code).toBe(2);
    expect(bad.out).toContain(
      'ddsync status: --tx-warning must be a duration above 0: a whole number followed by ms, s, m, h or d, got "soon"',
    );
    const order = await status({}, '--tx-warning', '2d');
    expect(order.code).toBe(2);
    expect(order.out).toContain(
      'ddsync status: --tx-warning (2d) must not be longer than a day (1d): a warning comes before critical',
    );
  });
});
