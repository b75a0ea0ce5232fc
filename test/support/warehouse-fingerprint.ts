import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { Warehouse } from '../../warehouse/database.ts';
import type { RunSummary } from '../../warehouse/refresh/sweep.ts';
import { WAREHOUSE_TABLES } from '../../warehouse/refresh/counts.ts';

/**
 * What a refresh left in a warehouse, made comparable between two warehouses that ran the same
 * refresh of the same data (by one worker or by several, killed or not): every row of every mirrored
 * table without what only says when or by which run it was written, and the run's own ledger
 * (counts per table, its parts) without times and request counters. (A finished run keeps no
 * sync_pages rows: they live only while it runs.)
 */
export interface RefreshFingerprint {
  /** Per table: `<rows>:<sha256 of the rows>`. */
  tables: Record<string, string>;
  runCounts: unknown[];
  scopes: unknown[];
}

const MIRRORED = WAREHOUSE_TABLES;

/** Columns that say when ddsync wrote a row, or in which run: they differ between any two runs. */
const WRITE_TIME = new Set(['first_seen_at', 'changed_at', 'valid_from', 'run_id']);
/** Timestamps that matter only as set or not. */
const AS_FLAG = new Set(['deleted_at', 'valid_to']);

/** JSON with object keys sorted. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b)))
      : v,
  );
}

export async function refreshFingerprint(db: Warehouse, runId: string): Promise<RefreshFingerprint> {
  const tables: Record<string, string> = {};
  for (const table of MIRRORED) {
    const { rows } = await sql<{
      row: Record<string, unknown>;
    }>`select to_jsonb(t) as row from ${sql.table(table)} t`.execute(db);
    const lines = rows
      .map(({ row }) =>
        canonical(
          Object.fromEntries(
            Object.entries(row)
              .filter(([k]) => !WRITE_TIME.has(k))
              .map(([k, v]) => (AS_FLAG.has(k) ? [k, v !== null] : [k, v])),
          ),
        ),
      )
      .sort();
    // Hashed line by line, as their join would be: a million plots' lines are longer than a string may be.
    const digest = createHash('sha256');
    for (const [i, line] of lines.entries()) digest.update(i === 0 ? line : `\n${line}`);
    tables[table] = `${rows.length}:${digest.digest('hex')}`;
  }
  const runCounts = (
    await sql`select table_name, inserted::int, updated::int, unchanged::int, deleted::int from sync_run_counts
      where run_id = ${runId}::uuid order by table_name`.execute(db)
  ).rows;
  const scopes = (
    await sql`select scope, kind, supplier_id, status, plots_expected::int, pages, plots_seen::int, error from sync_run_scopes
      where run_id = ${runId}::uuid order by scope`.execute(db)
  ).rows;
  return { tables, runCounts, scopes };
}

/** A run's summary without its id, times and request counters (a killed worker's page is fetched twice). */
export function comparableSummary(summary: RunSummary): Partial<RunSummary> {
  const {
    runId: _r,
    startedAt: _s,
    finishedAt: _f,
    seconds: _t,
    requests: _q,
    retries: _x,
    rateLimited: _l,
    ...rest
  } = summary;
  return rest;
}
