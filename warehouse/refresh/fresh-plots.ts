import type pg from 'pg';
import { copyRows } from './copy-text.ts';
import type { RecordsetColumns } from './json-recordset.ts';
import { addCounts, type TableCounts } from './counts.ts';
import { ANALYSES, FINDINGS, HISTORY, PLOTS, SPECIES } from './plot-tables.ts';
import type { HistoryRow, PlotRows } from './rows.ts';

/**
 * Plots the warehouse has never held (a first load is almost nothing else) go straight into their
 * tables by COPY: nothing is there to compare with, replace or close, so staging them and upserting
 * from the stage would only make Postgres write and read every row twice. Their history and findings
 * rows open at the transaction's start ('now', as now() in the staged statements).
 *
 * "Never held" was read before the page's transaction, so it may be false by the time of the COPY:
 * another page (a supplier sharing the plot, read at the same moment) may have inserted one of these
 * plots since, or a row of theirs may already exist (an analysis id another plot carries: hostile
 * input). A key then refuses the COPY (a unique violation, once the other writer committed; or a
 * deadlock with it), and a savepoint undoes whatever this COPY wrote. The plots held by then are left
 * to the staged path, as plots the warehouse holds (compared, replaced, closed as for any changed
 * plot), and the rest are COPYed again; when no plot explains the refusal, or after a few tries, all
 * of them go the staged way. Rows are sorted by plot id, so two pages inserting the same new plots
 * take their keys in the same order.
 */
export async function copyFreshPlots(
  client: pg.ClientBase,
  runId: string,
  fresh: readonly PlotRows[],
  counts: TableCounts,
  /** The supplier the page was read through: a plot never held has no link yet, so its link is COPYed too. */
  supplierId: string | null,
): Promise<FreshOutcome> {
  const held = new Set<string>();
  let rows = fresh;
  for (let attempt = 0; attempt < ATTEMPTS && rows.length > 0; attempt++) {
    if (await copyOnce(client, runId, rows, counts, supplierId))
      return { copied: new Set(rows.map((r) => r.plot.id)), held };
    const ids = rows.map((r) => r.plot.id);
    // The writer the COPY waited for has committed: its plots are visible to this statement.
    const stored = await client.query<{ id: string }>('select id from plots where id = any($1::text[])', [ids]);
    if (stored.rows.length === 0) break;
    for (const r of stored.rows) held.add(r.id);
    rows = rows.filter((r) => !held.has(r.plot.id));
  }
  return { copied: new Set(), held };
}

export interface FreshOutcome {
  /** Plots written here, with all their rows and their link to the supplier (counted). */
  copied: ReadonlySet<string>;
  /** Plots another writer stored meanwhile: to be written as plots the warehouse holds. */
  held: ReadonlySet<string>;
}

/** Tries before the remaining plots go the staged way: each retry follows another writer's commit. */
const ATTEMPTS = 3;

/** One COPY of every row of `rows` under a savepoint: whether it went in (and was counted). */
async function copyOnce(
  client: pg.ClientBase,
  runId: string,
  rows: readonly PlotRows[],
  counts: TableCounts,
  supplierId: string | null,
): Promise<boolean> {
  const analyses = rows.flatMap((r) => r.analyses);
  const species = rows.flatMap((r) => r.species);
  const findings = rows.flatMap((r) => r.findings);
  const history = rows.map(
    (r): HistoryRow => ({ plot_id: r.plot.id, history_hash: r.plot.history_hash, ...r.history }),
  );
  const opened = { valid_from: 'now', is_current: 't', run_id: runId };
  await client.query('savepoint fresh_plots');
  try {
    await copyRows(
      client,
      'plots',
      rows.map((r) => r.plot),
      PLOTS.columns,
    );
    await copyRows(client, 'analyses', analyses, ANALYSES.columns);
    await copyRows(client, 'plot_species', species, SPECIES);
    await copyRows(client, 'plot_history', history, HISTORY, opened);
    await copyRows(client, 'eudr_findings', findings, FINDINGS, opened);
    if (supplierId !== null)
      await copyRows(
        client,
        'plot_suppliers',
        rows.map((r) => ({ plot_id: r.plot.id })),
        LINK,
        { supplier_id: supplierId },
      );
  } catch (error) {
    if (!KEY_CONFLICTS.has((error as { code?: string }).code ?? '')) throw error;
    await client.query('rollback to savepoint fresh_plots');
    return false;
  }
  await client.query('release savepoint fresh_plots');
  addCounts(counts, 'plots', { inserted: rows.length });
  addCounts(counts, 'analyses', { inserted: analyses.length });
  addCounts(counts, 'plot_species', { inserted: species.length });
  addCounts(counts, 'plot_history', { inserted: history.length });
  addCounts(counts, 'eudr_findings', { inserted: findings.length });
  if (supplierId !== null) addCounts(counts, 'plot_suppliers', { inserted: rows.length });
  return true;
}

/** A link of a page's plot: its id (the supplier is a constant of the COPY). */
const LINK: RecordsetColumns<{ plot_id: string }> = { plot_id: 'text' };

/** unique_violation, deadlock_detected: another writer holds a key these rows need. */
const KEY_CONFLICTS = new Set(['23505', '40P01']);
