import { describe, it, expect, beforeAll, afterAll, inject } from 'vitest';
import { sql } from 'kysely';
import pg from 'pg';
import { copyFile, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { openWarehouse, type Warehouse } from '../../warehouse/database.ts';
import { MIGRATIONS_DIR, migrateToLatest } from '../../warehouse/migrate.ts';
import { inDependencyOrder, readViewFiles, VIEWS_DIR } from '../../warehouse/views.ts';
import { createTestDatabase } from '../support/databases.ts';
import { scratchDir } from '../support/scratch.ts';

// The analyst views kept as code (sql/views, warehouse/views.ts): what the files make is what the
// migrations made before them, and the view step after the migrations makes again exactly what changed.

interface ViewShape {
  name: string;
  definition: string;
  comment: string | null;
  owner: string;
  columns: Array<{ column: string; type: string; comment: string | null }>;
  privileges: string[];
}

/** Every view of the warehouse as an analyst and a BI tool meet it: query, columns, comments, grants. */
async function viewShapes(db: Warehouse): Promise<ViewShape[]> {
  const { rows } = await sql<ViewShape>`
    select c.relname as name,
           pg_get_viewdef(c.oid) as definition,
           obj_description(c.oid, 'pg_class') as comment,
           pg_get_userbyid(c.relowner) as owner,
           (select json_agg(json_build_object('column', a.attname, 'type', format_type(a.atttypid, a.atttypmod),
                                              'comment', col_description(c.oid, a.attnum)) order by a.attnum)
            from pg_attribute a where a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped) as columns,
           (select json_agg(g order by g) from (
              select pg_get_userbyid(x.grantee) || ':' || x.privilege_type || case when x.is_grantable then ' with grant' else '' end as g
              from aclexplode(coalesce(c.relacl, acldefault('r', c.relowner))) x) p) as privileges
    from pg_class c
    where c.relkind = 'v' and c.relnamespace = current_schema()::regnamespace
    order by c.relname`.execute(db);
  return rows;
}

const oids = async (db: Warehouse): Promise<Record<string, number>> =>
  Object.fromEntries(
    (
      await sql<{
        name: string;
        oid: number;
      }>`select relname as name, oid::int as oid from pg_class where relkind = 'v' and relnamespace = current_schema()::regnamespace`.execute(
        db,
      )
    ).rows.map((r) => [r.name, r.oid]),
  );

const recorded = async (db: Warehouse) =>
  Object.fromEntries(
    (await sql<{ name: string; sha256: string }>`select name, sha256 from view_checksums`.execute(db)).rows.map((r) => [
      r.name,
      r.sha256,
    ]),
  );

/** A copy of sql/views to change without touching the real one. */
async function copyOfViews(): Promise<string> {
  const dir = scratchDir('views');
  for (const f of await readdir(VIEWS_DIR)) await copyFile(join(VIEWS_DIR, f), join(dir, f));
  return dir;
}

async function edit(dir: string, file: string, change: (text: string) => string): Promise<void> {
  const before = await readFile(join(dir, file), 'utf8');
  const after = change(before);
  expect(after).not.toBe(before);
  await writeFile(join(dir, file), after);
}

async function withWarehouse(prefix: string, use: (db: Warehouse, url: string) => Promise<void>): Promise<void> {
  const url = await createTestDatabase(prefix);
  const db = openWarehouse(url, 3);
  try {
    await use(db, url);
  } finally {
    await db.destroy();
  }
}

/** The views that use `name`, directly or through others, as the files say. */
async function usersOf(name: string): Promise<string[]> {
  const files = await readViewFiles();
  const found = new Set<string>([name]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const f of files)
      if (!found.has(f.name) && f.uses.some((u) => found.has(u))) {
        found.add(f.name);
        grew = true;
      }
  }
  found.delete(name);
  return [...found].sort();
}

describe('analyst views kept as code (sql/views)', () => {
  let old: Warehouse;
  let fresh: Warehouse;
  let freshUrl: string;
  beforeAll(async () => {
    // The warehouse as the release before views as code left it: migrations 0001 to 0025, whose views
    // the migrations made. 0026 and later come after.
    // (scratchDir() is for inside a test: this copy is removed here.)
    const upTo0025 = await mkdtemp(join(inject('scratchDir'), 'migrations-'));
    try {
      for (const f of (await readdir(MIGRATIONS_DIR)).filter((f) => f < '0026'))
        await copyFile(join(MIGRATIONS_DIR, f), join(upTo0025, f));
      old = openWarehouse(await createTestDatabase('viewsold'), 2);
      expect((await migrateToLatest(old, upTo0025)).current).toBe('0025_readiness_warnings');
    } finally {
      await rm(upTo0025, { recursive: true, force: true });
    }
    freshUrl = await createTestDatabase('viewsnew');
    fresh = openWarehouse(freshUrl, 3);
    await migrateToLatest(fresh);
  });
  afterAll(async () => {
    await old?.destroy();
    await fresh?.destroy();
  });

  it('makes from the files exactly the views the migrations made: definitions, columns (names, order, types), comments, grants', async () => {
    // Forget what was recorded: every view is made again from its file.
    await sql`delete from view_checksums`.execute(fresh);
    const { applied, views } = await migrateToLatest(fresh);
    expect(applied).toEqual([]);
    const files = inDependencyOrder(await readViewFiles());
    expect(views).toEqual(files.map((f) => f.name));
    expect(views).toHaveLength(17);
    const before = await viewShapes(old);
    const after = await viewShapes(fresh);
    expect(after.map((v) => v.name)).toEqual(before.map((v) => v.name));
    // Changed since, each by a diff of its file: bi_risk_overview gained country_risk_level (issue 23),
    // a new last column; what it had is as it was. It, bi_suppliers, bi_eudr_supplier_readiness and
    // bi_warehouse_totals read the summary tables of 0028, and bi_current_plots and bi_eudr_plot_readiness
    // look a plot's links and findings up per plot, and bi_plot_changes looks each change's version
    // before up after a filter (issue 24): another query, the same columns (names, order, types),
    // comments and grants.
    const changed = [
      'bi_risk_overview',
      'bi_suppliers',
      'bi_eudr_supplier_readiness',
      'bi_warehouse_totals',
      'bi_current_plots',
      'bi_eudr_plot_readiness',
      'bi_plot_changes',
    ];
    expect(after.filter((v) => !changed.includes(v.name))).toEqual(before.filter((v) => !changed.includes(v.name)));
    for (const name of changed.slice(1)) {
      const [was, is] = [before, after].map((shapes) => shapes.find((v) => v.name === name)!);
      expect({ ...is!, definition: '' }, name).toEqual({ ...was!, definition: '' });
    }
    const [was, is] = [before, after].map((shapes) => shapes.find((v) => v.name === 'bi_risk_overview')!);
    expect(is!.columns.slice(0, was!.columns.length)).toEqual(was!.columns);
    expect(is!.columns.slice(was!.columns.length).map((c) => [c.column, c.type])).toEqual([
      ['country_risk_level', 'text'],
    ]);
    expect(is!.privileges).toEqual(was!.privileges);
    // The reader role may read each of them; nothing else is granted to it.
    for (const v of after)
      expect(v.privileges.filter((p) => p.startsWith('ddsync_reader:'))).toEqual(['ddsync_reader:SELECT']);
  });

  it('upgrades a warehouse the migrations left at 0025 by making again only the views changed since, and their users', async () => {
    await withWarehouse('viewsupgrade', async (db) => {
      const upTo0025 = scratchDir('migrations');
      for (const f of (await readdir(MIGRATIONS_DIR)).filter((f) => f < '0026'))
        await copyFile(join(MIGRATIONS_DIR, f), join(upTo0025, f));
      await migrateToLatest(db, upTo0025);
      const before = await oids(db);
      const { applied, views } = await migrateToLatest(db);
      expect(applied[0]).toBe('0026_plot_geometry_types');
      expect(applied).toContain('0027_view_checksums');
      // bi_risk_overview (issue 23); the views that read the summary tables of 0028 and the per-plot
      // views that look links and findings up per plot, bi_plot_changes (issue 24); bi_warehouse_totals,
      // which uses bi_suppliers.
      const remade = [
        'bi_current_plots',
        'bi_eudr_plot_readiness',
        'bi_eudr_supplier_readiness',
        'bi_plot_changes',
        'bi_risk_overview',
        'bi_suppliers',
        'bi_warehouse_totals',
      ];
      expect([...views].sort()).toEqual(remade);
      const after = await oids(db);
      for (const name of Object.keys(before)) if (!remade.includes(name)) expect(after[name], name).toBe(before[name]);
      const files = await readViewFiles();
      expect(await recorded(db)).toEqual(Object.fromEntries(files.map((f) => [f.name, f.sha256])));
    });
  });

  it('orders the files by what the warehouse made from them says each view uses', async () => {
    const { rows } = await sql<{ view: string; uses: string }>`
      select distinct v.relname as view, u.relname as uses
      from pg_depend d
      join pg_rewrite r on r.oid = d.objid
      join pg_class v on v.oid = r.ev_class
      join pg_class u on u.oid = d.refobjid
      where d.classid = 'pg_rewrite'::regclass and d.refclassid = 'pg_class'::regclass
        and v.oid <> u.oid and u.relkind = 'v' and u.relnamespace = current_schema()::regnamespace
      order by 1, 2`.execute(fresh);
    expect(rows.length).toBeGreaterThan(5);
    const files = new Map((await readViewFiles()).map((f) => [f.name, f.uses]));
    const fromFiles = [...files].flatMap(([view, uses]) => uses.map((u) => ({ view, uses: u })));
    expect(fromFiles.sort((a, b) => `${a.view} ${a.uses}`.localeCompare(`${b.view} ${b.uses}`))).toEqual(rows);
  });

  it('makes nothing again when no file changed', async () => {
    const before = await oids(fresh);
    const again = await migrateToLatest(fresh);
    expect(again.applied).toEqual([]);
    expect(again.views).toEqual([]);
    expect(await oids(fresh)).toEqual(before);
  });

  it('makes a changed view again with every view that uses it, in one step; the others stay; the reader keeps its grant', async () => {
    await withWarehouse('viewschange', async (db, url) => {
      await migrateToLatest(db);
      const dir = await copyOfViews();
      await edit(dir, 'bi_country_risk.sql', (t) =>
        t.replace(
          "comment on column bi_country_risk.level is 'low, standard or high;",
          "comment on column bi_country_risk.level is 'The level: low, standard or high;",
        ),
      );
      const before = await oids(db);
      const { views } = await migrateToLatest(db, MIGRATIONS_DIR, dir);
      const users = await usersOf('bi_country_risk');
      // As the files are today: these views read bi_country_risk, directly or through another; the
      // others are left alone.
      expect(users).toEqual(['bi_eudr_supplier_readiness', 'bi_risk_overview', 'bi_suppliers', 'bi_warehouse_totals']);
      expect(views[0]).toBe('bi_country_risk');
      expect([...views].sort()).toEqual(['bi_country_risk', ...users].sort());
      const after = await oids(db);
      for (const name of Object.keys(before)) {
        if (views.includes(name)) expect(after[name], name).not.toBe(before[name]);
        else expect(after[name], name).toBe(before[name]);
      }
      const { rows } = await sql<{
        comment: string;
      }>`select col_description('bi_country_risk'::regclass, 2) as comment`.execute(db);
      expect(rows[0]!.comment).toMatch(/^The level: low, standard or high;/);
      const files = await readViewFiles(dir);
      expect(await recorded(db)).toEqual(Object.fromEntries(files.map((f) => [f.name, f.sha256])));

      // A login in the reader role reads every view made again.
      const login = `bi_${Math.random().toString(36).slice(2, 8)}`;
      await sql.raw(`create role ${login} login password 'views-pw' in role ddsync_reader`).execute(db);
      const bi = new pg.Client({ connectionString: url.replace(/\/\/[^@]+@/, `//${login}:views-pw@`) });
      await bi.connect();
      try {
        for (const name of views) expect((await bi.query(`select * from ${name}`)).fields.length).toBeGreaterThan(2);
      } finally {
        await bi.end();
        await sql.raw(`drop role ${login}`).execute(db);
      }
      // Once made, the same files change nothing.
      expect((await migrateToLatest(db, MIGRATIONS_DIR, dir)).views).toEqual([]);
    });
  });

  it('makes again, in the same transaction, the views a later migration drops to change a column they read', async () => {
    await withWarehouse('viewsmigration', async (db) => {
      await migrateToLatest(db);
      // A migration after these: Postgres refuses to change a column a view reads while the view stands.
      const dir = scratchDir('migrations');
      for (const f of await readdir(MIGRATIONS_DIR)) await copyFile(join(MIGRATIONS_DIR, f), join(dir, f));
      await writeFile(
        join(dir, '0999_plot_bbox_numeric.sql'),
        'drop view bi_current_plots cascade;\nalter table plots alter column bbox_min_lon type numeric(10, 6);\n',
      );
      const { applied, views } = await migrateToLatest(db, dir, VIEWS_DIR);
      expect(applied).toEqual(['0999_plot_bbox_numeric']);
      expect([...views].sort()).toEqual(['bi_current_plots', ...(await usersOf('bi_current_plots'))].sort());
      const { rows } = await sql<{ type: string }>`
        select format_type(atttypid, atttypmod) as type from pg_attribute
        where attrelid = 'bi_current_plots'::regclass and attname = 'bbox_min_lon'`.execute(db);
      expect(rows[0]!.type).toBe('numeric(10,6)');
    });
  });

  it('makes a missing view again, and drops a view whose file is gone', async () => {
    await withWarehouse('viewsgone', async (db) => {
      await migrateToLatest(db);
      await sql`drop view bi_pdf_archive`.execute(db);
      expect((await migrateToLatest(db)).views).toEqual(['bi_pdf_archive']);
      const dir = await copyOfViews();
      await rm(join(dir, 'bi_transaction_errors.sql'));
      expect((await migrateToLatest(db, MIGRATIONS_DIR, dir)).views).toEqual([]);
      const { rows } = await sql<{
        view: string | null;
      }>`select to_regclass('bi_transaction_errors')::text as view`.execute(db);
      expect(rows[0]!.view).toBeNull();
      expect(Object.keys(await recorded(db))).not.toContain('bi_transaction_errors');
      // Back in the folder, it is made again.
      expect((await migrateToLatest(db)).views).toEqual(['bi_transaction_errors']);
    });
  });

  it('refuses, changing nothing, to drop a view that a view outside sql/views uses', async () => {
    await withWarehouse('viewsforeign', async (db) => {
      await migrateToLatest(db);
      await sql`create view my_overview as select supplier_name, plots from bi_risk_overview`.execute(db);
      const dir = await copyOfViews();
      await edit(dir, 'bi_risk_overview.sql', (t) =>
        t.replace("'Country of the plots.'", "'Country of the plots (ISO 3166 alpha-2).'"),
      );
      const before = { oids: await oids(db), recorded: await recorded(db) };
      await expect(migrateToLatest(db, MIGRATIONS_DIR, dir)).rejects.toThrow(
        /^the views bi_risk_overview are to be made again from sql\/views, but objects outside sql\/views use them \(view my_overview depends on view bi_risk_overview\): drop those, migrate, and create them again$/,
      );
      expect(await oids(db)).toEqual(before.oids);
      expect(await recorded(db)).toEqual(before.recorded);
    });
  });

  it('refuses a view file that breaks, naming it, and keeps the migrations of that run undone with it', async () => {
    await withWarehouse('viewsbroken', async (db) => {
      const dir = await copyOfViews();
      await edit(dir, 'bi_pdf_archive.sql', (t) =>
        t.replace('from survey_response_pdfs;', 'from survey_response_pdf;'),
      );
      await expect(migrateToLatest(db, MIGRATIONS_DIR, dir)).rejects.toThrow(
        /^sql\/views\/bi_pdf_archive\.sql failed: relation "survey_response_pdf" does not exist$/,
      );
      // One transaction: no migration of the run stayed applied.
      const { rows } = await sql<{ plots: string | null }>`select to_regclass('plots')::text as plots`.execute(db);
      expect(rows[0]!.plots).toBeNull();
      // With the files as they are, the same warehouse migrates, every view as its file says.
      await migrateToLatest(db);
      const files = await readViewFiles();
      expect(await recorded(db)).toEqual(Object.fromEntries(files.map((f) => [f.name, f.sha256])));
    });
  });

  it('makes a changed view once when two workers start at the same time', async () => {
    await withWarehouse('viewsrace', async (db, url) => {
      await migrateToLatest(db);
      const dir = await copyOfViews();
      await edit(dir, 'bi_pdf_archive.sql', (t) => t.replace("'Stored.'", "'Stored in the archive.'"));
      const other = openWarehouse(url, 2);
      try {
        const [a, b] = await Promise.all([
          migrateToLatest(db, MIGRATIONS_DIR, dir),
          migrateToLatest(other, MIGRATIONS_DIR, dir),
        ]);
        expect([a.views, b.views].sort()).toEqual([[], ['bi_pdf_archive']]);
      } finally {
        await other.destroy();
      }
    });
  });
});
