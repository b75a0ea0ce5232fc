import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes, randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';
import { openWarehouse, type Warehouse } from '../../warehouse/database.ts';
import { migrateToLatest } from '../../warehouse/migrate.ts';
import { ensureSpatial } from '../../warehouse/spatial/ensure.ts';
import { describeSpatialMode, readSpatialMode } from '../../warehouse/spatial/mode.ts';
import { checkOverlapsAfterRun } from '../../warehouse/spatial/overlaps.ts';
import { createTestDatabase } from '../support/databases.ts';
import { embeddedStack } from '../support/stack.ts';
import { bowTie, square } from '../support/test-shapes.ts';

async function insertPlot(db: Warehouse, id: string, geometry: unknown): Promise<void> {
  await sql`
    insert into plots (id, geometry, geometry_valid, content_hash, history_hash)
    values (${id}, ${JSON.stringify(geometry)}::jsonb, true, 'h', 'h')`.execute(db);
}

const plotGeom = async (db: Warehouse, id: string) =>
  (
    await sql<{ geom: string | null; geom_issue: string | null }>`
      select ST_AsText(geom) as geom, geom_issue from plots where id = ${id}`.execute(db)
  ).rows[0];

describe('migrations on a warehouse with PostGIS', () => {
  let db: Warehouse;
  beforeAll(async () => {
    db = openWarehouse(await createTestDatabase('spatial'), 4);
    await migrateToLatest(db);
  });
  afterAll(() => db?.destroy());

  it('turn the spatial mode on: columns, GiST indexes, triggers, comments, and the mode recorded', async () => {
    const columns = await sql<{ name: string; type: string; comment: string | null }>`
      select c.relname || '.' || a.attname as name, format_type(a.atttypid, a.atttypmod) as type,
        col_description(c.oid, a.attnum) as comment
      from pg_attribute a join pg_class c on c.oid = a.attrelid
      where c.relname in ('plots', 'analyses') and a.attname like '%geom%' and a.attname not like '%geometry%'
        and not a.attisdropped order by 1`.execute(db);
    expect(columns.rows.map((r) => [r.name, r.type])).toEqual([
      ['analyses.deforested_geom', 'geometry(Geometry,4326)'],
      ['analyses.deforested_geom_issue', 'text'],
      ['plots.geom', 'geometry(Geometry,4326)'],
      ['plots.geom_issue', 'text'],
    ]);
    for (const c of columns.rows) expect(c.comment, c.name).toMatch(/\w{10,}/);
    const indexes = await sql<{ indexname: string; indexdef: string }>`
      select indexname, indexdef from pg_indexes where indexname in ('plots_geom', 'analyses_deforested_geom') order by 1`.execute(
      db,
    );
    expect(indexes.rows.map((r) => r.indexname)).toEqual(['analyses_deforested_geom', 'plots_geom']);
    for (const i of indexes.rows) expect(i.indexdef).toMatch(/USING gist/);
    const triggers = await sql<{ tgname: string }>`
      select tgname from pg_trigger where tgname in ('plots_geom_sync', 'analyses_geom_sync') order by 1`.execute(db);
    expect(triggers.rows.map((r) => r.tgname)).toEqual(['analyses_geom_sync', 'plots_geom_sync']);
    // Every table, view and column of ddsync has its comment here too (PostGIS's own objects aside).
    const uncommented = await sql<{ object: string }>`
      select c.relname || coalesce('.' || a.attname, '') as object
      from pg_class c join pg_namespace n on n.oid = c.relnamespace
      left join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
      where n.nspname = 'public' and c.relkind in ('r', 'v', 'm', 'p', 'f')
        and not exists (select 1 from pg_depend d where d.objid = c.oid and d.deptype = 'e')
        and coalesce(case when a.attnum is null then obj_description(c.oid, 'pg_class') else col_description(c.oid, a.attnum) end, '') = ''
      order by 1`.execute(db);
    expect(uncommented.rows.map((r) => r.object)).toEqual([]);

    const mode = await readSpatialMode(db);
    expect(mode).toMatchObject({ mode: 'postgis', version: expect.stringMatching(/^3\./), reason: null });
    expect(describeSpatialMode(mode)).toMatch(/^PostGIS 3\.\d+ — spatial columns and overlap checks on$/);
  });

  it('keep geom in step with the GeoJSON on insert and update, and flag a bad shape without failing the write', async () => {
    await insertPlot(db, 'trigger-ok', square(10, 5));
    await insertPlot(db, 'trigger-bow', bowTie(10, 5));
    await insertPlot(db, 'trigger-none', {});
    expect(await plotGeom(db, 'trigger-ok')).toEqual({
      geom: 'POLYGON((10 5,10.001 5,10.001 5.001,10 5.001,10 5))',
      geom_issue: null,
    });
    expect(await plotGeom(db, 'trigger-bow')).toEqual({
      geom: null,
      geom_issue: expect.stringMatching(/^invalid geometry: Self-intersection at POINT/),
    });
    expect(await plotGeom(db, 'trigger-none')).toEqual({ geom: null, geom_issue: null });
    // Fixed at the service: the next write makes the geometry.
    await sql`update plots set geometry = ${JSON.stringify(square(10, 5))}::jsonb where id = 'trigger-bow'`.execute(db);
    expect(await plotGeom(db, 'trigger-bow')).toMatchObject({
      geom: expect.stringMatching(/^POLYGON/),
      geom_issue: null,
    });
    // Unreadable and out-of-range shapes are kept, flagged, and the write goes through.
    await sql`update plots set geometry = '{"type":"Polygon","coordinates":[[[0,0],[1,1]]]}'::jsonb where id = 'trigger-ok'`.execute(
      db,
    );
    expect(await plotGeom(db, 'trigger-ok')).toEqual({ geom: null, geom_issue: expect.stringMatching(/geometry/) });
    await insertPlot(db, 'trigger-range', square(200, 5));
    expect(await plotGeom(db, 'trigger-range')).toEqual({
      geom: null,
      geom_issue: 'coordinates outside the WGS84 range (longitude -180..180, latitude -90..90)',
    });
    // An update that leaves the geometry alone leaves geom alone.
    await sql`update plots set name = 'renamed', geometry = geometry where id = 'trigger-bow'`.execute(db);
    expect((await plotGeom(db, 'trigger-bow'))?.geom).toMatch(/^POLYGON/);

    await sql`
      insert into analyses (id, plot_id, deforested_geometry, content_hash)
      values ('an-1', 'trigger-bow', ${JSON.stringify(square(10, 5, 0.0005))}::jsonb, 'h'),
             ('an-2', 'trigger-bow', '{}'::jsonb, 'h')`.execute(db);
    const analyses = await sql<{ id: string; geom: string | null; issue: string | null }>`
      select id, ST_GeometryType(deforested_geom) as geom, deforested_geom_issue as issue from analyses order by id`.execute(
      db,
    );
    expect(analyses.rows).toEqual([
      { id: 'an-1', geom: 'ST_Polygon', issue: null },
      { id: 'an-2', geom: null, issue: null },
    ]);
  });

  it('ensureSpatial is idempotent: nothing made, no lock taken, the mode kept', async () => {
    expect(await ensureSpatial(db)).toEqual({ mode: 'postgis', version: expect.any(String), reason: null, made: [] });
    expect((await migrateToLatest(db)).spatial).toEqual({
      mode: 'postgis',
      version: expect.any(String),
      reason: null,
      made: [],
    });
  });
});

describe('a warehouse whose role may not create PostGIS, then gains it', () => {
  let admin: pg.Client;
  let db: Warehouse;
  const role = `owner_${randomBytes(4).toString('hex')}`;
  const database = `spatial_role_${randomBytes(4).toString('hex')}`;
  beforeAll(async () => {
    const template = embeddedStack().postgresUrlTemplate;
    admin = new pg.Client({ connectionString: template.replace('{database}', 'postgres') });
    await admin.connect();
    await admin.query(`create role ${role} login`);
    await admin.query(`create database ${database} owner ${role}`);
    // The cluster trusts local connections: the role needs no password here.
    db = openWarehouse(template.replace('postgres@', `${role}@`).replace('{database}', database), 4);
  });
  afterAll(async () => {
    await db?.destroy();
    await admin?.end();
  });

  it('is in mode none with the reason, never failing, and takes up PostGIS and fills geom at the next migrate', async () => {
    const first = await migrateToLatest(db);
    expect(first.spatial).toMatchObject({
      mode: 'none',
      reason: expect.stringMatching(/may not create the postgis extension/),
    });
    const mode = await readSpatialMode(db);
    expect(describeSpatialMode(mode)).toMatch(
      /^no PostGIS — GeoJSON only; overlap check not run \(role owner_\w+ may not create the postgis extension/,
    );
    const geomColumns = await sql<{ n: number }>`
      select count(*)::int as n from information_schema.columns where column_name in ('geom', 'deforested_geom')`.execute(
      db,
    );
    expect(geomColumns.rows[0]!.n).toBe(0);
    expect((await sql<{ on: boolean }>`select eudr_overlap_checked() as on`.execute(db)).rows[0]!.on).toBe(false);
    expect(await checkOverlapsAfterRun(db, randomUUID())).toEqual({ ran: false, reason: 'no PostGIS' });

    // Data arrives without PostGIS; then a superuser installs it.
    await insertPlot(db, 'before-a', square(20, 1, 0.01));
    await insertPlot(db, 'before-b', square(20, 1, 0.01));
    await insertPlot(db, 'before-bow', bowTie(21, 1));
    const dbAdmin = new pg.Client({
      connectionString: embeddedStack().postgresUrlTemplate.replace('{database}', database),
    });
    await dbAdmin.connect();
    await dbAdmin.query('create extension postgis');
    await dbAdmin.end();

    const second = await migrateToLatest(db);
    expect(second.applied).toEqual([]);
    expect(second.spatial).toMatchObject({ mode: 'postgis', reason: null });
    expect(second.spatial!.made).toEqual(
      expect.arrayContaining(['column plots.geom', 'trigger plots_geom_sync', 'geom of 3 plots']),
    );
    expect((await plotGeom(db, 'before-a'))?.geom).toMatch(/^POLYGON/);
    expect(await plotGeom(db, 'before-bow')).toMatchObject({
      geom: null,
      geom_issue: expect.stringMatching(/Self-intersection/),
    });
    // Not compared yet: overlap_checked stays false until a refresh's end runs the check.
    expect((await sql<{ on: boolean }>`select eudr_overlap_checked() as on`.execute(db)).rows[0]!.on).toBe(false);
    expect((await ensureSpatial(db))?.made).toEqual([]);

    const runId = randomUUID();
    expect(await checkOverlapsAfterRun(db, runId)).toMatchObject({
      ran: true,
      pairs: 1,
      findings: 2,
      opened: 2,
      closed: 0,
    });
    expect((await sql<{ on: boolean }>`select eudr_overlap_checked() as on`.execute(db)).rows[0]!.on).toBe(true);
    const findings = await sql<{ plot_id: string; code: string; severity: string }>`
      select plot_id, code, severity from eudr_findings where is_current order by plot_id`.execute(db);
    // Own-less, supplier-less plots share no claimant: land claimed twice.
    expect(findings.rows).toEqual([
      { plot_id: 'before-a', code: 'overlap_other_supplier', severity: 'blocking' },
      { plot_id: 'before-b', code: 'overlap_other_supplier', severity: 'blocking' },
    ]);
    // Checked, and nothing changed in this run: not run again.
    expect(await checkOverlapsAfterRun(db, randomUUID())).toEqual({ ran: false, reason: 'no plot changed' });

    // PostGIS dropped again: back to mode none, and plots are still written (no trigger left to fail).
    const dropper = new pg.Client({
      connectionString: embeddedStack().postgresUrlTemplate.replace('{database}', database),
    });
    await dropper.connect();
    await dropper.query('drop extension postgis cascade');
    await dropper.end();
    expect((await migrateToLatest(db)).spatial).toMatchObject({ mode: 'none' });
    await insertPlot(db, 'after-drop', square(22, 1));
    expect((await sql<{ on: boolean }>`select eudr_overlap_checked() as on`.execute(db)).rows[0]!.on).toBe(false);
  });
});
