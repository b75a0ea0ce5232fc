import { sql } from 'kysely';
import type { RunStatus, ScopeKind } from '../../schema/database.ts';
import { jsonRecordset, type RecordsetColumns } from './json-recordset.ts';
import type { ColumnValues } from './rows.ts';
import type { Row, Warehouse } from '../database.ts';

/**
 * sync_runs and sync_run_scopes: a run's row, one row per part of it (each supplier, own plots, the
 * network, invitations), their progress and outcome. Every write is idempotent (activities retry).
 */

export const OWN_PLOTS_SCOPE = 'own-plots';

export interface ScopeSpec {
  scope: string;
  kind: ScopeKind;
  supplierId?: string | null;
  plotsExpected?: number | null;
}

export async function beginRun(db: Warehouse, runId: string, workflowId: string | null): Promise<void> {
  await db
    .insertInto('sync_runs')
    .values({ id: runId, workflow_id: workflowId })
    .onConflict((c) => c.column('id').doNothing())
    .execute();
}

type ScopeRow = ColumnValues<'sync_run_scopes', 'scope' | 'kind' | 'supplier_id' | 'plots_expected'>;
const SCOPE_COLUMNS: RecordsetColumns<ScopeRow> = {
  scope: 'text',
  kind: 'text',
  supplier_id: 'text',
  plots_expected: 'int8',
};

/** Declares the parts of a run (idempotent) and what progress is measured against. */
export async function openScopes(db: Warehouse, runId: string, scopes: readonly ScopeSpec[]): Promise<void> {
  if (scopes.length > 0) {
    await sql`
      insert into sync_run_scopes (run_id, scope, kind, supplier_id, plots_expected)
      select ${runId}::uuid, s.scope, s.kind, s.supplier_id, s.plots_expected
      from ${jsonRecordset(
        scopes.map(
          (s): ScopeRow => ({
            scope: s.scope,
            kind: s.kind,
            supplier_id: s.supplierId ?? null,
            plots_expected: s.plotsExpected ?? null,
          }),
        ),
        SCOPE_COLUMNS,
        's',
      )}
      on conflict (run_id, scope) do nothing`.execute(db);
  }
  await sql`
    update sync_runs r set
      suppliers_total = (select count(*) from sync_run_scopes s where s.run_id = r.id and s.kind = 'supplier'),
      plots_expected = (select sum(plots_expected) from sync_run_scopes s where s.run_id = r.id)
    where r.id = ${runId}::uuid`.execute(db);
}

export async function markScopeRunning(db: Warehouse, runId: string, scope: string): Promise<void> {
  await db
    .updateTable('sync_run_scopes')
    .set({ status: 'running', started_at: sql`coalesce(started_at, now())` })
    .where('run_id', '=', runId)
    .where('scope', '=', scope)
    .where('status', 'in', ['pending', 'running'])
    .execute();
}

/** Ends a part of the run with its totals from the pages it wrote. A part already ended stays as it ended. */
export async function finishScope(
  db: Warehouse,
  runId: string,
  scope: string,
  status: 'succeeded' | 'failed',
  error?: string,
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await sql`
      update sync_run_scopes s set status = ${status}, finished_at = now(), started_at = coalesce(s.started_at, now()), error = ${error ?? null},
        pages = t.pages, plots_seen = t.plots, requests = t.requests, retries = t.retries, rate_limited = t.rate_limited
      from (
        select count(*) filter (where entity = 'plots') as pages,
               coalesce(sum(received) filter (where entity = 'plots'), 0) as plots,
               coalesce(sum(requests), 0) as requests, coalesce(sum(retries), 0) as retries, coalesce(sum(rate_limited), 0) as rate_limited
        from sync_pages where run_id = ${runId}::uuid and scope = ${scope}
      ) t
      where s.run_id = ${runId}::uuid and s.scope = ${scope} and s.status in ('pending', 'running')`.execute(trx);
    await sql`
      update sync_runs r set
        suppliers_done = (select count(*) from sync_run_scopes s where s.run_id = r.id and s.kind = 'supplier' and s.status = 'succeeded'),
        suppliers_failed = (select count(*) from sync_run_scopes s where s.run_id = r.id and s.kind = 'supplier' and s.status = 'failed')
      where r.id = ${runId}::uuid`.execute(trx);
  });
}

export interface RunProgress {
  runId: string;
  status: RunStatus;
  startedAt: Date;
  finishedAt: Date | null;
  suppliersTotal: number | null;
  suppliersDone: number;
  suppliersFailed: number;
  /** The sum of the connections' plotsCount: what the suppliers' plots are measured against. */
  plotsExpected: number | null;
  /** Every plot read, the business's own included. */
  plotsSeen: number;
  /** Of plotsSeen, those read through suppliers (comparable with plotsExpected). */
  supplierPlotsSeen: number;
  pages: number;
  error: string | null;
}

/** Progress of a run, live while it runs (from its pages) and final once it has finished. */
export async function readProgress(db: Warehouse, runId: string): Promise<RunProgress | undefined> {
  const { rows } = await sql<
    Pick<
      Row<'sync_runs'>,
      | 'status'
      | 'started_at'
      | 'finished_at'
      | 'suppliers_total'
      | 'suppliers_done'
      | 'suppliers_failed'
      | 'plots_expected'
      | 'plots_seen'
      | 'pages'
      | 'error'
    > & {
      live_plots: number | null;
      live_supplier_plots: number | null;
      live_pages: number | null;
      supplier_plots: number;
    }
  >`
    select r.status, r.started_at, r.finished_at, r.suppliers_total, r.suppliers_done, r.suppliers_failed, r.plots_expected,
           r.plots_seen, r.pages, p.plots as live_plots, p.supplier_plots as live_supplier_plots, p.pages as live_pages, r.error,
           (select coalesce(sum(s.plots_seen), 0)::int8 from sync_run_scopes s where s.run_id = r.id and s.kind = 'supplier') as supplier_plots
    from sync_runs r
    left join lateral (
      select sum(received)::int8 as plots, (sum(received) filter (where scope <> ${OWN_PLOTS_SCOPE}))::int8 as supplier_plots, count(*)::int8 as pages
      from sync_pages where run_id = r.id and entity = 'plots'
    ) p on r.status = 'running'
    where r.id = ${runId}::uuid`.execute(db);
  const r = rows[0];
  if (!r) return undefined;
  const running = r.status === 'running';
  return {
    runId,
    status: r.status,
    startedAt: r.started_at,
    finishedAt: r.finished_at,
    suppliersTotal: r.suppliers_total,
    suppliersDone: r.suppliers_done,
    suppliersFailed: r.suppliers_failed,
    plotsExpected: r.plots_expected,
    plotsSeen: running ? Number(r.live_plots ?? 0) : r.plots_seen,
    supplierPlotsSeen: running ? Number(r.live_supplier_plots ?? 0) : Number(r.supplier_plots),
    pages: running ? Number(r.live_pages ?? 0) : r.pages,
    error: r.error,
  };
}

/** The reason a part's last attempt failed, kept while it retries (its finishScope replaces it). */
export async function noteScopeError(db: Warehouse, runId: string, scope: string, error: string): Promise<void> {
  await db
    .updateTable('sync_run_scopes')
    .set({ error })
    .where('run_id', '=', runId)
    .where('scope', '=', scope)
    .where('status', 'in', ['pending', 'running'])
    .execute();
}

/** Runs the warehouse still calls running, with the workflow that runs each (when recorded). */
export async function runningRuns(
  db: Warehouse,
): Promise<Array<{ id: string; workflowId: string | null; startedAt: Date }>> {
  const rows = await db
    .selectFrom('sync_runs')
    .select(['id', 'workflow_id', 'started_at'])
    .where('status', '=', 'running')
    .execute();
  return rows.map((r) => ({ id: r.id, workflowId: r.workflow_id, startedAt: r.started_at }));
}

/**
 * Ends runs still `running` as failed, with `reason`: a run no workflow will end (its workflow is
 * gone), or every run when the worker stops on a warehouse it cannot use. Only runs still running are
 * touched, so a run that ended meanwhile keeps its outcome. A workflow that later reaches the end of
 * one of these finds it ended and leaves it so (finishRun): nothing is swept on its word, and the next
 * refresh does what it would have. Returns the ids ended.
 */
export async function failRunningRuns(db: Warehouse, reason: string, runIds?: readonly string[]): Promise<string[]> {
  if (runIds && runIds.length === 0) return [];
  return db.transaction().execute(async (trx) => {
    let update = trx
      .updateTable('sync_runs')
      .set({ status: 'failed', finished_at: sql`now()`, error: reason })
      .where('status', '=', 'running');
    if (runIds) update = update.where('id', 'in', [...runIds]);
    const ended = (await update.returning('id').execute()).map((r) => r.id);
    // Its parts still open end with it (their own last error kept), so nothing of the run stays running.
    if (ended.length > 0)
      await trx
        .updateTable('sync_run_scopes')
        .set({ status: 'failed', finished_at: sql`now()`, error: sql`coalesce(error, ${reason})` })
        .where('run_id', 'in', ended)
        .where('status', 'in', ['pending', 'running'])
        .execute();
    return ended;
  });
}
