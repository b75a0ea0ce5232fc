import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { copyFileSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openWarehouse, type Warehouse } from '../../warehouse/database.ts';
import { MIGRATIONS_DIR, migrateToLatest, readMigrationFiles } from '../../warehouse/migrate.ts';
import { readWarehouseCatalog, type WarehouseCatalog } from '../../warehouse/dbt/catalog.ts';
import { checkedValues } from '../../warehouse/dbt/check-values.ts';
import {
  OPEN_VOCABULARIES,
  openVocabularyValues,
  STATED_REFERENCES,
  VIEW_KEYS,
} from '../../warehouse/dbt/stated-facts.ts';
import { NARROWED_COLUMNS } from '../../schema/database.ts';
import { createTestDatabase } from '../support/databases.ts';
import { lastJsonLine, runDdsync } from '../support/processes.ts';
import { scratchDir } from '../support/scratch.ts';

// The catalog `ddsync dbt` reads, on a warehouse the migrations made (embedded Postgres 18, no PostGIS),
// and the command itself as a child process. dbt is not needed here: test/postgis/dbt.test.ts runs it.

const split = (path: string) => {
  const [relation, column] = path.split('.') as [string, string];
  return { relation, column };
};

/** Every file under `dir`, relative path → bytes as text. */
function filesUnder(dir: string, prefix = ''): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of readdirSync(join(dir, prefix), { withFileTypes: true })) {
    const path = prefix ? `${prefix}/${e.name}` : e.name;
    if (e.isDirectory()) Object.assign(out, filesUnder(dir, path));
    else out[path] = readFileSync(join(dir, path), 'utf8');
  }
  return out;
}

const commandEnv = (databaseUrl: string): NodeJS.ProcessEnv => ({
  PATH: process.env.PATH,
  HOME: process.env.HOME,
  DATABASE_URL: databaseUrl,
  DDSYNC_LOG_FORMAT: 'json',
});

describe('the catalog ddsync dbt reads', () => {
  let db: Warehouse;
  let url: string;
  let catalog: WarehouseCatalog;
  beforeAll(async () => {
    url = await createTestDatabase('dbt');
    db = openWarehouse(url, 2);
    await migrateToLatest(db);
    catalog = await readWarehouseCatalog(db, openVocabularyValues());
  });
  afterAll(() => db?.destroy());

  const relation = (name: string) => {
    const found = catalog.relations.find((r) => r.name === name);
    if (!found) throw new Error(`no relation ${name} in the catalog`);
    return found;
  };
  const columnOf = (path: string) => {
    const { relation: r, column } = split(path);
    return catalog.relations.find((x) => x.name === r)?.columns.find((c) => c.name === column);
  };

  it('holds every table and view of the schema with its comment, and every column with its comment and nullability', async () => {
    // Asked another way: information_schema, which knows nothing of ddsync.
    const { rows: expected } = await sql<{ name: string; kind: string; comment: string | null }>`
      select t.table_name as name, case t.table_type when 'VIEW' then 'view' else 'table' end as kind,
             obj_description(format('%I.%I', t.table_schema, t.table_name)::regclass, 'pg_class') as comment
      from information_schema.tables t
      where t.table_schema = current_schema()
      order by t.table_name collate "C"`.execute(db);
    expect(catalog.schema).toBe('public');
    expect(catalog.relations.map((r) => ({ name: r.name, kind: r.kind, comment: r.comment }))).toEqual(expected);
    expect(catalog.relations.length).toBeGreaterThan(40);
    // ddsync comments every table and view (test/integration/analyst-views.test.ts): none arrives without.
    expect(catalog.relations.filter((r) => !r.comment).map((r) => r.name)).toEqual([]);

    const { rows: columns } = await sql<{ relation: string; name: string; comment: string | null; not_null: boolean }>`
      select c.table_name as relation, c.column_name as name, c.is_nullable = 'NO' as not_null,
             col_description(format('%I.%I', c.table_schema, c.table_name)::regclass, c.ordinal_position::int) as comment
      from information_schema.columns c
      where c.table_schema = current_schema()
      order by c.table_name collate "C", c.ordinal_position`.execute(db);
    expect(
      catalog.relations.flatMap((r) =>
        r.columns.map((c) => ({ relation: r.name, name: c.name, comment: c.comment, not_null: c.notNull })),
      ),
    ).toEqual(columns);
    expect(catalog.migrations).toEqual((await readMigrationFiles()).map((f) => f.name));
  });

  it('reads the keys, references and CHECKs the migrations declare', () => {
    expect(relation('sync_runs').primaryKey).toEqual({ name: 'sync_runs_pkey', columns: ['id'] });
    expect(relation('plot_species').primaryKey?.columns).toEqual(['plot_id', 'position']);
    expect(relation('plot_species').columns.find((c) => c.name === 'position')?.needsQuoting).toBe(true);
    expect(relation('plot_history').uniques).toEqual([
      { columns: ['plot_id'], predicate: 'is_current', name: 'plot_history_current' },
    ]);
    expect(relation('transactions').uniques).toContainEqual({
      columns: ['id'],
      predicate: null,
      name: 'transactions_id_key',
    });
    expect(relation('transactions').foreignKeys).toEqual([
      {
        name: 'transactions_batch_id_fkey',
        columns: ['batch_id'],
        references: { relation: 'submission_batches', columns: ['id'] },
      },
    ]);
    // Every CHECK that enumerates one column is read, in this server's spelling (PostgreSQL 18 here,
    // 15 in the extra suite), and says what the code's narrowed types say.
    const enumerations = catalog.relations.flatMap((r) =>
      r.checks
        .filter((k) => k.columns.length === 1 && / = ANY \(/.test(k.definition) && !/\) = \(/.test(k.definition))
        .map((k) => ({ path: `${r.name}.${k.columns[0]}`, values: checkedValues(k.definition, k.columns[0]!) })),
    );
    expect(enumerations.length).toBeGreaterThan(10);
    expect(enumerations.filter((e) => e.values === null)).toEqual([]);
    for (const e of enumerations) {
      const narrowed = (NARROWED_COLUMNS as Record<string, readonly string[]>)[e.path];
      if (narrowed) expect([e.path, e.values]).toEqual([e.path, [...narrowed]]);
    }
  });

  it('names the table column each view column passes through unchanged, also through a view over a view', async () => {
    expect(relation('bi_suppliers').columns.find((c) => c.name === 'supplier_business_id')?.origin).toEqual({
      relation: 'business_connections',
      column: 'partner_business_id',
    });
    // A column of a union (bi_current_plots' two branches since 0035) has no one column it passes through.
    expect(relation('bi_current_plots').columns.find((c) => c.name === 'plot_id')?.origin).toBeNull();
    expect(relation('bi_sync_health').columns.find((c) => c.name === 'status')?.origin).toEqual({
      relation: 'sync_runs',
      column: 'status',
    });
    // Normalised, computed: not passed through.
    expect(relation('bi_current_plots').columns.find((c) => c.name === 'risk_level')?.origin).toBeNull();
    expect(relation('bi_sync_health').columns.find((c) => c.name === 'seconds')?.origin).toBeNull();
    // A view of this database's own over a ddsync view.
    await sql`create view dbt_probe as select h.status as run_status, h.run_id, h.seconds from bi_sync_health h`.execute(
      db,
    );
    try {
      const probe = (await readWarehouseCatalog(db)).relations.find((r) => r.name === 'dbt_probe')!;
      expect(probe.reads).toEqual(['bi_sync_health']);
      expect(probe.columns.map((c) => [c.name, c.origin])).toEqual([
        ['run_status', { relation: 'sync_runs', column: 'status' }],
        ['run_id', { relation: 'sync_runs', column: 'id' }],
        ['seconds', null],
      ]);
    } finally {
      await sql`drop view dbt_probe`.execute(db);
    }
  });

  it('is stated facts only about columns the warehouse has, each reference one its column’s comment names', () => {
    for (const key of VIEW_KEYS) {
      expect([key.view, relation(key.view).kind]).toEqual([key.view, 'view']);
      for (const c of [...key.columns, ...key.notNull])
        expect([key.view, c, columnOf(`${key.view}.${c}`)?.name]).toEqual([key.view, c, c]);
    }
    for (const ref of STATED_REFERENCES) {
      const from = split(ref.from);
      const to = split(ref.to);
      expect([ref.from, relation(from.relation).kind]).toEqual([ref.from, 'table']);
      expect([ref.from, columnOf(ref.from)?.comment ?? '']).toEqual([ref.from, expect.stringContaining(`(${ref.to})`)]);
      // What it names is the key of its table, and no foreign key declares it already.
      expect([ref.to, relation(to.relation).primaryKey?.columns]).toEqual([ref.to, [to.column]]);
      expect(relation(from.relation).foreignKeys.filter((fk) => fk.columns.includes(from.column))).toEqual([]);
    }
    for (const vocabulary of OPEN_VOCABULARIES) {
      for (const path of vocabulary.columns) {
        expect([path, relation(split(path).relation).kind, columnOf(path)?.origin]).toEqual([path, 'view', null]);
      }
      const normalised = vocabulary.values.map((v) => catalog.normalised[v]);
      expect(normalised.filter((v) => !v || !/^[a-z_]+$/.test(v))).toEqual([]);
    }
    expect(catalog.normalised['IN_RISK_MITIGATION']).toBe('in_risk_mitigation');
    expect(catalog.normalised['not started']).toBe('not_started');
  });

  it('is read the same by a login of the read-only role ddsync_reader', async () => {
    const role = `dbt_catalog_${Math.random().toString(36).slice(2, 8)}`;
    await sql.raw(`create role ${role} login password 'reader-pw' in role ddsync_reader`).execute(db);
    const login = new URL(url);
    login.username = role;
    login.password = 'reader-pw';
    const reader = openWarehouse(login.toString(), 1);
    try {
      expect(await readWarehouseCatalog(reader, openVocabularyValues())).toEqual(catalog);
    } finally {
      await reader.destroy();
      // Roles are the cluster's: none is left behind for the other files of the run.
      await sql.raw(`drop role ${role}`).execute(db);
    }
  });

  it('refuses a database ddsync never migrated, saying what to do', async () => {
    const empty = openWarehouse(await createTestDatabase('dbt_empty'), 1);
    try {
      await expect(readWarehouseCatalog(empty)).rejects.toThrow(
        'schema "public" of this database has no ddsync warehouse (no kysely_migration or sync_runs table): run ddsync migrate first, or point DATABASE_URL at the warehouse',
      );
    } finally {
      await empty.destroy();
    }
  });
});

describe('ddsync dbt', () => {
  it('writes the package into --out, the same bytes every time, and no part of DATABASE_URL’s credentials', async () => {
    const url = await createTestDatabase('dbt_cli');
    const db = openWarehouse(url, 1);
    try {
      await migrateToLatest(db);
    } finally {
      await db.destroy();
    }
    const out = join(scratchDir('dbt'), 'ddsync_dbt');
    const first = runDdsync(['dbt', '--out', out, '--json'], commandEnv(url));
    expect(await first.exited, first.output()).toBe(0);
    const summary = lastJsonLine(first.output());
    expect(summary).toMatchObject({
      path: out,
      sources: 1,
      tables: expect.any(Number),
      views: expect.any(Number),
      tests: expect.any(Number),
      schema: 'public',
      files: ['.gitignore', 'README.md', 'dbt_project.yml', 'models/sources.yml', 'profiles.yml'],
      skipped: [],
    });
    expect(summary['tables']).toBeGreaterThan(25);
    expect(summary['views']).toBeGreaterThan(10);
    expect(summary['tests']).toBeGreaterThan(100);
    const written = filesUnder(out);
    expect(Object.keys(written).sort()).toEqual(summary['files']);

    const again = runDdsync(['dbt', '--out', out], commandEnv(url));
    expect(await again.exited, again.output()).toBe(0);
    expect(again.output()).toMatch(
      /^dbt sources of schema public: \d+ tables, \d+ views, \d+ tests, freshness on \d+\n/,
    );
    expect(again.output().trim().split('\n').at(-1)).toBe(out);
    expect(filesUnder(out)).toEqual(written);

    const { password, username } = new URL(url);
    expect(password.length).toBeGreaterThan(3);
    for (const [path, text] of Object.entries(written)) {
      expect([path, text.includes(password)]).toEqual([path, false]);
      expect([path, text.includes(url)]).toEqual([path, false]);
    }
    expect(`${first.output()}${again.output()}`).not.toContain(password);
    expect(written['profiles.yml']).not.toContain(`user: ${username}`);
  });

  it('refuses --out that is a file, naming the flag, before it connects', async () => {
    const file = join(scratchDir('dbt'), 'a-file');
    writeFileSync(file, 'x');
    const run = runDdsync(['dbt', '--out', file], commandEnv('postgres://nobody:secret@127.0.0.1:1/none'));
    expect(await run.exited).toBe(2);
    expect(run.output()).toContain(
      `ddsync dbt: --out must be a folder (or a path to create one), got a file: "${file}"`,
    );
  });

  it('refuses a warehouse this ddsync has not migrated, naming the migrations to apply', async () => {
    const url = await createTestDatabase('dbt_behind');
    // The warehouse of a much older ddsync: its first three migrations (no views' normalise_status() yet).
    const dir = scratchDir('migrations');
    const files = (await readMigrationFiles()).map((f) => f.file);
    for (const f of files.slice(0, 3)) copyFileSync(join(MIGRATIONS_DIR, f), join(dir, f));
    const db = openWarehouse(url, 1);
    try {
      await migrateToLatest(db, dir);
    } finally {
      await db.destroy();
    }
    const out = join(scratchDir('dbt'), 'out');
    const run = runDdsync(['dbt', '--out', out], commandEnv(url));
    expect(await run.exited).toBe(1);
    const pending = files.slice(3).map((f) => f.replace(/\.sql$/, ''));
    expect(run.output()).toContain(
      `ddsync dbt: the warehouse has not applied ${pending.length} migrations of this ddsync (${pending.join(', ')}): run ddsync migrate first`,
    );
    expect(() => readdirSync(out)).toThrow();

    const empty = await createTestDatabase('dbt_never');
    const never = runDdsync(['dbt', '--out', out], commandEnv(empty));
    expect(await never.exited).toBe(1);
    expect(never.output()).toContain('ddsync dbt: schema "public" of this database has no ddsync warehouse');
  });
});
