import { type RawBuilder, sql } from 'kysely';
import { jsonRecordset, type RecordsetColumns } from './json-recordset.ts';
import { addCounts, type TableCounts } from './counts.ts';
import type { Warehouse } from '../database.ts';

/**
 * The one write path of every mirrored table keyed by `id` with a `content_hash`: insert what is
 * new, rewrite what changed or comes back after a soft delete, leave the rest untouched (no new row
 * version, no WAL). The batch travels as one JSON parameter, sorted by id so concurrent writers lock
 * shared rows in the same order.
 */
export interface HashedTable<Row extends Hashed> {
  table: 'plots' | 'analyses' | 'businesses' | 'business_connections' | 'business_invitations';
  /** The written columns, each with its Postgres type; json and jsonb values are JSON text (spliced in raw). */
  columns: RecordsetColumns<Row>;
}

interface Hashed {
  id: string;
  content_hash: string;
}

/** The last row per id wins, in id order. */
export function uniqueSortedById<T>(rows: readonly T[], idOf: (row: T) => string): T[] {
  const byId = new Map<string, T>();
  for (const r of rows) byId.set(idOf(r), r);
  return [...byId.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, r]) => r);
}

/** Of `rows`, those that are new, changed, or soft-deleted in the warehouse: one indexed read. */
export async function changedOnly<T extends Hashed>(
  db: Warehouse,
  table: HashedTable<T>['table'],
  rows: readonly T[],
): Promise<T[]> {
  if (rows.length === 0) return [];
  const stored = await sql<{ id: string; content_hash: string; deleted: boolean }>`
    select id, content_hash, deleted_at is not null as deleted from ${sql.table(table)} where id = any(${rows.map((r) => r.id)}::text[])`.execute(
    db,
  );
  const known = new Map(stored.rows.map((r) => [r.id, r]));
  return rows.filter((r) => {
    const s = known.get(r.id);
    return !s || s.deleted || s.content_hash !== r.content_hash;
  });
}

/** The rows as one JSON parameter, read as the recordset `r`. */
export function jsonRows<T extends object>(rows: readonly T[], columns: RecordsetColumns<T>): RawBuilder<unknown> {
  return jsonRecordset(rows, columns);
}

/**
 * Upserts `rows` (unique ids) and returns the ids written, each with whether it was inserted.
 * The WHERE repeats the hash test: a concurrent writer may have stored the same content meanwhile.
 * `from` is where the statement reads the rows as `r`: one JSON parameter unless the caller staged
 * them already (COPY into a temporary table, plot-writer.ts).
 */
export async function upsertChanged<T extends Hashed>(
  db: Warehouse,
  spec: HashedTable<T>,
  rows: readonly T[],
  from?: RawBuilder<unknown>,
): Promise<Map<string, boolean>> {
  if (rows.length === 0) return new Map();
  const fields = Object.keys(spec.columns);
  const updates = fields
    .filter((f) => f !== 'id')
    .map((f) => `${f} = excluded.${f}`)
    .join(', ');
  const result = await sql<{ id: string; inserted: boolean }>`
    insert into ${sql.table(spec.table)} (${sql.raw(fields.join(', '))}, first_seen_at, changed_at, deleted_at)
    select ${sql.raw(fields.map((f) => `r.${f}`).join(', '))}, now(), now(), null
    from ${from ?? jsonRows(rows, spec.columns)}
    order by r.id
    on conflict (id) do update set ${sql.raw(updates)}, changed_at = now(), deleted_at = null
      where ${sql.raw(spec.table)}.content_hash is distinct from excluded.content_hash or ${sql.raw(spec.table)}.deleted_at is not null
    returning id, (xmax = 0) as inserted`.execute(db);
  return new Map(result.rows.map((r) => [r.id, r.inserted]));
}

/**
 * Upserts `rows` (unique ids) and counts under the table's name: inserted, updated, and the rest of
 * the `seen` rows unchanged.
 */
export async function upsertCounted<T extends Hashed>(
  db: Warehouse,
  spec: HashedTable<T>,
  rows: readonly T[],
  counts: TableCounts,
  seen: number,
  from?: RawBuilder<unknown>,
): Promise<Map<string, boolean>> {
  const written = await upsertChanged(db, spec, rows, from);
  let inserted = 0;
  for (const isNew of written.values()) if (isNew) inserted++;
  addCounts(counts, spec.table, { inserted, updated: written.size - inserted, unchanged: seen - written.size });
  return written;
}

/** Writes what changed among `rows` and counts inserted / updated / unchanged under the table's name. */
export async function writeChanged<T extends Hashed>(
  db: Warehouse,
  spec: HashedTable<T>,
  rows: readonly T[],
  counts: TableCounts,
): Promise<Map<string, boolean>> {
  const unique = uniqueSortedById(rows, (r) => r.id);
  return upsertCounted(db, spec, await changedOnly(db, spec.table, unique), counts, unique.length);
}
