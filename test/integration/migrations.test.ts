import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { sql } from 'kysely';
import pg from 'pg';
import { readdirSync } from 'node:fs';
import { copyFile, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { TABLE_TYPES_FILE } from '../../tools/table-types.ts';
import { openWarehouse, type Warehouse } from '../../warehouse/database.ts';
import { MIGRATIONS_DIR, migrateToLatest } from '../../warehouse/migrate.ts';
import { createTestDatabase } from '../support/databases.ts';
import { scratchDir } from '../support/scratch.ts';

describe('migrations', () => {
  let url: string;
  let db: Warehouse;
  beforeAll(async () => {
    url = await createTestDatabase('migrate');
    db = openWarehouse(url, 4);
  });
  afterAll(() => db?.destroy());

  it('apply once even when two workers start at the same time', async () => {
    const other = openWarehouse(url, 2);
    try {
      const [a, b] = await Promise.all([migrateToLatest(db), migrateToLatest(other)]);
      // Each migration ran exactly once, by whichever worker held the lock.
      const all = readdirSync(new URL('../../sql/migrations', import.meta.url))
        .filter((f) => f.endsWith('.sql'))
        .map((f) => f.replace(/\.sql$/, ''))
        .sort();
      expect(all.slice(0, 8)).toEqual([
        '0001_warehouse',
        '0002_bi_views',
        '0003_transactions',
        '0004_webhooks',
        '0005_survey_pdfs',
        '0006_webhook_dispatch',
        '0007_create_sent_at',
        '0008_refresh_page_reuse',
      ]);
      expect([...a.applied, ...b.applied].sort()).toEqual(all);
      expect([a.current, b.current]).toEqual([all.at(-1), all.at(-1)]);
      expect((await migrateToLatest(db)).applied).toEqual([]);
    } finally {
      await other.destroy();
    }
  });

  it('brings a warehouse migrated with the first release of 0001 up to date (0008)', async () => {
    const old = openWarehouse(await createTestDatabase('migrateold'), 2);
    try {
      // Migrated up to 0008 only (later migrations came after it), then set back to 0001's first release.
      const upTo0008 = scratchDir('migrations');
      for (const f of (await readdir(MIGRATIONS_DIR)).filter((f) => f <= '0008_refresh_page_reuse.sql'))
        await copyFile(join(MIGRATIONS_DIR, f), join(upTo0008, f));
      await migrateToLatest(old, upTo0008);
      // As 0001 was first released: no page reuse, foreign keys on links and species; 0008 not run.
      await sql`drop table source_pages`.execute(old);
      await sql`alter table sync_pages drop column reused`.execute(old);
      await sql`alter table plot_suppliers add constraint plot_suppliers_plot_id_fkey foreign key (plot_id) references plots (id)`.execute(
        old,
      );
      await sql`alter table plot_species add constraint plot_species_plot_id_fkey foreign key (plot_id) references plots (id)`.execute(
        old,
      );
      await sql`delete from kysely_migration where name = '0008_refresh_page_reuse'`.execute(old);
      const later = (await readdir(MIGRATIONS_DIR))
        .filter((f) => f > '0008_refresh_page_reuse.sql' && f.endsWith('.sql'))
        .map((f) => f.replace(/\.sql$/, ''));
      expect((await migrateToLatest(old)).applied).toEqual(['0008_refresh_page_reuse', ...later.sort()]);
      const shape = await sql<{ source_pages: boolean; reused: boolean; fks: number }>`
        select to_regclass('source_pages') is not null as source_pages,
               exists (select 1 from information_schema.columns where table_name = 'sync_pages' and column_name = 'reused') as reused,
               (select count(*)::int from pg_constraint where contype = 'f' and conrelid in ('plot_suppliers'::regclass, 'plot_species'::regclass)) as fks`.execute(
        old,
      );
      expect(shape.rows[0]).toEqual({ source_pages: true, reused: true, fks: 0 });
    } finally {
      await old.destroy();
    }
  });

  it('closes the batches with nothing to send that earlier versions left open (0011), and only those', async () => {
    const old = openWarehouse(await createTestDatabase('migrate0011'), 2);
    try {
      const upTo0010 = scratchDir('migrations');
      for (const f of (await readdir(MIGRATIONS_DIR)).filter((f) => f < '0011'))
        await copyFile(join(MIGRATIONS_DIR, f), join(upTo0010, f));
      await migrateToLatest(old, upTo0010);
      const [nothing, sending, reading] = [
        '00000000-0000-4000-8000-0000000000a1',
        '00000000-0000-4000-8000-0000000000a2',
        '00000000-0000-4000-8000-0000000000a3',
      ];
      // Every row a duplicate; a batch with a row to send; a file still being read (its rows not counted yet).
      await sql`insert into submission_batches (id, source, rows, accepted, duplicates) values
        (${nothing}::uuid, 'dup.ndjson', 1, 0, 1), (${sending}::uuid, 'ok.ndjson', 1, 1, 0), (${reading}::uuid, 'big.ndjson', 0, 0, 0)`.execute(
        old,
      );
      await sql`insert into transaction_requests (batch_id, line, key, status, earlier_batch_id) values (${nothing}::uuid, 1, 'k1', 'duplicate', ${sending}::uuid)`.execute(
        old,
      );
      await sql`insert into transaction_requests (batch_id, line, key, status, payload) values (${sending}::uuid, 1, 'k1', 'accepted', '{}')`.execute(
        old,
      );
      // 0011 first, then whatever came after it.
      expect((await migrateToLatest(old)).applied[0]).toBe('0011_submission_step_failures');
      const { rows } = await sql<{
        id: string;
        status: string;
        finished: boolean;
      }>`select id::text, status, finished_at is not null as finished from submission_batches order by id`.execute(old);
      expect(rows).toEqual([
        { id: nothing, status: 'done', finished: true },
        { id: sending, status: 'open', finished: false },
        { id: reading, status: 'open', finished: false },
      ]);
    } finally {
      await old.destroy();
    }
  });

  it('names the migration that failed and why, and keeps nothing of the run', async () => {
    const broken = openWarehouse(await createTestDatabase('migratefail'), 2);
    try {
      const dir = scratchDir('migrations');
      for (const f of (await readdir(MIGRATIONS_DIR)).filter((f) => f < '0004'))
        await copyFile(join(MIGRATIONS_DIR, f), join(dir, f));
      await writeFile(join(dir, '0004_broken.sql'), 'alter table plots add column note text;\nselect 1 / 0;\n');
      await expect(migrateToLatest(broken, dir)).rejects.toThrow(/^migration 0004_broken failed: division by zero$/);
      // The migrations before it ran in the same transaction: none stayed, and the lock was let go.
      const { rows } = await sql<{ plots: string | null }>`select to_regclass('plots')::text as plots`.execute(broken);
      expect(rows[0]!.plots).toBeNull();
      await rm(join(dir, '0004_broken.sql'));
      expect((await migrateToLatest(broken, dir)).current).toBe('0003_transactions');
    } finally {
      await broken.destroy();
    }
  });

  it('creates every table and view the Kysely types name, and no other', async () => {
    // The names of the generated DB interface (schema/database.generated.ts, made by npm run db:types).
    const generated = /export interface DB \{([^}]*)\}/.exec(await readFile(TABLE_TYPES_FILE, 'utf8'))?.[1] ?? '';
    const named = [...generated.matchAll(/^\s+(\w+): \w+;$/gm)].map((m) => m[1]!).sort();
    expect(named).toEqual(
      expect.arrayContaining([
        'plots',
        'sync_runs',
        'transactions',
        'webhook_events',
        'survey_response_pdfs',
        'bi_current_plots',
      ]),
    );
    const { rows } = await sql<{ table_name: string }>`
      select table_name from information_schema.tables where table_schema = 'public' and table_name not like 'kysely_migration%' order by table_name`.execute(
      db,
    );
    expect(rows.map((r) => r.table_name).sort()).toEqual(named);
    const views = await sql<{
      table_name: string;
    }>`select table_name from information_schema.views where table_schema = 'public'`.execute(db);
    expect(views.rows.map((r) => r.table_name).sort()).toEqual([
      'bi_country_risk',
      'bi_current_plots',
      'bi_eudr_plot_readiness',
      'bi_eudr_supplier_readiness',
      'bi_pdf_archive',
      'bi_plot_changes',
      'bi_risk_overview',
      'bi_suppliers',
      'bi_sync_health',
      'bi_sync_status',
      'bi_transaction_errors',
      'bi_transaction_latency',
      'bi_transaction_pipeline',
      'bi_transaction_readiness_warnings',
      'bi_warehouse_totals',
      'bi_webhook_health',
      'sync_last_seen',
    ]);
  });

  it('gives BI tools a role that can read everything and write nothing', async () => {
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    const login = `bi_${Math.random().toString(36).slice(2, 8)}`;
    await admin.query(`create role ${login} login password 'bi-test-pw' in role ddsync_reader`);
    await admin.query(
      `insert into sync_runs (id, status) values ('00000000-0000-4000-8000-000000000001', 'succeeded')`,
    );
    await admin.end();
    const bi = new pg.Client({ connectionString: url.replace(/\/\/[^@]+@/, `//${login}:bi-test-pw@`) });
    await bi.connect();
    try {
      expect((await bi.query('select count(*)::int as n from sync_runs')).rows[0].n).toBe(1);
      expect((await bi.query('select count(*)::int as n from bi_sync_health')).rows[0].n).toBe(1);
      await expect(
        bi.query(`insert into sync_runs (id) values ('00000000-0000-4000-8000-000000000002')`),
      ).rejects.toThrow(/permission denied/);
      await expect(bi.query('delete from sync_runs')).rejects.toThrow(/permission denied/);
      await expect(bi.query('create table evil (x int)')).rejects.toThrow(/permission denied/);
    } finally {
      await bi.end();
    }
  });
});
