// The COPY-only baseline: the plot rows the refresh would write, COPYed into a bare table with the
// same columns and types as the warehouse's `plots` (no indexes, no constraints, no defaults). It is
// the fastest way Postgres can take these rows, so "full refresh ÷ COPY" says what the refresh's
// change detection, upserts, links, species, analyses and history cost on top.
//
// Memory: rows are not all held at once. The pages are read again (one at a time), each distinct
// plot is mapped with toPlotRows and encoded as COPY text, and the text is COPYed whenever about
// BATCH_BYTES have piled up. Only the COPY statements are timed; fetching, mapping and encoding
// happen while no COPY runs (the walk is sequential, so nothing else competes for the CPU then).
// What stays for the whole walk is the set of plot ids seen (to skip plots shared by suppliers).
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { toPlotRows } from '../../warehouse/refresh/plot-rows.ts';
import { copyText } from '../../warehouse/refresh/copy-text.ts';
import { PLOT_COLUMNS } from '../../warehouse/refresh/plot-tables.ts';
import type { PlotRow } from '../../warehouse/refresh/rows.ts';
import { openWarehouse } from '../../warehouse/database.ts';
import { migrateToLatest } from '../../warehouse/migrate.ts';
import type { RunningPostgres } from '../../infra/embedded-postgres.ts';
import { walkOwnPlots, walkSupplierPages, type PlotBatch, type WalkApi } from './plot-walk.ts';

const BARE_TABLE = 'bare_plots';
/** COPY text gathered before one COPY statement runs: bounds memory at about this much. */
const BATCH_BYTES = 32 * 1024 * 1024;

export interface CopyResult {
  rows: number;
  seconds: number;
  statements: number;
  megabytes: number;
}

/** A new database on the benchmark's cluster, migrated (the warehouse's tables give the column types); its URL. */
export async function migratedDatabase(postgres: RunningPostgres, prefix: string): Promise<string> {
  const name = `${prefix}_${Date.now()}`;
  await postgres.createDatabase(name);
  const db = openWarehouse(postgres.urlFor(name), 1, 'ddsync-bench');
  try {
    await migrateToLatest(db);
  } finally {
    await db.destroy();
  }
  return postgres.urlFor(name);
}

/** A database of its own, migrated, with the bare copy of `plots`; returns a connected client. */
async function prepareDatabase(postgres: RunningPostgres): Promise<pg.Client> {
  const client = new pg.Client({
    connectionString: await migratedDatabase(postgres, 'copy_baseline'),
    application_name: 'ddsync-bench',
  });
  await client.connect();
  // CREATE TABLE AS copies names and types only: no keys, indexes, NOT NULLs or defaults.
  await client.query(`create table ${BARE_TABLE} as select * from plots with no data`);
  return client;
}

/** Reads every page again, maps each distinct plot once and COPYs the rows; times only the COPYs. */
export async function measureCopyOnly(
  api: WalkApi,
  supplierIds: readonly string[],
  postgres: RunningPostgres,
): Promise<CopyResult> {
  const client = await prepareDatabase(postgres);
  try {
    const copier = new BatchedCopy(client);
    const seen = new Set<string>();
    const onBatch = async (batch: PlotBatch) => {
      const rows: PlotRow[] = [];
      for (const plot of batch.plots) {
        if (seen.has(plot.id)) continue;
        seen.add(plot.id);
        rows.push(toPlotRows(plot, batch.isOwn).rows.plot);
      }
      await copier.add(rows);
    };
    // One at a time, so a COPY never runs beside a fetch or a mapping.
    await walkOwnPlots(api, onBatch);
    await walkSupplierPages(api, supplierIds, 1, onBatch);
    await copier.flush();
    const counted = await client.query<{ n: string }>(`select count(*) as n from ${BARE_TABLE}`);
    if (Number(counted.rows[0]?.n) !== copier.rows)
      throw new Error(`COPY baseline: ${copier.rows} rows sent, ${counted.rows[0]?.n} stored`);
    return { rows: copier.rows, seconds: copier.seconds, statements: copier.statements, megabytes: copier.bytes / 1e6 };
  } finally {
    await client.end();
  }
}

/** Encoded pages pile up to BATCH_BYTES, then go to Postgres in one timed COPY statement. */
class BatchedCopy {
  rows = 0;
  seconds = 0;
  statements = 0;
  bytes = 0;
  #pending: Buffer[] = [];
  #pendingBytes = 0;
  #pendingRows = 0;

  constructor(private readonly client: pg.Client) {}

  async add(rows: readonly PlotRow[]): Promise<void> {
    if (rows.length === 0) return;
    // The refresh's own COPY encoding (copy-text.ts), so the baseline costs what the refresh's rows cost.
    const chunk = Buffer.from([...copyText(rows, PLOT_COLUMNS)].join(''), 'utf8');
    this.#pending.push(chunk);
    this.#pendingBytes += chunk.length;
    this.#pendingRows += rows.length;
    if (this.#pendingBytes >= BATCH_BYTES) await this.flush();
  }

  async flush(): Promise<void> {
    if (this.#pending.length === 0) return;
    const statement = `copy ${BARE_TABLE} (${Object.keys(PLOT_COLUMNS).join(', ')}) from stdin`;
    const started = performance.now();
    await pipeline(Readable.from(this.#pending), this.client.query(copyFrom(statement)));
    this.seconds += (performance.now() - started) / 1000;
    this.statements++;
    this.rows += this.#pendingRows;
    this.bytes += this.#pendingBytes;
    this.#pending = [];
    this.#pendingBytes = 0;
    this.#pendingRows = 0;
  }
}
