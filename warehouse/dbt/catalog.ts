import { sql } from 'kysely';
import { type Warehouse, withClientTransaction } from '../database.ts';

// What `ddsync dbt` knows of the warehouse, read from its own catalog (pg_catalog) and nothing else:
// the tables and views of the schema ddsync migrated, their COMMENT ON text, columns, keys, references
// and CHECK constraints, and for each view column the table column it passes through unchanged.
// Queries only; the dbt package is made from it elsewhere (warehouse/dbt/package.ts), without I/O.

export interface CatalogColumn {
  name: string;
  /** As Postgres writes it (format_type): text, uuid, timestamp with time zone, numeric(12,1), … */
  dataType: string;
  comment: string | null;
  notNull: boolean;
  /** The name must be quoted in SQL (a keyword such as `position`, or not a plain lower-case identifier). */
  needsQuoting: boolean;
  /** For a view column that is a table column passed through unchanged (joins and grouping may add nulls). */
  origin: { relation: string; column: string } | null;
}

/** A set of columns whose values are unique, where `predicate` holds (a partial unique index). */
export interface CatalogUnique {
  columns: string[];
  predicate: string | null;
  /** The constraint or index that says so. */
  name: string;
}

export interface CatalogForeignKey {
  name: string;
  columns: string[];
  references: { relation: string; columns: string[] };
}

export interface CatalogCheck {
  name: string;
  columns: string[];
  /** pg_get_constraintdef: `CHECK ((status = ANY (ARRAY['running'::text, …])))` */
  definition: string;
}

export interface CatalogRelation {
  name: string;
  kind: 'table' | 'view';
  comment: string | null;
  /** In the table's or view's column order. */
  columns: CatalogColumn[];
  primaryKey: { name: string; columns: string[] } | null;
  uniques: CatalogUnique[];
  foreignKeys: CatalogForeignKey[];
  checks: CatalogCheck[];
  /** Tables and views of the schema this view reads (directly); empty for a table. */
  reads: string[];
}

export interface WarehouseCatalog {
  /** The schema ddsync's tables live in (current_schema() of the connection). */
  schema: string;
  /** Every table and view of the schema that no extension owns (PostGIS puts its own there), by name. */
  relations: CatalogRelation[];
  /** The migrations the warehouse applied (kysely_migration), in order. */
  migrations: string[];
  /** normalise_status(value) for each value asked for, as the warehouse's own function returns it. */
  normalised: Record<string, string | null>;
}

/** The warehouse has no ddsync schema here (never migrated, or DATABASE_URL names another database). */
export class WarehouseNotMigratedError extends Error {
  override name = 'WarehouseNotMigratedError';
}

type Kind = 'r' | 'p' | 'v' | 'm';

/**
 * Reads the catalog of the connection's current schema. `statusValues` are put through the
 * warehouse's normalise_status(), so the package's accepted values are the views' own spelling.
 */
export async function readWarehouseCatalog(
  db: Warehouse,
  statusValues: readonly string[] = [],
): Promise<WarehouseCatalog> {
  const schema = await ddsyncSchema(db);
  const relations = await sql<{ oid: number; name: string; kind: Kind; comment: string | null }>`
    select c.oid::int as oid, c.relname as name, c.relkind as kind, obj_description(c.oid, 'pg_class') as comment
    from pg_class c
    where c.relnamespace = (select n.oid from pg_namespace n where n.nspname = ${schema}) and c.relkind in ('r', 'p', 'v', 'm') and not c.relispartition
      -- objects an extension made (PostGIS: spatial_ref_sys, geometry_columns…) are the extension's, not ddsync's
      and not exists (select 1 from pg_depend d where d.classid = 'pg_class'::regclass and d.objid = c.oid and d.deptype = 'e')
    order by c.relname`.execute(db);
  const oids = relations.rows.map((r) => r.oid);

  const columns = await sql<{
    oid: number;
    attnum: number;
    name: string;
    data_type: string;
    comment: string | null;
    not_null: boolean;
    needs_quoting: boolean;
  }>`
    select a.attrelid::int as oid, a.attnum::int as attnum, a.attname as name,
           format_type(a.atttypid, a.atttypmod) as data_type, col_description(a.attrelid, a.attnum) as comment,
           a.attnotnull as not_null, quote_ident(a.attname) <> a.attname as needs_quoting
    from pg_attribute a
    where a.attrelid = any(${oids}::oid[]) and a.attnum > 0 and not a.attisdropped
    order by a.attrelid, a.attnum`.execute(db);

  const constraints = await sql<{
    oid: number;
    name: string;
    type: 'p' | 'u' | 'f' | 'c';
    columns: number[];
    ref_oid: number | null;
    ref_columns: number[] | null;
    definition: string;
  }>`
    select k.conrelid::int as oid, k.conname as name, k.contype as type, k.conkey::int[] as columns,
           nullif(k.confrelid, 0)::int as ref_oid, k.confkey::int[] as ref_columns,
           pg_get_constraintdef(k.oid) as definition
    from pg_constraint k
    where k.conrelid = any(${oids}::oid[]) and k.contype in ('p', 'u', 'f', 'c')
    order by k.conrelid, k.conname`.execute(db);

  // Unique indexes that no constraint stands for: partial ones among them (plot_history_current).
  // An index on an expression (a 0 in indkey) says nothing about a column: left out.
  const indexes = await sql<{ oid: number; name: string; columns: number[]; predicate: string | null }>`
    select i.indrelid::int as oid, x.relname as name, i.indkey::int[] as columns,
           pg_get_expr(i.indpred, i.indrelid) as predicate
    from pg_index i
    join pg_class x on x.oid = i.indexrelid
    where i.indrelid = any(${oids}::oid[]) and i.indisunique and i.indexprs is null
      and not exists (select 1 from pg_constraint k where k.conindid = i.indexrelid)
    order by i.indrelid, x.relname`.execute(db);

  // What each view reads: its rewrite rule depends on those relations.
  const reads = await sql<{ oid: number; reads: number }>`
    select distinct r.ev_class::int as oid, d.refobjid::int as reads
    from pg_rewrite r
    join pg_depend d on d.classid = 'pg_rewrite'::regclass and d.objid = r.oid and d.refclassid = 'pg_class'::regclass
    where r.ev_class = any(${oids}::oid[]) and d.refobjid <> r.ev_class
    order by 1, 2`.execute(db);

  const origins = await viewColumnOrigins(
    db,
    relations.rows.filter((r) => r.kind === 'v' || r.kind === 'm').map((r) => r.oid),
  );
  const migrations = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(db);
  // A warehouse from before migration 0010 has no normalise_status(): nothing to ask it (the command
  // refuses such a warehouse anyway, naming the migrations it lacks).
  const { rows: can } = await sql<{ normalises: boolean }>`
    select to_regprocedure('normalise_status(text)') is not null as normalises`.execute(db);
  const normalised = can[0]!.normalises
    ? await sql<{ value: string; normalised: string | null }>`
        select v as value, normalise_status(v) as normalised from unnest(${[...statusValues]}::text[]) as v`.execute(db)
    : { rows: [] };

  const byOid = new Map(relations.rows.map((r) => [r.oid, r]));
  const columnName = new Map(columns.rows.map((c) => [`${c.oid}.${c.attnum}`, c.name]));
  const names = (oid: number, attnums: number[]) => attnums.map((n) => columnName.get(`${oid}.${n}`) ?? `#${n}`);
  return {
    schema,
    relations: relations.rows.map((r) => {
      const own = constraints.rows.filter((k) => k.oid === r.oid);
      const pk = own.find((k) => k.type === 'p');
      return {
        name: r.name,
        kind: r.kind === 'v' || r.kind === 'm' ? 'view' : 'table',
        comment: r.comment,
        columns: columns.rows
          .filter((c) => c.oid === r.oid)
          .map((c) => {
            const origin = resolveOrigin(origins, { oid: c.oid, attnum: c.attnum });
            const base = origin && byOid.get(origin.oid);
            return {
              name: c.name,
              dataType: c.data_type,
              comment: c.comment,
              notNull: c.not_null,
              needsQuoting: c.needs_quoting,
              origin:
                base && (base.kind === 'r' || base.kind === 'p')
                  ? { relation: base.name, column: columnName.get(`${origin.oid}.${origin.attnum}`)! }
                  : null,
            };
          }),
        primaryKey: pk ? { name: pk.name, columns: names(r.oid, pk.columns) } : null,
        uniques: [
          ...own
            .filter((k) => k.type === 'u')
            .map((k) => ({ columns: names(r.oid, k.columns), predicate: null, name: k.name })),
          ...indexes.rows
            .filter((i) => i.oid === r.oid && !i.columns.includes(0))
            .map((i) => ({ columns: names(r.oid, i.columns), predicate: i.predicate, name: i.name })),
        ],
        foreignKeys: own
          .filter((k) => k.type === 'f' && k.ref_oid !== null && byOid.has(k.ref_oid))
          .map((k) => ({
            name: k.name,
            columns: names(r.oid, k.columns),
            references: { relation: byOid.get(k.ref_oid!)!.name, columns: names(k.ref_oid!, k.ref_columns ?? []) },
          })),
        checks: own
          .filter((k) => k.type === 'c')
          .map((k) => ({ name: k.name, columns: names(r.oid, k.columns ?? []), definition: k.definition })),
        reads: reads.rows
          .filter((d) => d.oid === r.oid && byOid.has(d.reads))
          .map((d) => byOid.get(d.reads)!.name)
          .sort(),
      };
    }),
    migrations: migrations.rows.map((m) => m.name),
    normalised: Object.fromEntries(normalised.rows.map((n) => [n.value, n.normalised])),
  };
}

/** The connection's schema, once it is known to hold ddsync's migrations; a clear error otherwise. */
async function ddsyncSchema(db: Warehouse): Promise<string> {
  const {
    rows: [row],
  } = await sql<{ schema: string | null; migrated: boolean }>`
    select current_schema() as schema,
           to_regclass('kysely_migration') is not null and to_regclass('sync_runs') is not null as migrated`.execute(
    db,
  );
  if (!row?.schema) throw new WarehouseNotMigratedError('the connection has no current schema (search_path is empty)');
  if (!row.migrated)
    throw new WarehouseNotMigratedError(
      `schema "${row.schema}" of this database has no ddsync warehouse (no kysely_migration or sync_runs table): run ddsync migrate first, or point DATABASE_URL at the warehouse`,
    );
  return row.schema;
}

type ColumnRef = { oid: number; attnum: number };

/**
 * For each view column that is a column of another relation passed through unchanged, that column.
 * Postgres knows it: the row description of a query names, for each plain column reference, the table
 * and column it comes from (through subqueries and CTEs; a view named inside stops it at that view, so
 * resolveOrigin follows views into their own definitions). Each view's definition is asked for its row
 * description with `limit 0`, in a read-only transaction: nothing is read.
 */
async function viewColumnOrigins(db: Warehouse, views: number[]): Promise<Map<string, ColumnRef>> {
  const origins = new Map<string, ColumnRef>();
  if (views.length === 0) return origins;
  const definitions = await sql<{ oid: number; definition: string }>`
    select v::int as oid, pg_get_viewdef(v) as definition from unnest(${views}::oid[]) as v order by 1`.execute(db);
  await withClientTransaction(
    db,
    async () => undefined,
    async (_trx, client) => {
      await client.query('set transaction read only');
      await client.query(`set local statement_timeout = '30s'`);
      for (const view of definitions.rows) {
        const query = `select * from (${view.definition.trim().replace(/;$/, '')}) as definition limit 0`;
        const result = await client.query(query);
        result.fields.forEach((field, i) => {
          if (field.tableID) origins.set(`${view.oid}.${i + 1}`, { oid: field.tableID, attnum: field.columnID });
        });
      }
    },
  );
  return origins;
}

/** Follows a view column through the views it passes through, to the column at the end (at most 32 steps). */
function resolveOrigin(origins: Map<string, ColumnRef>, column: ColumnRef): ColumnRef | null {
  let at = origins.get(`${column.oid}.${column.attnum}`);
  for (let step = 0; at && step < 32; step++) {
    const next = origins.get(`${at.oid}.${at.attnum}`);
    if (!next) return at;
    at = next;
  }
  return null;
}
