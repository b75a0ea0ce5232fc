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
    return result.rows[0]!.setup;
  });
}
