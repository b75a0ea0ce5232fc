import { sql } from 'kysely';
import type { Row, Warehouse } from '../database.ts';

/** The warehouse's spatial mode, as spatial_state records it (sql/migrations/0016_postgis.sql). */
export interface SpatialMode {
  mode: 'postgis' | 'none';
  /** PostGIS's version ("3.3.2") in mode postgis. */
  version: string | null;
  /** Why there is no PostGIS, in mode none. */
  reason: string | null;
  /** When the overlap check last completed; null when it has not (yet) run. */
  overlapsCheckedAt: Date | null;
  /** Why the last overlap check failed. */
  overlapsError: string | null;
}

/** The mode before 0016 ran (a warehouse not migrated yet): no spatial columns, nothing checked. */
const UNMIGRATED: SpatialMode = {
  mode: 'none',
  version: null,
  reason: 'the warehouse is not migrated yet (ddsync migrate)',
  overlapsCheckedAt: null,
  overlapsError: null,
};

export async function readSpatialMode(db: Warehouse): Promise<SpatialMode> {
  const { rows } = await sql<{
    present: boolean;
  }>`select to_regclass('spatial_state') is not null as present`.execute(db);
  if (!rows[0]?.present) return UNMIGRATED;
  const state = await sql<
    Pick<Row<'spatial_state'>, 'postgis_version' | 'reason' | 'overlaps_checked_at' | 'overlaps_error'> & {
      mode: 'postgis' | 'none';
    }
  >`select mode, postgis_version, reason, overlaps_checked_at, overlaps_error from spatial_state`.execute(db);
  const s = state.rows[0];
  if (!s) return UNMIGRATED;
  return {
    mode: s.mode,
    version: s.postgis_version,
    reason: s.reason,
    overlapsCheckedAt: s.overlaps_checked_at,
    overlapsError: s.overlaps_error,
  };
}

/**
 * One line for people (ddsync config, the demo): "PostGIS 3.3 — spatial columns and overlap checks
 * on" or "no PostGIS — GeoJSON only; overlap check not run (reason)".
 */
export function describeSpatialMode(mode: SpatialMode): string {
  if (mode.mode === 'postgis') {
    const version = (mode.version ?? '').split('.').slice(0, 2).join('.');
    const failed = mode.overlapsError ? `; the last overlap check failed (${mode.overlapsError})` : '';
    return `PostGIS ${version || '(unknown version)'} — spatial columns and overlap checks on${failed}`;
  }
  return `no PostGIS — GeoJSON only; overlap check not run (${mode.reason ?? 'no reason recorded'})`;
}
