import { describe, it, expect, beforeAll, afterAll, beforeEach } from 'vitest';
import { sql } from 'kysely';
import { openWarehouse, type Warehouse } from '../../warehouse/database.ts';
import { migrateToLatest } from '../../warehouse/migrate.ts';
import { readWarehouseStatus, type SyncStatusRow } from '../../warehouse/status/read-status.ts';
import { judgeWarehouse } from '../../cli/status/judge.ts';
import { resolveThresholds, THRESHOLD_SECTIONS, thresholdSettingsOf } from '../../cli/status/thresholds.ts';
import { loadConfig } from '../../platform/config.ts';
import { createTestDatabase } from '../support/databases.ts';

// bi_sync_status (sql/migrations/0020) over hand-written warehouses, so every fact is known; and at
// each one, the level the view gives equals what `ddsync status` judges from the same row with every
// setting at its default (cli/status/judge.ts): the two sets of rules cannot drift apart unnoticed.

const defaults = (() => {
  return resolveThresholds(thresholdSettingsOf(loadConfig([...THRESHOLD_SECTIONS], {})));
})();

const run = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const BATCH = '00000000-0000-4000-8000-0000000000b1';
const CANCELLED = '00000000-0000-4000-8000-0000000000b2';

describe('bi_sync_status', () => {
  let db: Warehouse;
  beforeAll(async () => {
    db = openWarehouse(await createTestDatabase('syncstatus'), 2);
    await migrateToLatest(db);
  });
  afterAll(() => db?.destroy());
  beforeEach(async () => {
    await sql`truncate sync_runs, sync_run_scopes, plot_suppliers, businesses, business_connections, submission_batches,
              transactions, webhooks, webhook_attempts, webhook_stats, survey_response_pdfs cascade`.execute(db);
  });

  /** The view's rows by check, each checked against the judge at the defaults. */
  async function status(): Promise<Record<string, SyncStatusRow>> {
    const { rows } = await readWarehouseStatus(db);
    expect(rows.map((r) => r.check)).toEqual(['refresh', 'scans', 'deletions', 'transactions', 'webhooks', 'pdfs']);
    const judged = judgeWarehouse(rows, defaults);
    expect(judged.map((c) => [c.check, c.level])).toEqual(rows.map((r) => [r.check, r.viewLevel]));
    return Object.fromEntries(rows.map((r) => [r.check, r]));
  }

  /** Refreshes that ended `hoursAgo` (newest last), each with a status. */
  async function runs(...ended: Array<[status: string, hoursAgo: number, error?: string]>): Promise<void> {
    for (const [i, [status, hoursAgo, error]] of ended.entries())
      await sql`insert into sync_runs (id, status, started_at, finished_at, error)
                values (${run(i + 1)}::uuid, ${status}, now() - make_interval(hours => ${hoursAgo + 1}),
                        now() - make_interval(secs => ${hoursAgo * 3600}), ${error ?? null})`.execute(db);
  }

  it('says an empty warehouse has never been refreshed (critical), and that nothing else waits', async () => {
    const s = await status();
    expect(s['refresh']).toMatchObject({
      viewLevel: 'critical',
      since: null,
      items: 0,
      message: 'no refresh has run yet',
    });
    expect(s['scans']).toMatchObject({ viewLevel: 'ok', items: 0, message: 'no refresh has read anything yet' });
    expect(s['deletions']).toMatchObject({ viewLevel: 'ok', items: 0, message: 'no deletion deferred' });
    expect(s['transactions']).toMatchObject({
      viewLevel: 'ok',
      items: 0,
      message: 'no transaction is waiting for a final status',
    });
    expect(s['webhooks']).toMatchObject({ viewLevel: 'ok', message: "no webhook of ddsync's recorded" });
    expect(s['pdfs']).toMatchObject({ viewLevel: 'ok', items: 0, message: 'nothing queued' });
  });

  it('judges the age of the last successful refresh against the schedule: ok, warning from 9h, critical from 12h', async () => {
    await runs(['succeeded', 2]);
    let s = await status();
    expect(s['refresh']).toMatchObject({ viewLevel: 'ok', items: 0, failing: 0, failuresInARow: 0, oldest: run(1) });
    expect(s['refresh']!.ageSeconds).toBeGreaterThanOrEqual(7200);
    expect(s['refresh']!.message).toMatch(
      /^last successful refresh finished \d{4}-\d\d-\d\d \d\d:\d\d UTC \(2 h ago\)$/,
    );

    await sql`update sync_runs set finished_at = now() - interval '10 hours'`.execute(db);
    expect((await status())['refresh']!.viewLevel).toBe('warning');
    await sql`update sync_runs set finished_at = now() - interval '13 hours'`.execute(db);
    s = await status();
    expect(s['refresh']).toMatchObject({ viewLevel: 'critical' });
    expect(s['refresh']!.message).toContain('(13 h ago)');
  });

  it('counts failed refreshes in a row after the last success: a warning from one, critical from three', async () => {
    await runs(['succeeded', 4], ['partial', 3, 'supplier S2 failed'], ['failed', 2, 'the service answered 503']);
    let s = await status();
    expect(s['refresh']).toMatchObject({ viewLevel: 'warning', items: 2, failing: 1, failuresInARow: 1 });
    expect(s['refresh']!.message).toMatch(
      /since then 2 refreshes ended partial or failed; the latest ended failed: the service answered 503$/,
    );
    await sql`insert into sync_runs (id, status, started_at, finished_at, error) values
      (${run(4)}::uuid, 'failed', now() - interval '90 minutes', now() - interval '1 hour', 'again'),
      (${run(5)}::uuid, 'failed', now() - interval '50 minutes', now() - interval '30 minutes', 'and again'),
      (${run(6)}::uuid, 'running', now() - interval '5 minutes', null, null)`.execute(db);
    s = await status();
    expect(s['refresh']).toMatchObject({ viewLevel: 'critical', items: 4, failing: 3, failuresInARow: 3 });
    expect(s['refresh']!.message).toMatch(/; one running since .* \(5 min ago\)$/);
  });

  it('names the parts whose last read failed, how many times in a row and since when; a supplier gone is left out', async () => {
    await sql`insert into businesses (id, name, content_hash) values ('S1', 'Alpha Cocoa', 'h'), ('S2', 'Beta Farms', 'h'), ('S9', 'Gone Ltd', 'h');
      insert into business_connections (id, source_business_id, target_business_id, partner_business_id, role, content_hash, deleted_at) values
        ('c1', 'S1', 'C', 'S1', 'supplier', 'h', null), ('c2', 'S2', 'C', 'S2', 'supplier', 'h', null),
        ('c9', 'S9', 'C', 'S9', 'supplier', 'h', now())`.execute(db);
    await runs(['succeeded', 30], ['partial', 20], ['partial', 8]);
    const scopes = [
      [1, 'S1', 'succeeded'],
      [1, 'S2', 'succeeded'],
      [2, 'S1', 'succeeded'],
      [2, 'S2', 'failed'],
      [2, 'S9', 'failed'],
      [3, 'S1', 'succeeded'],
      [3, 'S2', 'failed'],
      [3, 'S9', 'failed'],
    ] as const;
    for (const [n, scope, state] of scopes)
      await sql`insert into sync_run_scopes (run_id, scope, kind, supplier_id, status, error)
                values (${run(n)}::uuid, ${scope}, 'supplier', ${scope}, ${state}, ${state === 'failed' ? `read of ${scope} failed: 503` : null})`.execute(
        db,
      );
    await sql`insert into sync_run_scopes (run_id, scope, kind, status) values (${run(3)}::uuid, 'own-plots', 'own_plots', 'succeeded')`.execute(
      db,
    );
    let s = await status();
    expect(s['scans']).toMatchObject({ viewLevel: 'warning', items: 1, failing: 1, failuresInARow: 2, oldest: 'S2' });
    // Since the end of the first failed read of the streak: run 2, 20 hours ago.
    expect(s['scans']!.ageSeconds).toBeGreaterThanOrEqual(20 * 3600);
    expect(s['scans']!.ageSeconds).toBeLessThan(21 * 3600);
    expect(s['scans']!.message).toMatch(
      /^1 part whose last read failed: Beta Farms \(S2\), 2 in a row since .* \(20 h ago\): read of S2 failed: 503$/,
    );

    // A third failure in a row is critical; the own plots failing once are named too.
    await sql`insert into sync_runs (id, status, started_at, finished_at) values (${run(4)}::uuid, 'partial', now() - interval '2 hours', now() - interval '1 hour')`.execute(
      db,
    );
    await sql`insert into sync_run_scopes (run_id, scope, kind, supplier_id, status) values
        (${run(4)}::uuid, 'S1', 'supplier', 'S1', 'succeeded'), (${run(4)}::uuid, 'S2', 'supplier', 'S2', 'failed')`.execute(
      db,
    );
    await sql`insert into sync_run_scopes (run_id, scope, kind, status, error) values (${run(4)}::uuid, 'own-plots', 'own_plots', 'failed', 'GET /plots: 500')`.execute(
      db,
    );
    s = await status();
    expect(s['scans']).toMatchObject({ viewLevel: 'critical', items: 2, failuresInARow: 3, oldest: 'S2' });
    expect(s['scans']!.message).toMatch(
      /^2 parts whose last read failed: Beta Farms \(S2\), 3 in a row since .*; own plots, 1 in a row since .* \(60 min ago\): GET \/plots: 500$/,
    );
  });

  it('tells deferred deletions apart from deletions that have waited too long', async () => {
    await sql`insert into plot_suppliers (plot_id, supplier_id, missing_since) values
      ('P1', 'S1', now() - interval '1 hour'), ('P2', 'S1', now() - interval '2 hours'), ('P3', 'S2', now() - interval '30 minutes')`.execute(
      db,
    );
    await sql`insert into plot_suppliers (plot_id, supplier_id, missing_since, deleted_at) values ('P4', 'S3', now() - interval '2 days', now())`.execute(
      db,
    );
    let s = await status();
    expect(s['deletions']).toMatchObject({ viewLevel: 'ok', items: 3, oldest: 'S1' });
    expect(s['deletions']!.message).toMatch(
      /^3 plot links of 2 suppliers missed by a refresh but not proven gone; the oldest, of supplier S1, since .* \(2 h ago\): /,
    );
    await sql`update plot_suppliers set missing_since = now() - interval '13 hours' where plot_id = 'P3'`.execute(db);
    s = await status();
    expect(s['deletions']).toMatchObject({ viewLevel: 'warning', oldest: 'S2' });
  });

  it('follows transactions without a final status: the oldest, its batch, steps failing in a row', async () => {
    // One multi-statement text: sent without parameters.
    await sql
      .raw(`insert into submission_batches (id, source, created_at, status) values
        ('${BATCH}', 'a.ndjson', now() - interval '5 hours', 'open'), ('${CANCELLED}', 'b.ndjson', now() - interval '3 days', 'cancelled');
        insert into transactions (key, batch_id, state, submitted_at) values
          ('k1', '${BATCH}', 'submitted', now() - interval '1 hour'),
          ('k2', '${BATCH}', 'available', now() - interval '4 hours'),
          ('k3', '${CANCELLED}', 'pending', null)`)
      .execute(db);
    let s = await status();
    expect(s['transactions']).toMatchObject({
      viewLevel: 'ok',
      items: 1,
      failing: 0,
      failuresInARow: 0,
      oldest: BATCH,
    });
    expect(s['transactions']!.message).toMatch(
      new RegExp(
        `^1 transaction without a final status in 1 batch; the oldest, of batch ${BATCH}, waiting since .* \\(60 min ago\\)$`,
      ),
    );
    // Not yet submitted: waiting since its batch was handed over, 5 hours ago.
    await sql`insert into transactions (key, batch_id, state) values ('k4', ${BATCH}::uuid, 'pending')`.execute(db);
    expect((await status())['transactions']).toMatchObject({ viewLevel: 'warning', items: 2 });
    await sql`update transactions set failed_attempts = 3 where key = 'k1'`.execute(db);
    await sql`delete from transactions where key = 'k4'`.execute(db);
    s = await status();
    expect(s['transactions']).toMatchObject({ viewLevel: 'warning', failing: 1, failuresInARow: 3 });
    expect(s['transactions']!.message).toContain('; 1 step failing and retried, up to 3 times in a row');
    await sql`update transactions set failed_attempts = 0, submitted_at = now() - interval '25 hours' where key = 'k1'`.execute(
      db,
    );
    expect((await status())['transactions']!.viewLevel).toBe('critical');
  });

  it("warns of ddsync's webhooks failing since their last success, not of others'", async () => {
    await sql`insert into webhooks (id, name, managed, url) values ('w1', 'main', true, 'https://h.example.com/hooks/main'), ('w2', null, false, 'https://other.example.com');
      insert into webhook_stats (webhook_id, taken_at, successful_messages, failed_messages) values ('w1', now() - interval '20 minutes', 5, 0);
      insert into webhook_attempts (id, webhook_id, status, response_status_code, attempted_at) values
        ('a1', 'w1', 'SUCCESS', 204, now() - interval '3 hours'),
        ('a2', 'w2', 'FAILED', 500, now() - interval '1 hour')`.execute(db);
    let s = await status();
    expect(s['webhooks']).toMatchObject({ viewLevel: 'ok', items: 0 });
    expect(s['webhooks']!.message).toMatch(
      /^1 webhook of ddsync's recorded, none failing; attempts and stats last pulled .* \(20 min ago\)$/,
    );
    await sql`insert into webhook_attempts (id, webhook_id, status, response_status_code, attempted_at) values
      ('a3', 'w1', 'FAILED', 503, now() - interval '2 hours'), ('a4', 'w1', 'Failed', 502, now() - interval '1 hour')`.execute(
      db,
    );
    s = await status();
    expect(s['webhooks']).toMatchObject({ viewLevel: 'warning', items: 1, failuresInARow: 2, oldest: 'main' });
    expect(s['webhooks']!.message).toMatch(
      /^1 webhook failing: main, 2 failed deliveries since .* \(2 h ago\), last answer 502/,
    );
  });

  it("warns of the PDF archive's backlog when an entry due is not taken for 30 minutes", async () => {
    await sql`insert into survey_response_pdfs (id, state, next_attempt_at) values
      ('p1', 'queued', now() - interval '10 minutes'), ('p2', 'waiting', now() + interval '1 hour'), ('p3', 'retrying', now() + interval '5 minutes')`.execute(
      db,
    );
    let s = await status();
    expect(s['pdfs']).toMatchObject({ viewLevel: 'ok', items: 3, failing: 1, oldest: 'p1' });
    expect(s['pdfs']!.message).toMatch(
      /^3 PDFs in the backlog \(1 queued, 1 waiting for the survey response to be completed, 1 retrying after an error\); 1 due, the longest since .* \(10 min ago\)$/,
    );
    await sql`update survey_response_pdfs set next_attempt_at = now() - interval '40 minutes' where id = 'p2'`.execute(
      db,
    );
    s = await status();
    expect(s['pdfs']).toMatchObject({ viewLevel: 'warning', oldest: 'p2' });
  });
});
