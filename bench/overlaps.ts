// The PostGIS side at scale: N simulator plots written into a PostGIS warehouse (the geom trigger's
// cost, against the same insert with the trigger disabled), then the overlap check over all of them
// (docs/postgis.md). Needs Debian's postgresql-15-postgis-3; starts and removes its own cluster.
// Usage: npm run bench:overlaps -- --plots N [--suppliers S]
import { mkdtemp, rm } from 'node:fs/promises';
import { resolve } from 'node:path';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';
import { CliCommand, wholeNumber } from '../cli/usage.ts';
import { startSimulator } from '../simulator/index.ts';
import { openWarehouse, type Warehouse } from '../warehouse/database.ts';
import { migrateToLatest } from '../warehouse/migrate.ts';
import { checkOverlapsAfterRun } from '../warehouse/spatial/overlaps.ts';
import { toJsonRecordset } from '../warehouse/refresh/json-recordset.ts';
import { startPostgisCluster } from '../test/support/postgis-cluster.ts';

const o = new CliCommand('bench:overlaps')
  .requiredOption('--plots <N>', 'plots the simulator serves', wholeNumber('--plots'))
  .option('--suppliers <N>', 'direct suppliers', wholeNumber('--suppliers', 1, 10_000), 10)
  .parse(process.argv)
  .opts<{ plots: number; suppliers: number }>();

const BATCH = 5_000;

/**
 * The most heap the process used above `base` while `work` ran, sampled every 5 ms and whenever the
 * event loop is free (a synchronous stretch between samples is missed, so this is a lower bound).
 * The simulator's plots live in this process too: the baseline is taken just before, after a GC when
 * node runs with --expose-gc (NODE_OPTIONS=--expose-gc npm run bench:overlaps ...).
 */
async function heapPeak<T>(work: () => Promise<T>): Promise<{ result: T; heapPeakMB: number }> {
  (globalThis as { gc?: () => void }).gc?.();
  const base = process.memoryUsage().heapUsed;
  let peak = base;
  const sample = () => {
    peak = Math.max(peak, process.memoryUsage().heapUsed);
  };
  const timer = setInterval(sample, 5);
  try {
    const result = await work();
    sample();
    return { result, heapPeakMB: Math.round((peak - base) / 1e5) / 10 };
  } finally {
    clearInterval(timer);
  }
}

async function writePlots(db: Warehouse, rows: Array<{ id: string; geometry: string; suppliers: string[] }>) {
  for (let i = 0; i < rows.length; i += BATCH) {
    const batch = rows.slice(i, i + BATCH);
    const json = toJsonRecordset(
      batch.map((r) => ({ id: r.id, geometry: r.geometry })),
      ['geometry'],
    );
    await sql`
      insert into plots (id, geometry, geometry_valid, content_hash, history_hash)
      select r.id, r.geometry, true, 'h', 'h' from json_to_recordset(${json}::json) as r(id text, geometry jsonb)`.execute(
      db,
    );
    const links = batch.flatMap((r) => r.suppliers.map((s) => ({ plot_id: r.id, supplier_id: s })));
    await sql`
      insert into plot_suppliers (plot_id, supplier_id)
      select * from json_to_recordset(${JSON.stringify(links)}::json) as r(plot_id text, supplier_id text)`.execute(db);
  }
}

const dir = await mkdtemp(resolve('.ddsync', 'bench-overlaps-'));
const cluster = await startPostgisCluster(resolve(dir, 'postgres'));
const sim = await startSimulator({ port: 0, plots: o.plots, suppliers: o.suppliers });
try {
  const admin = new pg.Client({ connectionString: cluster.urlFor('postgres') });
  await admin.connect();
  await admin.query('create database bench');
  await admin.end();
  const db = openWarehouse(cluster.urlFor('bench'), 4);
  await migrateToLatest(db);
  const rows = [...sim.control.plots()].map(({ plot, supplierIds }) => ({
    id: plot['id'] as string,
    geometry: JSON.stringify(plot['geometry']),
    suppliers: supplierIds,
  }));

  await sql`alter table plots disable trigger plots_geom_sync`.execute(db);
  let t = performance.now();
  await writePlots(db, rows);
  const plain = (performance.now() - t) / 1000;
  await sql`truncate plots, plot_suppliers`.execute(db);
  await sql`alter table plots enable trigger plots_geom_sync`.execute(db);
  t = performance.now();
  await writePlots(db, rows);
  const withTrigger = (performance.now() - t) / 1000;
  await sql`analyze plots`.execute(db);
  const filled = await sql<{ geom: number; issues: number }>`
    select count(geom)::int as geom, count(geom_issue)::int as issues from plots`.execute(db);

  t = performance.now();
  const { result: outcome, heapPeakMB } = await heapPeak(() => checkOverlapsAfterRun(db, randomUUID()));
  const check = (performance.now() - t) / 1000;
  t = performance.now();
  const again = await checkOverlapsAfterRun(db, randomUUID());
  const skipped = (performance.now() - t) / 1000;
  // The check forced over the same plots (as after a run that changed one plot): nothing to write.
  await sql`update spatial_state set overlaps_checked_at = null`.execute(db);
  t = performance.now();
  const { result: rerun, heapPeakMB: rerunHeapPeakMB } = await heapPeak(() => checkOverlapsAfterRun(db, randomUUID()));
  const rerunSeconds = (performance.now() - t) / 1000;
  console.log(
    JSON.stringify({
      plots: rows.length,
      insertSeconds: { withoutTrigger: plain, withTrigger },
      geomFilled: filled.rows[0],
      overlapCheck: { seconds: check, heapPeakMB, outcome },
      unchangedRun: { seconds: skipped, outcome: again },
      recomputedUnchanged: { seconds: rerunSeconds, heapPeakMB: rerunHeapPeakMB, outcome: rerun },
    }),
  );
  await db.destroy();
} finally {
  await sim.close();
  await cluster.stop();
  await rm(dir, { recursive: true, force: true });
}
