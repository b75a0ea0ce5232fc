import { sql } from 'kysely';
import type { Warehouse } from '../database.ts';

export interface SpatialSetup {
  mode: 'postgis' | 'none';
  version: string | null;
  reason: string | null;
  /** What this call created or filled (empty on a warehouse already set up). */
  made: string[];
}

/**
 * Decides the spatial mode from the warehouse as it is now and, with PostGIS, makes what is missing
 * (columns, GiST indexes, triggers) and fills geometries written before: ddsync_spatial_setup() of
 * migration 0016, run after every migrate. So PostGIS installed after the migrations is taken up at
 * the next start, and a role that may not create the extension gets mode none with the reason, never
 * an error. Undefined when the warehouse lacks 0016 (migrations run first).
 */
export async function ensureSpatial(db: Warehouse): Promise<SpatialSetup | undefined> {
  const { rows } = await sql<{
    present: boolean;
  }>`select to_regprocedure('ddsync_spatial_setup()') is not null as present`.execute(db);
  if (!rows[0]?.present) return undefined;
  // One transaction: the function takes an advisory lock for it, so workers starting together queue.
  return db.transaction().execute(async (trx) => {
    const result = await sql<{ setup: SpatialSetup }>`select ddsync_spatial_setup() as setup`.execute(trx);
    const setup = result.rows[0]!.setup;
    if (setup.mode === 'none') await dropOrphanTriggers(trx);
    return setup;
  });
}

/**
 * PostGIS dropped after it was used (`drop extension postgis cascade` drops the geom columns and
 * spatial_geom_of, not the triggers): the triggers would then fail every write of a plot, so every
 * refresh. Dropped here, only when present; the setup makes them again if PostGIS comes back.
 */
async function dropOrphanTriggers(trx: Warehouse): Promise<void> {
  const { rows } = await sql<{ tgname: string; relname: string }>`
    select t.tgname, c.relname from pg_trigger t join pg_class c on c.oid = t.tgrelid
    where (c.relname, t.tgname) in (('plots', 'plots_geom_sync'), ('analyses', 'analyses_geom_sync'))
      and c.relnamespace = (select oid from pg_namespace where nspname = current_schema())`.execute(trx);
  for (const r of rows) await sql`drop trigger ${sql.id(r.tgname)} on ${sql.table(r.relname)}`.execute(trx);
}
