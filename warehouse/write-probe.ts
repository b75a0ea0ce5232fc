import { sql } from 'kysely';
import type { Warehouse } from './database.ts';

// Whether the warehouse can write, asked the only way that tells: by writing. A full disk under ddsync's
// tables (the WAL elsewhere) leaves every read working, so `ddsync status`'s read-only look would say
// all is well while every refresh page and submission step fails with SQLSTATE 53100. The probe makes a
// temporary table in each tablespace that holds ddsync's tables and indexes, inserts one row (Postgres
// extends a relation's file with zeros on disk at once, so a full disk refuses it) and rolls back:
// nothing stays, the row goes to no WAL, and the BI role may do it too (TEMP is PUBLIC's by default).
// Tried on a full tmpfs (PostgreSQL 18): the insert fails with 53100 `could not extend file
// "pg_tblspc/…/t2_16402": No space left on device`; once the disk is grown it succeeds.

export type WriteProbe =
  /** Every tablespace of ddsync's took a block; `tablespaces` names them. */
  | { outcome: 'writable'; tablespaces: string[] }
  /** The warehouse refuses writes: `kind` as the metrics and scripts name it, `reason` in words with the server's. */
  | { outcome: 'refused'; kind: WriteRefusal; reason: string }
  /** The probe could not run here (no privilege): nothing is known about writes. */
  | { outcome: 'unknown'; reason: string };

export type WriteRefusal = 'disk_full' | 'read_only' | 'io_error' | 'other';

/** Longer than extending a file by a block ever takes; a frozen warehouse is not this probe's to wait out. */
const PROBE_TIMEOUT_MS = 10_000;

interface Tablespace {
  name: string;
  /** Empty for pg_default (the data directory). */
  location: string;
  /** The database's default, or CREATE granted: a temporary table may be made there. */
  mayCreate: boolean;
}

/**
 * Probes in a transaction of its own, always rolled back. A lost connection is thrown (the caller says
 * it could not reach the warehouse); an error of the server's becomes the answer.
 */
export async function probeWrites(db: Warehouse): Promise<WriteProbe> {
  const trx = await db.startTransaction().execute();
  let tablespaces: Tablespace[] = [];
  try {
    await sql`select set_config('statement_timeout', ${String(PROBE_TIMEOUT_MS)}, true)`.execute(trx);
    // A standby, or default_transaction_read_only: the transaction is read-only before anything is tried.
    const state = await sql<{ read_only: string; standby: boolean }>`
      select current_setting('transaction_read_only') as read_only, pg_is_in_recovery() as standby`.execute(trx);
    if (state.rows[0]?.standby)
      return { outcome: 'refused', kind: 'read_only', reason: 'it is a standby (in recovery) and takes no writes' };
    if (state.rows[0]?.read_only === 'on')
      return { outcome: 'refused', kind: 'read_only', reason: 'it is read-only (default_transaction_read_only)' };
    // The database's default tablespace (its catalogs, and the temporary tables a page stages its COPY in)
    // and those of the relations in plots' schema (ddsync's; a reltablespace of 0 is the default).
    const found = await sql<{ name: string; location: string; may_create: boolean }>`
      with d as (select dattablespace from pg_database where datname = current_database()),
      used as (
        select dattablespace as oid from d
        union
        select coalesce(nullif(c.reltablespace, 0), d.dattablespace)
        from pg_class c, d
        where c.relnamespace = (select relnamespace from pg_class where oid = to_regclass('plots'))
          and c.relkind in ('r', 'i', 'm', 'p'))
      select t.spcname as name, pg_tablespace_location(t.oid) as location,
             (t.oid = (select dattablespace from d) or has_tablespace_privilege(t.oid, 'create')) as may_create
      from used join pg_tablespace t on t.oid = used.oid
      order by name`.execute(trx);
    tablespaces = found.rows.map((r) => ({ name: r.name, location: r.location, mayCreate: r.may_create }));
    const barred = tablespaces.filter((t) => !t.mayCreate);
    for (const [i, t] of tablespaces.entries()) {
      if (!t.mayCreate) continue;
      const table = sql.id(`ddsync_write_probe_${i}`);
      await sql`create temporary table ${table} (b int) tablespace ${sql.id(t.name)}`.execute(trx);
      await sql`insert into ${table} values (1)`.execute(trx);
    }
    if (barred.length > 0)
      return {
        outcome: 'unknown',
        reason: `this role may not create in tablespace ${barred.map(named).join(', ')}: grant it CREATE there to have writes probed`,
      };
    return { outcome: 'writable', tablespaces: tablespaces.map((t) => t.name) };
  } catch (error) {
    return refusedBy(error, tablespaces);
  } finally {
    await trx
      .rollback()
      .execute()
      .catch(() => undefined);
  }
}

const named = (t: Tablespace) => (t.location ? `${t.name} (${t.location})` : t.name);

/** A failed probe in words; an error that is not the server's (a lost connection) is thrown on. */
function refusedBy(error: unknown, tablespaces: readonly Tablespace[]): WriteProbe {
  if (!(error instanceof Error) || !('severity' in error)) throw error;
  const code = (error as { code?: unknown }).code;
  const message = error.message;
  const where = tablespaces.length > 0 ? ` in tablespace ${tablespaces.map(named).join(', ')}` : '';
  switch (code) {
    case '53100':
      return { outcome: 'refused', kind: 'disk_full', reason: `out of disk space${where} (53100: ${message})` };
    case '25006':
      return { outcome: 'refused', kind: 'read_only', reason: `it is read-only (25006: ${message})` };
    case '58030':
      return { outcome: 'refused', kind: 'io_error', reason: `an I/O error${where} (58030: ${message})` };
    case '42501':
      return { outcome: 'unknown', reason: `this role may not make a temporary table (42501: ${message})` };
  }
  // Insufficient resources (53…) and system errors (58…) are the server's state, not the probe's.
  if (typeof code === 'string' && /^5[38]/.test(code))
    return { outcome: 'refused', kind: 'other', reason: `${message} (${code})` };
  return { outcome: 'unknown', reason: `the probe failed: ${message}${typeof code === 'string' ? ` (${code})` : ''}` };
}
