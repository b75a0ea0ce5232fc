import { sql } from 'kysely';
import { WAREHOUSE_TABLES, type TableCounts } from './counts.ts';
import type { Warehouse } from '../database.ts';

/**
 * Planner statistics for the tables a refresh has just changed a lot. Postgres plans from them, and
 * until autovacuum gets round to it (a minute or more after the load) a first load's tables look
 * empty: the readiness views then ran as nested loops over every plot, 111 s instead of 0.1 s at
 * 20,000 plots, and a report or a BI query made right after the first refresh waited that long.
 * The rule is autovacuum's own (50 rows plus 10 % of the table), applied at once; a refresh that
 * changed little, such as one where nothing changed, analyses nothing.
 */

/** autovacuum_analyze_threshold and autovacuum_analyze_scale_factor, as Postgres ships them. */
const BASE_ROWS = 50;
const SHARE = 0.1;

/**
 * Tables Postgres keeps from a mirrored one by triggers (never counted by a run): analysed with it.
 * plot_supplier_ids (0035) is where the per-plot views test a supplier filter; planned without
 * statistics after a first load, that filter ran as a parallel scan.
 */
const KEPT_BY_TRIGGERS: Readonly<Record<string, readonly string[]>> = { plot_suppliers: ['plot_supplier_ids'] };

/** The mirrored tables whose rows written by the run call for fresh statistics, and the tables kept from them. Pure. */
export function tablesToAnalyze(counts: TableCounts, estimatedRows: ReadonlyMap<string, number>): string[] {
  const mirrored = WAREHOUSE_TABLES.filter((table) => {
    const c = counts[table];
    const written = c ? c.inserted + c.updated + c.deleted : 0;
    if (written === 0) return false;
    // reltuples is -1 for a table never analysed or vacuumed: then any write is a reason.
    const rows = estimatedRows.get(table) ?? -1;
    return rows < 0 || written >= BASE_ROWS + SHARE * rows;
  });
  return mirrored.flatMap((table) => [table, ...(KEPT_BY_TRIGGERS[table] ?? [])]);
}

/**
 * Free text no view joins, groups or filters on: its statistics cost the most (every sampled value
 * sorted and compared) and help no plan. Analysts filtering on a name still get the row counts.
 */
const FREE_TEXT = new Set([
  'name',
  'description',
  'filename',
  'geometry_issue',
  'message',
  'scientific_name',
  'common_name',
]);

/**
 * The columns to gather statistics on. Left out: JSON documents (GeoJSON, custom data, findings'
 * details; at 20,000 plots 0.55 s for all tables), change-detection hashes (one distinct random value
 * per row: the costliest sort, and no query compares them but the refresh's, by key) and free text.
 * Keys, dates, states, codes and countries stay: the plans of the views depend on them. Pure.
 */
export function analysedColumns(columns: readonly { name: string; type: string }[]): string[] {
  return columns
    .filter((c) => c.type !== 'jsonb' && c.type !== 'json' && !c.name.endsWith('_hash') && !FREE_TEXT.has(c.name))
    .map((c) => c.name);
}

/**
 * Tables analysed at once, each on a connection of its own: an ANALYZE runs on one core, and a first
 * load's six tables one after the other were a second of a 20,000-plot refresh's end with the second
 * core idle.
 */
const ANALYZE_LANES = 2;

/**
 * The statistics target of these ANALYZEs (Postgres's default is 100): a sample of 300 × 30 = 9,000
 * rows, most-common-value lists and histograms of 30 entries. What the refresh analyses for is a plan
 * that knows the table's size and its columns' rough shape (hash joins over a first load, an index for
 * a supplier's or a country's rows), which a 9,000-row sample tells as well as 30,000: the values
 * these columns filter on are few (states, codes, countries, suppliers) or unique (keys). The sort of
 * every sampled value of every column is most of an ANALYZE's cost (at 20,000 plots 0.79 s of
 * backend time at 100, 0.40 s at 30), and it lies on the end of a run's path: the summaries wait for
 * it. Autovacuum analyses again with the server's own target once a tenth of a table has changed.
 * Only Postgres's shipped default is lowered: a server configured otherwise keeps its target.
 */
export const STATISTICS_TARGET = 30;
const POSTGRES_DEFAULT_TARGET = 100;

/**
 * The tables the end of a run plans joins over (the analysts' summaries, the overlap check): their
 * statistics come first, and those steps wait for them only; the other tables are analysed beside them.
 */
const PLANNED_AT_THE_END: ReadonlySet<string> = new Set([
  'plots',
  'analyses',
  'plot_suppliers',
  // The summaries' making reads every plot's links from it (analyst-summaries.ts, plotFacts).
  'plot_supplier_ids',
  'eudr_findings',
]);

/** Which of the tables to analyse: those the end of a run plans over, or the others. */
export type StatisticsPart = 'planned' | 'others';

/** The tables of `part`, in the order picked. Pure. */
export function tablesOfPart(tables: readonly string[], part: StatisticsPart): string[] {
  return tables.filter((t) => PLANNED_AT_THE_END.has(t) === (part === 'planned'));
}

export type StatisticsOutcome = { analyzed: string[] } | { analyzed: string[]; failed: string };

/** Analyses what tablesToAnalyze picks (of `part`); never fails the refresh (a role that may not analyse is told in the log). */
export async function refreshTableStatistics(
  db: Warehouse,
  counts: TableCounts,
  part: StatisticsPart,
): Promise<StatisticsOutcome> {
  const analyzed: string[] = [];
  try {
    const { rows } = await sql<{ relname: string; reltuples: number }>`
      select c.relname, c.reltuples::float8 as reltuples from pg_class c
      where c.relname = any(${[...WAREHOUSE_TABLES]}::text[]) and c.relkind = 'r'
        and c.relnamespace = current_schema()::regnamespace`.execute(db);
    const estimated = new Map(rows.map((r) => [r.relname, Number(r.reltuples)]));
    const tables = tablesOfPart(tablesToAnalyze(counts, estimated), part);
    if (tables.length === 0) return { analyzed };
    const columns = await sql<{ table_name: string; column_name: string; data_type: string }>`
      select c.table_name, c.column_name, c.data_type from information_schema.columns c
      where c.table_schema = current_schema() and c.table_name = any(${tables}::text[])
      order by c.table_name, c.ordinal_position`.execute(db);
    const queue = [...tables];
    const lane = async () => {
      for (let table = queue.shift(); table !== undefined; table = queue.shift()) {
        const names = analysedColumns(
          columns.rows.filter((c) => c.table_name === table).map((c) => ({ name: c.column_name, type: c.data_type })),
        );
        const list = names.length > 0 ? sql` (${sql.join(names.map((n) => sql.id(n)))})` : sql``;
        // For this ANALYZE only (a transaction's setting). A target set on a column still rules it, and a
        // server whose default is not Postgres's own keeps its choice.
        await db.transaction().execute(async (trx) => {
          await sql`
            select set_config('default_statistics_target', ${String(STATISTICS_TARGET)}, true)
            where current_setting('default_statistics_target') = ${String(POSTGRES_DEFAULT_TARGET)}`.execute(trx);
          await sql`analyze ${sql.table(table)}${list}`.execute(trx);
        });
        analyzed.push(table);
      }
    };
    // Every lane settles before this returns: no ANALYZE outlives the step, even after a failure.
    const lanes = await Promise.allSettled(Array.from({ length: Math.min(ANALYZE_LANES, tables.length) }, lane));
    const failed = lanes.find((l): l is PromiseRejectedResult => l.status === 'rejected');
    if (failed) throw failed.reason;
    return { analyzed };
  } catch (error) {
    return { analyzed, failed: (error as Error).message };
  }
}
