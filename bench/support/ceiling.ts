// The ceiling of a first load on this machine: what any refresh that maps plots as ddsync does and
// stores the same rows must at least do, and nothing more. The pages are read as fetch-only reads
// them (same client, suppliers `concurrency` at a time beside the own plots); each page's plots not
// seen before are mapped with the refresh's own mapping (mapPlots: area, bounding box, validity,
// fingerprints, EUDR findings) and COPYed at once, with the refresh's own encoding, into bare
// UNLOGGED copies of the five tables a page writes (no index, no key, no constraint, no upsert, no
// history, no page ledger, no Temporal). Its rate ÷ fetch-only's is an upper bound for "full refresh
// ÷ fetch-only": the real refresh does all of this and more on the same two cores.
import pg from 'pg';
import { copyRows } from '../../warehouse/refresh/copy-text.ts';
import { mapPlots } from '../../warehouse/refresh/plot-page.ts';
import { STAGED } from '../../warehouse/refresh/plot-tables.ts';
import type { PlotRows } from '../../warehouse/refresh/rows.ts';
import { migratedDatabase } from './copy-baseline.ts';
import type { RunningPostgres } from '../../infra/embedded-postgres.ts';
import { listSupplierIds, walkOwnPlots, walkSupplierPages, type PlotBatch, type WalkApi } from './plot-walk.ts';

export interface CeilingResult {
  seconds: number;
  /** Plots received, shared ones once per supplier (as fetch-only counts them). */
  plots: number;
  /** Rows COPYed, all five tables. */
  rows: number;
}

type Table = keyof typeof STAGED;
const bare = (table: Table) => `bare_${table}`;

/**
 * The keys without which a warehouse cannot refuse a second copy of a row: each table's primary key
 * (history and findings without valid_from, since a first load opens one version of each). A first load
 * into tables with these keys is what any refresh that never duplicates a row pays at least.
 */
const KEYS: Record<Table, string> = {
  plots: 'id',
  analyses: 'id',
  plot_species: 'plot_id, position',
  plot_history: 'plot_id',
  eudr_findings: 'plot_id, code',
};

/** A database of its own, migrated (for the column types), with an unlogged bare copy of each table (with `keyed`, its key). */
async function prepareDatabase(postgres: RunningPostgres, keyed: boolean): Promise<string> {
  const url = await migratedDatabase(postgres, keyed ? 'ceiling_keyed' : 'ceiling');
  const client = new pg.Client({ connectionString: url, application_name: 'ddsync-bench' });
  await client.connect();
  try {
    for (const [table, columns] of Object.entries(STAGED))
      await client.query(
        // No autovacuum: half a million rows at 100,000 plots made it vacuum and analyse them while the
        // full refresh ran next, in the same cluster, costing the refresh 10 CPU-s of Postgres.
        `create unlogged table ${bare(table as Table)} with (autovacuum_enabled = false) as select ${Object.keys(columns).join(', ')} from ${table} with no data`,
      );
    if (keyed)
      for (const table of Object.keys(STAGED) as Table[])
        await client.query(`alter table ${bare(table)} add primary key (${KEYS[table]})`);
  } finally {
    await client.end();
  }
  return url;
}

/** The rows of one page, per table, as the page writer sends them. */
function tableRows(rows: readonly PlotRows[]): Record<Table, readonly object[]> {
  return {
    plots: rows.map((r) => r.plot),
    analyses: rows.flatMap((r) => r.analyses),
    plot_species: rows.flatMap((r) => r.species),
    plot_history: rows.map((r) => ({ plot_id: r.plot.id, history_hash: r.plot.history_hash, ...r.history })),
    eudr_findings: rows.flatMap((r) => r.findings),
  };
}

/** Reads every page, maps each plot once and COPYs its rows page by page; the whole walk is timed. */
export async function measureCeiling(
  api: WalkApi,
  postgres: RunningPostgres,
  concurrency: number,
  /** The tables with their keys (KEYS): the ceiling of a refresh that never stores a row twice. */
  keyed = false,
): Promise<CeilingResult> {
  const url = await prepareDatabase(postgres, keyed);
  // One connection per lane: the own plots and `concurrency` suppliers.
  const pool = new pg.Pool({ connectionString: url, max: concurrency + 1, application_name: 'ddsync-bench' });
  try {
    const seen = new Set<string>();
    let plots = 0;
    let rows = 0;
    let page = 0;
    const onBatch = async (batch: PlotBatch) => {
      plots += batch.received;
      // Mapped at once, as the refresh maps a page; a plot another supplier already brought is skipped,
      // as the refresh's change detection skips it.
      const fresh = batch.plots.filter((p) => !seen.has(p.id));
      for (const p of fresh) seen.add(p.id);
      const perTable = tableRows(mapPlots(fresh, ++page, batch.isOwn).rows);
      const client = await pool.connect();
      try {
        for (const [table, tableRowList] of Object.entries(perTable)) {
          await copyRows(client, bare(table as Table), tableRowList, STAGED[table as Table] as never);
          rows += tableRowList.length;
        }
      } finally {
        client.release();
      }
    };
    // Timed as fetch-only is: from the supplier listing on.
    const started = performance.now();
    const supplierIds = await listSupplierIds(api);
    await Promise.all([walkOwnPlots(api, onBatch), walkSupplierPages(api, supplierIds, concurrency, onBatch)]);
    const seconds = (performance.now() - started) / 1000;
    const client = await pool.connect();
    try {
      const counted = await client.query<{ n: string }>(
        `select (${Object.keys(STAGED)
          .map((t) => `(select count(*) from ${bare(t as Table)})`)
          .join(' + ')}) as n`,
      );
      if (Number(counted.rows[0]?.n) !== rows)
        throw new Error(`ceiling: ${rows} rows sent, ${counted.rows[0]?.n} stored`);
      // Nothing of the ceiling is left to the phases after it.
      for (const table of Object.keys(STAGED)) await client.query(`drop table ${bare(table as Table)}`);
    } finally {
      client.release();
    }
    return { seconds, plots, rows };
  } finally {
    await pool.end();
  }
}
