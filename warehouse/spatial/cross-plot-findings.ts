import { sql } from 'kysely';
import type { Warehouse } from '../database.ts';
import { jsonRecordset, type RecordsetColumns } from '../refresh/json-recordset.ts';

/** A finding a check across plots makes (overlaps, duplicates), as eudr_findings holds it. */
export interface CrossPlotFinding {
  plot_id: string;
  code: string;
  severity: string;
  message: string;
  /** JSON text, spliced into the batch as it is (deterministic, so an unchanged check rewrites nothing). */
  details: string;
}

const FINDING_COLUMNS: RecordsetColumns<CrossPlotFinding> = {
  plot_id: 'text',
  code: 'text',
  severity: 'text',
  message: 'text',
  details: 'jsonb',
};

/** Findings sent to Postgres per statement: one JSON parameter of a few MB at most, however many there are. */
export const FINDINGS_PER_BATCH = 1_000;

/**
 * One cross-plot check's findings on their way into eudr_findings: `add` stages them (in batches of
 * FINDINGS_PER_BATCH, so the worker never holds more than a batch if its caller hands them over as
 * it makes them), `apply` writes the history from everything staged.
 */
export interface CrossPlotFindingsWriter {
  add(found: readonly CrossPlotFinding[]): Promise<void>;
  /** How many findings were staged. */
  readonly staged: number;
  apply(): Promise<{ opened: number; closed: number }>;
}

/**
 * SCD type 2 over the findings of one cross-plot check, whose `codes` it alone writes: the findings
 * are staged in cross_plot_found, then `apply` closes what vanished or changed, opens what is new or
 * changed, and leaves the rest (and every other code) alone. Inside the caller's transaction; the
 * staging table goes with it.
 */
export async function openCrossPlotFindings(
  trx: Warehouse,
  runId: string,
  codes: readonly string[],
): Promise<CrossPlotFindingsWriter> {
  await sql`
    create temp table cross_plot_found (plot_id text not null, code text not null, severity text not null,
      message text not null, details jsonb) on commit drop`.execute(trx);
  let staged = 0;
  return {
    get staged() {
      return staged;
    },
    async add(found) {
      for (let i = 0; i < found.length; i += FINDINGS_PER_BATCH) {
        const batch = found.slice(i, i + FINDINGS_PER_BATCH);
        await sql`insert into cross_plot_found select * from ${jsonRecordset(batch, FINDING_COLUMNS)}`.execute(trx);
        staged += batch.length;
      }
    },
    async apply() {
      const closed = await sql`
        update eudr_findings e set valid_to = now(), is_current = false
        where e.is_current and e.code = any(${[...codes]}::text[])
          and not exists (
            select 1 from cross_plot_found f
            where f.plot_id = e.plot_id and f.code = e.code and f.severity = e.severity and f.message = e.message
              and f.details is not distinct from e.details)`.execute(trx);
      const opened = await sql`
        insert into eudr_findings (plot_id, code, severity, message, details, valid_from, valid_to, is_current, run_id)
        select f.plot_id, f.code, f.severity, f.message, f.details, now(), null, true, ${runId}::uuid
        from cross_plot_found f
        where not exists (select 1 from eudr_findings e where e.is_current and e.plot_id = f.plot_id and e.code = f.code)`.execute(
        trx,
      );
      return { opened: Number(opened.numAffectedRows ?? 0), closed: Number(closed.numAffectedRows ?? 0) };
    },
  };
}

/** All of one check's findings at once (openCrossPlotFindings, staged in batches, then applied). */
export async function writeCrossPlotFindings(
  trx: Warehouse,
  runId: string,
  codes: readonly string[],
  found: readonly CrossPlotFinding[],
): Promise<{ opened: number; closed: number }> {
  const writer = await openCrossPlotFindings(trx, runId, codes);
  await writer.add(found);
  return writer.apply();
}

/** Whether the run inserted, updated or deleted rows of `tables` (true when it recorded no counts). */
export async function runChanged(db: Warehouse, runId: string, tables: readonly string[]): Promise<boolean> {
  const { rows } = await sql<{ changed: boolean | null }>`
    select coalesce(sum(inserted + updated + deleted), 0) > 0 as changed
    from sync_run_counts where run_id = ${runId}::uuid and table_name = any(${[...tables]}::text[])`.execute(db);
  return rows[0]?.changed ?? true;
}
