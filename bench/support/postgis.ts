// bench:refresh --postgis: a PostgreSQL 15 cluster from Debian's packages (as the postgis test suite
// starts it) holding two warehouses, one with PostGIS and one without, so the two full refreshes
// differ only by the spatial path: same server, same settings, same simulator, same worker build.
import { mkdtemp, rm } from 'node:fs/promises';
import { resolve } from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import type { Warehouse } from '../../warehouse/database.ts';
import { missingPostgis, POSTGIS_PACKAGE, startPostgisCluster } from '../../test/support/postgis-cluster.ts';
import { packagePath } from '../../platform/package-root.ts';
import type { Teardown } from './stack.ts';

/** The role owning the plain warehouse: not a superuser, so ddsync may not create PostGIS there (mode none). */
const PLAIN_ROLE = 'bench_plain';

export interface PostgisBenchCluster {
  dataDir: string;
  /** A superuser's URL: migrating creates PostGIS (mode postgis). */
  postgisUrl: string;
  /** The plain role's URL: PostGIS is available but may not be created (mode none). */
  plainUrl: string;
}

/** Fails before anything starts, naming the package, when this machine cannot run a PostGIS cluster. */
export function requirePostgis(): void {
  const missing = missingPostgis();
  if (missing.length > 0)
    throw new Error(
      `--postgis needs PostgreSQL 15 with PostGIS from Debian: ${missing.join('; ')}. Install it with: apt-get install -y ${POSTGIS_PACKAGE}`,
    );
}

export async function startPostgisWarehouses(teardown: Teardown): Promise<PostgisBenchCluster> {
  requirePostgis();
  const dir = await mkdtemp(packagePath('.ddsync', 'bench', 'postgis-'));
  teardown.add('PostGIS scratch directory', () => rm(dir, { recursive: true, force: true }));
  const dataDir = resolve(dir, 'postgres');
  const cluster = await startPostgisCluster(dataDir);
  teardown.add('PostGIS cluster', () => cluster.stop());
  const stamp = Date.now();
  const admin = new pg.Client({ connectionString: cluster.urlFor('postgres') });
  admin.on('error', () => undefined);
  await admin.connect();
  try {
    await admin.query(`create role ${PLAIN_ROLE} login`);
    // Cluster-wide, made by migration 0002 where the role may; the plain role may not create roles.
    await admin.query('create role ddsync_reader nologin');
    await admin.query(`create database plain_${stamp} owner ${PLAIN_ROLE}`);
    await admin.query(`create database postgis_${stamp}`);
    // Per-function times (pg_stat_user_functions): the geom triggers' cost without pg_stat_statements.
    for (const db of [`plain_${stamp}`, `postgis_${stamp}`])
      await admin.query(`alter database ${db} set track_functions = 'pl'`);
  } finally {
    await admin.end();
  }
  return {
    dataDir,
    postgisUrl: cluster.urlFor(`postgis_${stamp}`),
    plainUrl: cluster.urlFor(`plain_${stamp}`).replace('postgres@', `${PLAIN_ROLE}@`),
  };
}

export interface FunctionCost {
  name: string;
  calls: number;
  totalMs: number;
  selfMs: number;
}

/** What the spatial path did in a warehouse, read after a refresh. */
export interface SpatialFacts {
  mode: string;
  /** Seconds the last overlap check took (spatial_state), null when it did not run. */
  overlapsSeconds: number | null;
  overlapsError: string | null;
  /** Plots with a GeoJSON object but neither geom nor a reason: must be 0 (geom in step). */
  plotsOutOfStep: number;
  plotsWithGeom: number;
  /** plpgsql functions' times (the geom triggers, spatial_geom_of): read after the worker exits, which flushes its sessions' counts. */
  functions: FunctionCost[];
}

export async function readSpatialFacts(db: Warehouse): Promise<SpatialFacts> {
  const state = await sql<{ mode: string; overlaps_seconds: number | null; overlaps_error: string | null }>`
    select mode, overlaps_seconds, overlaps_error from spatial_state`.execute(db);
  const s = state.rows[0];
  if (!s) throw new Error('spatial_state is empty: the warehouse is not migrated');
  let plotsOutOfStep = 0;
  let plotsWithGeom = 0;
  if (s.mode === 'postgis') {
    const { rows } = await sql<{ out_of_step: number; with_geom: number }>`
      select count(*) filter (where geom is null and geom_issue is null and jsonb_typeof(geometry) = 'object'
                                and geometry <> '{}'::jsonb)::int as out_of_step,
        count(geom)::int as with_geom
      from plots`.execute(db);
    plotsOutOfStep = rows[0]!.out_of_step;
    plotsWithGeom = rows[0]!.with_geom;
  }
  const functions = await sql<{ name: string; calls: string; total_ms: number; self_ms: number }>`
    select funcname as name, calls, total_time as total_ms, self_time as self_ms
    from pg_stat_user_functions order by total_time desc limit 10`.execute(db);
  return {
    mode: s.mode,
    overlapsSeconds: s.overlaps_seconds,
    overlapsError: s.overlaps_error,
    plotsOutOfStep,
    plotsWithGeom,
    functions: functions.rows.map((r) => ({
      name: r.name,
      calls: Number(r.calls),
      totalMs: r.total_ms,
      selfMs: r.self_ms,
    })),
  };
}
