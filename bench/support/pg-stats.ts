// A benchmark's costliest statements, from pg_stat_statements (its --pg-stats): the extension must be
// preloaded by the server (startStack's settings, shared_preload_libraries=pg_stat_statements).
import { sql } from 'kysely';
import type { Warehouse } from '../../warehouse/database.ts';

export interface StatementCost {
  query: string;
  calls: number;
  totalMs: number;
  rows: number;
}

/** Starts counting afresh (creating the extension in this database if it is not there yet). */
export async function resetStatements(db: Warehouse): Promise<void> {
  await sql`create extension if not exists pg_stat_statements`.execute(db);
  await sql`select pg_stat_statements_reset()`.execute(db);
}

/** This database's `limit` costliest statements since the last reset, white space folded, long ones cut. */
export async function costliestStatements(db: Warehouse, limit: number): Promise<StatementCost[]> {
  const { rows } = await sql<{ query: string; calls: string; total_ms: number; rows: string }>`
    select regexp_replace(query, '[[:space:]]+', ' ', 'g') as query, calls, total_exec_time as total_ms, rows
    from pg_stat_statements where dbid = (select oid from pg_database where datname = current_database())
    order by total_exec_time desc limit ${limit}`.execute(db);
  return rows.map((r) => ({
    query: r.query.length > 160 ? `${r.query.slice(0, 157)}...` : r.query,
    calls: Number(r.calls),
    totalMs: Math.round(r.total_ms),
    rows: Number(r.rows),
  }));
}
