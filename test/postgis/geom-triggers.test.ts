import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFile } from 'node:fs/promises';
import { sql } from 'kysely';
import { openWarehouse, type Warehouse } from '../../warehouse/database.ts';
import { migrateToLatest } from '../../warehouse/migrate.ts';
import { ensureSpatial } from '../../warehouse/spatial/ensure.ts';
import { packagePath } from '../../platform/package-root.ts';
import { createTestDatabase } from '../support/databases.ts';
import { bowTie, square } from '../support/test-shapes.ts';

// Migration 0032's triggers (docs/postgis.md, "Triggers keep geom in step"): fired only when there is
// a shape to read or a geom to clear, and taken up by a warehouse that 0016 set up.

interface GeomRow {
  id: string;
  geom: string | null;
  issue: string | null;
}

const plotGeoms = async (db: Warehouse): Promise<GeomRow[]> =>
  (
    await sql<GeomRow>`
      select id, ST_AsText(geom) as geom, geom_issue as issue from plots order by id`.execute(db)
  ).rows;
const analysisGeoms = async (db: Warehouse): Promise<GeomRow[]> =>
  (
    await sql<GeomRow>`
      select id, ST_AsText(deforested_geom) as geom, deforested_geom_issue as issue from analyses order by id`.execute(
      db,
    )
  ).rows;
const setPlot = (db: Warehouse, id: string, geometry: unknown) =>
  sql`update plots set geometry = ${JSON.stringify(geometry)}::jsonb where id = ${id}`.execute(db);
const setAnalysis = (db: Warehouse, id: string, geometry: unknown) =>
  sql`update analyses set deforested_geometry = ${JSON.stringify(geometry)}::jsonb where id = ${id}`.execute(db);

/** geom and geom_issue as spatial_geom_of computes them from the GeoJSON now, for every row. */
const outOfStep = async (db: Warehouse) =>
  (
    await sql<{ id: string }>`
      select p.id from plots p, lateral spatial_geom_of(p.geometry) g
      where p.geom is distinct from g.geom or p.geom_issue is distinct from g.issue
      union all
      select a.id from analyses a, lateral spatial_geom_of(a.deforested_geometry) g
      where a.deforested_geom is distinct from g.geom or a.deforested_geom_issue is distinct from g.issue`.execute(db)
  ).rows;

describe('the geom triggers of migration 0032', () => {
  let db: Warehouse;
  beforeAll(async () => {
    db = openWarehouse(await createTestDatabase('geom_triggers'), 2);
    await migrateToLatest(db);
  });
  afterAll(() => db?.destroy());

  it('fire only for a shape or a geom to clear, and keep geom in step through every change of the GeoJSON', async () => {
    const when = await sql<{ tgname: string; def: string }>`
      select tgname, pg_get_triggerdef(oid) as def from pg_trigger
      where tgname in ('plots_geom_sync', 'analyses_geom_sync') order by 1`.execute(db);
    expect(when.rows.map((r) => r.tgname)).toEqual(['analyses_geom_sync', 'plots_geom_sync']);
    for (const t of when.rows) expect(t.def, t.tgname).toMatch(/ WHEN \(/);

    await sql`
      insert into plots (id, geometry, geometry_valid, content_hash, history_hash) values
        ('p-square', ${JSON.stringify(square(10, 5))}::jsonb, true, 'h', 'h'),
        ('p-bow', ${JSON.stringify(bowTie(10, 5))}::jsonb, false, 'h', 'h'),
        ('p-empty', '{}'::jsonb, false, 'h', 'h'),
        ('p-null', null, false, 'h', 'h'),
        ('p-text', '"not a shape"'::jsonb, false, 'h', 'h')`.execute(db);
    await sql`
      insert into analyses (id, plot_id, deforested_geometry, content_hash) values
        ('a-square', 'p-square', ${JSON.stringify(square(10, 5, 0.0005))}::jsonb, 'h'),
        ('a-empty', 'p-square', '{}'::jsonb, 'h')`.execute(db);
    expect(await plotGeoms(db)).toEqual([
      { id: 'p-bow', geom: null, issue: expect.stringMatching(/^invalid geometry: Self-intersection at POINT/) },
      { id: 'p-empty', geom: null, issue: null },
      { id: 'p-null', geom: null, issue: null },
      { id: 'p-square', geom: 'POLYGON((10 5,10.001 5,10.001 5.001,10 5.001,10 5))', issue: null },
      { id: 'p-text', geom: null, issue: null },
    ]);
    expect(await analysisGeoms(db)).toEqual([
      { id: 'a-empty', geom: null, issue: null },
      { id: 'a-square', geom: expect.stringMatching(/^POLYGON/), issue: null },
    ]);

    // A shape removed at the service: the geom (or the reason) it left must go with it.
    await setPlot(db, 'p-square', {});
    await setPlot(db, 'p-bow', {});
    await setAnalysis(db, 'a-square', {});
    // A shape arriving where there was none.
    await setPlot(db, 'p-empty', square(11, 5));
    await setPlot(db, 'p-text', bowTie(11, 6));
    await setAnalysis(db, 'a-empty', square(12, 5, 0.0005));
    expect(await plotGeoms(db)).toEqual([
      { id: 'p-bow', geom: null, issue: null },
      { id: 'p-empty', geom: 'POLYGON((11 5,11.001 5,11.001 5.001,11 5.001,11 5))', issue: null },
      { id: 'p-null', geom: null, issue: null },
      { id: 'p-square', geom: null, issue: null },
      { id: 'p-text', geom: null, issue: expect.stringMatching(/^invalid geometry: Self-intersection/) },
    ]);
    expect(await analysisGeoms(db)).toEqual([
      { id: 'a-empty', geom: expect.stringMatching(/^POLYGON/), issue: null },
      { id: 'a-square', geom: null, issue: null },
    ]);
    // Flagged shape to none, and a shape to a value that is not one (a string): nothing left behind.
    await setPlot(db, 'p-text', null);
    await setPlot(db, 'p-empty', 'not a shape');
    expect(await outOfStep(db)).toEqual([]);
    expect((await plotGeoms(db)).filter((r) => r.geom !== null || r.issue !== null)).toEqual([]);
  });

  it('are taken up by a warehouse that 0016 set up, without filling again or forgetting the overlap check', async () => {
    // The warehouse as 0016's setup leaves it: its function bodies and its triggers without WHEN.
    const m16 = await readFile(packagePath('sql', 'migrations', '0016_postgis.sql'), 'utf8');
    const setup16 = m16
      .slice(
        m16.indexOf('create or replace function ddsync_spatial_setup()'),
        m16.indexOf('comment on function ddsync_spatial_setup()'),
      )
      .replace('function ddsync_spatial_setup()', 'function setup_as_0016()');
    await sql.raw(setup16).execute(db);
    await sql`drop trigger plots_geom_sync on plots`.execute(db);
    await sql`drop trigger analyses_geom_sync on analyses`.execute(db);
    await sql`drop function plots_geom_sync(), analyses_geom_sync(), spatial_geom_of(jsonb)`.execute(db);
    const made16 = await sql<{ made: { made: string[] } }>`select setup_as_0016() as made`.execute(db);
    expect(made16.rows[0]!.made.made).toEqual(
      expect.arrayContaining(['function spatial_geom_of', 'trigger plots_geom_sync', 'trigger analyses_geom_sync']),
    );
    const untriggered = await sql<{ n: number }>`
      select count(*)::int as n from pg_trigger where tgname in ('plots_geom_sync', 'analyses_geom_sync') and tgqual is null`.execute(
      db,
    );
    expect(untriggered.rows[0]!.n).toBe(2);
    await sql`update spatial_state set overlaps_checked_at = '2026-11-26T08:00:00Z'`.execute(db);
    const before = await sql<{ id: string; xmin: string }>`select id, xmin::text from plots order by id`.execute(db);

    const upgraded = await ensureSpatial(db);
    expect(upgraded?.made.sort()).toEqual([
      'function analyses_geom_sync',
      'function plots_geom_sync',
      'function spatial_geom_of',
      'trigger analyses_geom_sync',
      'trigger plots_geom_sync',
    ]);
    // The same answers: no row rewritten, the last overlap check still stands.
    expect(
      (await sql<{ id: string; xmin: string }>`select id, xmin::text from plots order by id`.execute(db)).rows,
    ).toEqual(before.rows);
    const state = await sql<{ at: Date | null }>`select overlaps_checked_at as at from spatial_state`.execute(db);
    expect(state.rows[0]!.at?.toISOString()).toBe('2026-11-26T08:00:00.000Z');
    const marked = await sql<{ n: number }>`
      select count(*)::int as n from pg_proc
      where proname in ('spatial_geom_of', 'plots_geom_sync', 'analyses_geom_sync') and prosrc like '%ddsync 0032%'`.execute(
      db,
    );
    expect(marked.rows[0]!.n).toBe(3);
    expect((await ensureSpatial(db))?.made).toEqual([]);

    // And they work: a shape written after the upgrade gets its geom.
    await setPlot(db, 'p-null', square(13, 5));
    expect((await plotGeoms(db)).find((r) => r.id === 'p-null')?.geom).toMatch(/^POLYGON/);
    expect(await outOfStep(db)).toEqual([]);
  });
});
