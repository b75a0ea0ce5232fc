import { sql, type RawBuilder } from 'kysely';
import type { Warehouse } from './database.ts';
import type { HistogramFigures, WarehouseFigures } from '../platform/metrics.ts';
import { FINAL_SECONDS_BOUNDS, REFRESH_SECONDS_BOUNDS } from '../platform/metrics.ts';

/** States a transaction leaves only by a later status (everything else is final). */
export const NOT_FINAL_STATES = ['pending', 'created', 'submitted'] as const;
/** Final states the EU system or ddsync's deadline decided (cancelled is the user's own decision). */
const ANSWERED_STATES = ['available', 'error', 'withdrawn', 'failed', 'timed_out'];

/** Every state ddsync gives a transaction (warehouse/submission/transaction-ledger.ts, bulk-ledger.ts). */
const TRANSACTION_STATES = [...NOT_FINAL_STATES, ...ANSWERED_STATES, 'cancelled'];
/** survey_response_pdfs.state's check constraint. */
const PDF_STATES = ['queued', 'waiting', 'retrying', 'archived', 'gone'];

/** Counts per state with every known state present (0 when none), so a series exists before its first entry. */
function everyState(known: readonly string[], rows: ReadonlyArray<{ state: string; n: string }>) {
  const counts = new Map(known.map((state) => [state, 0]));
  for (const r of rows) counts.set(r.state, Number(r.n));
  return [...counts];
}

const epoch = (d: Date | string | null): number | null =>
  d === null ? null : Math.round(new Date(d).getTime() / 1000);

/** A histogram computed by the warehouse: the cumulative count under each bound, the sum and the count. */
async function histogram(
  db: Warehouse,
  bounds: readonly number[],
  seconds: RawBuilder<{ s: number }>,
): Promise<HistogramFigures> {
  const { rows } = await sql<{ cumulative: string[]; sum: number | null; count: string }>`
    with d as (${seconds})
    select array(select (select count(*) from d where d.s <= b) from unnest(${[...bounds]}::float8[]) b) as cumulative,
           sum(d.s)::float8 as sum, count(*) as count
    from d`.execute(db);
  const row = rows[0]!;
  return { bounds, cumulative: row.cumulative.map(Number), sum: row.sum ?? 0, count: Number(row.count) };
}

/**
 * Everything the process's metrics say about the warehouse, read in one repeatable-read snapshot so
 * the figures agree with each other. Cheap at any size: it reads the run ledger, the transactions'
 * states (an index) and small queues, never the plots.
 */
export async function readWarehouseFigures(db: Warehouse): Promise<WarehouseFigures> {
  return db
    .transaction()
    .setIsolationLevel('repeatable read')
    .setAccessMode('read only')
    .execute(async (tx) => {
      // A scrape gives up after a few seconds; the queries must not outlive it by much.
      await sql`set local statement_timeout = '10s'`.execute(tx);
      const runs = await sql<{ outcome: string; runs: string }>`
        select status as outcome, count(*) as runs from sync_runs group by status order by status`.execute(tx);
      const totals = await sql<{
        plots_seen: string | null;
        confirmed: string | null;
        deferred: string | null;
        last_success: Date | null;
      }>`
        select sum(plots_seen) as plots_seen, sum(deletions_confirmed) as confirmed,
               sum(deletions_deferred) as deferred,
               max(finished_at) filter (where status = 'succeeded') as last_success
        from sync_runs`.execute(tx);
      const written = await sql<{ table: string; inserted: string; updated: string; deleted: string }>`
        select table_name as table, sum(inserted) as inserted, sum(updated) as updated, sum(deleted) as deleted
        from sync_run_counts group by table_name order by table_name`.execute(tx);
      const waiting = await sql<{ n: string }>`
        select count(*) as n from plot_suppliers where missing_since is not null and deleted_at is null`.execute(tx);
      // The suppliers of the latest finished refresh: who the business buys from now.
      const suppliers = await sql<{ supplier: string; last_ok: Date | null; failed_in_a_row: string }>`
        with latest as (
          select id from sync_runs where status <> 'running' order by started_at desc limit 1
        ), scans as (
          select s.supplier_id, s.status, s.finished_at, r.started_at
          from sync_run_scopes s join sync_runs r on r.id = s.run_id
          where s.kind = 'supplier' and r.status <> 'running'
            and s.supplier_id in (select supplier_id from sync_run_scopes where run_id = (select id from latest) and kind = 'supplier')
        ), ok as (
          select supplier_id, max(finished_at) filter (where status = 'succeeded') as last_ok,
                 max(started_at) filter (where status = 'succeeded') as last_ok_run
          from scans group by supplier_id
        )
        select ok.supplier_id as supplier, ok.last_ok,
               (select count(*) from scans f where f.supplier_id = ok.supplier_id and f.status = 'failed'
                  and f.started_at > coalesce(ok.last_ok_run, '-infinity')) as failed_in_a_row
        from ok order by ok.supplier_id`.execute(tx);
      const states = await sql<{ state: string; n: string }>`
        select state, count(*) as n from transactions group by state order by state`.execute(tx);
      const oldest = await sql<{ oldest: Date | null }>`
        select min(coalesce(t.submitted_at, b.created_at)) as oldest
        from transactions t join submission_batches b on b.id = t.batch_id
        where t.state = any(${[...NOT_FINAL_STATES]}::text[]) and (t.state = 'submitted' or b.status <> 'cancelled')`.execute(
        tx,
      );
      const pdfs = await sql<{ state: string; n: string }>`
        select state, count(*) as n from survey_response_pdfs group by state order by state`.execute(tx);
      const failing = await sql<{ n: string }>`
        select count(*) as n from bi_webhook_health where failing`.execute(tx);
      const t = totals.rows[0]!;
      return {
        refreshRuns: runs.rows.map((r) => ({ outcome: r.outcome, runs: Number(r.runs) })),
        refreshDuration: await histogram(
          tx,
          REFRESH_SECONDS_BOUNDS,
          sql<{
            s: number;
          }>`select extract(epoch from finished_at - started_at)::float8 as s from sync_runs where finished_at is not null`,
        ),
        lastSuccessfulRefresh: epoch(t.last_success),
        refreshPlotsSeen: Number(t.plots_seen ?? 0),
        refreshRowsWritten: written.rows.flatMap((r) =>
          (['inserted', 'updated', 'deleted'] as const).map((change) => ({
            table: r.table,
            change,
            rows: Number(r[change]),
          })),
        ),
        refreshDeletions: { confirmed: Number(t.confirmed ?? 0), deferred: Number(t.deferred ?? 0) },
        deletionsWaiting: Number(waiting.rows[0]!.n),
        suppliers: suppliers.rows.map((s) => ({
          supplier: s.supplier,
          lastSuccessfulScan: epoch(s.last_ok),
          failedScansInARow: Number(s.failed_in_a_row),
        })),
        transactions: everyState(TRANSACTION_STATES, states.rows).map(([state, n]) => ({ state, transactions: n })),
        oldestNotFinal: epoch(oldest.rows[0]!.oldest),
        timeToFinal: await histogram(
          tx,
          FINAL_SECONDS_BOUNDS,
          sql<{ s: number }>`
            select greatest(0, extract(epoch from coalesce(t.validated_at, t.updated_at) - b.created_at))::float8 as s
            from transactions t join submission_batches b on b.id = t.batch_id
            where t.state = any(${ANSWERED_STATES}::text[])`,
        ),
        pdfArchive: everyState(PDF_STATES, pdfs.rows).map(([state, n]) => ({ state, entries: n })),
        webhooksFailing: Number(failing.rows[0]!.n),
      };
    });
}
