import { sql, type RawBuilder, type Transaction } from 'kysely';
import type { Database, RunStatus } from '../../schema/database.ts';
import { addCounts, emptyCounts, mergeCounts, type TableCounts } from './counts.ts';
import { INVITATIONS_SCOPE, NETWORK_SCOPE } from './network-writer.ts';
import { OWN_PLOTS_SCOPE } from './run-ledger.ts';
import type { Row, Warehouse } from '../database.ts';

/**
 * The end of a refresh, in one transaction: soft-delete what the parts of the run that completed
 * proved gone (a part that failed is not swept, so an outage never empties the warehouse), defer what
 * a supplier's scan missed but could not prove gone (scan-verification.ts), close the history and
 * the EUDR findings of plots that disappeared, total the counts into sync_run_counts, set the run's outcome, and drop the run's
 * page records. Runs once: a retry after it committed only reads the outcome.
 *
 * What one complete read proves: a listing read in one response (connections, businesses,
 * invitations, the own plots' stream) is the list at one moment, so what it lacks is gone. A
 * supplier's plots come in offset pages, which are not a snapshot: a link its scan missed is deleted
 * only when the verification read proved the list stable, or when the previous complete refresh
 * missed it too (it was marked `missing_since`); otherwise it is marked and stays live.
 */

export interface RunSummary {
  runId: string;
  status: RunStatus;
  startedAt: string;
  finishedAt: string;
  seconds: number;
  suppliers: number;
  suppliersFailed: number;
  pages: number;
  plotsSeen: number;
  requests: number;
  retries: number;
  rateLimited: number;
  counts: TableCounts;
  /** Rows inserted, updated or soft-deleted over every mirrored table. */
  rowsWritten: number;
  /** Rows soft-deleted because they were proven gone (plots, links, connections, businesses, invitations). */
  deletionsConfirmed: number;
  /** Plot links missed but not proven gone: kept live, confirmed or cleared by the next refresh. */
  deletionsDeferred: number;
  /** Pages read a second time to verify scans that missed plots. */
  verifyPages: number;
  issues: number;
  /** Of those, values stored with U+FFFD for a NUL or a lone surrogate (action `replaced`). */
  valuesReplaced: number;
  error: string | null;
}

type Tx = Transaction<Database>;

/** Tables whose soft-deleted rows count as deletions (analyses and species follow their plot). */
const CONFIRMED_TABLES = ['plots', 'plot_suppliers', 'business_connections', 'businesses', 'business_invitations'];

export async function finishRun(db: Warehouse, runId: string, failure?: string): Promise<RunSummary> {
  await db.transaction().execute(async (trx) => {
    // started_at as text: a Date would lose its microseconds, and the sweep compares with them.
    const run = await sql<
      Pick<Row<'sync_runs'>, 'status'> & { started_at: string }
    >`select status, started_at::text from sync_runs where id = ${runId}::uuid for update`.execute(trx);
    if (run.rows[0]?.status !== 'running') return;
    await roomForRunSets(trx);
    const startedAt = sql`${run.rows[0].started_at}::timestamptz`;
    // Parts that never reported (a child terminated, a crash) did not complete.
    await sql`
      update sync_run_scopes set status = 'failed', finished_at = now(), error = coalesce(error, 'did not finish')
      where run_id = ${runId}::uuid and status in ('pending', 'running')`.execute(trx);
    const scopes = await sql<Pick<Row<'sync_run_scopes'>, 'scope'> & { kind: string; status: string }>`
      select scope, kind, status from sync_run_scopes where run_id = ${runId}::uuid`.execute(trx);
    const succeeded = (scope: string) => scopes.rows.some((s) => s.scope === scope && s.status === 'succeeded');
    const sweep = emptyCounts();
    let deferred = 0;
    await chooseSweptSuppliers(trx, runId, failure === undefined);
    await collectRunSeen(trx, runId);
    if (failure === undefined) {
      await collectSeenIds(trx, runId);
      deferred = await sweepPlots(
        trx,
        runId,
        startedAt,
        { network: succeeded(NETWORK_SCOPE), ownPlots: succeeded(OWN_PLOTS_SCOPE) },
        sweep,
      );
      if (succeeded(NETWORK_SCOPE)) {
        await sweepEntity(trx, startedAt, NETWORK_SCOPE, 'businesses', sweep);
        await sweepEntity(trx, startedAt, NETWORK_SCOPE, 'business_connections', sweep);
      }
      if (succeeded(INVITATIONS_SCOPE))
        await sweepEntity(trx, startedAt, INVITATIONS_SCOPE, 'business_invitations', sweep);
    }
    const counts = mergeCounts(await countOncePerRun(trx, await pageCounts(trx, runId)), sweep);
    for (const [table, c] of Object.entries(counts)) {
      await sql`
        insert into sync_run_counts (run_id, table_name, inserted, updated, unchanged, deleted)
        values (${runId}::uuid, ${table}, ${c.inserted}, ${c.updated}, ${c.unchanged}, ${c.deleted})
        on conflict (run_id, table_name) do nothing`.execute(trx);
    }
    const anyFailed = scopes.rows.some((s) => s.status === 'failed');
    const status: RunStatus =
      failure !== undefined || !succeeded(NETWORK_SCOPE) ? 'failed' : anyFailed ? 'partial' : 'succeeded';
    const error = failure ?? (anyFailed ? failedScopesMessage(scopes.rows) : null);
    const confirmed = CONFIRMED_TABLES.reduce((n, t) => n + (sweep[t]?.deleted ?? 0), 0);
    await sql`
      update sync_runs r set status = ${status}, finished_at = clock_timestamp(), error = ${error},
        deletions_confirmed = ${confirmed}, deletions_deferred = ${deferred},
        verify_pages = v.pages, requests = t.requests + v.requests,
        pages = t.pages, plots_seen = t.plots, retries = t.retries, rate_limited = t.rate_limited,
        suppliers_done = (select count(*) from sync_run_scopes s where s.run_id = r.id and s.kind = 'supplier' and s.status = 'succeeded'),
        suppliers_failed = (select count(*) from sync_run_scopes s where s.run_id = r.id and s.kind = 'supplier' and s.status = 'failed')
      from (
        select count(*) filter (where entity = 'plots') as pages, coalesce(sum(received) filter (where entity = 'plots'), 0) as plots,
               coalesce(sum(requests), 0) as requests, coalesce(sum(retries), 0) as retries, coalesce(sum(rate_limited), 0) as rate_limited
        from sync_pages where run_id = ${runId}::uuid
      ) t, (
        select coalesce(sum(verify_pages), 0) as pages, coalesce(sum(verify_requests), 0) as requests from sync_run_scopes where run_id = ${runId}::uuid
      ) v
      where r.id = ${runId}::uuid`.execute(trx);
    await sql`delete from sync_pages where run_id = ${runId}::uuid`.execute(trx);
  });
  return readSummary(db, runId);
}

function failedScopesMessage(scopes: ReadonlyArray<{ scope: string; kind: string; status: string }>): string {
  const failed = scopes.filter((s) => s.status === 'failed');
  const names = failed.slice(0, 5).map((s) => (s.kind === 'supplier' ? `supplier ${s.scope}` : s.scope));
  return `${failed.length} part(s) failed and were not swept: ${names.join(', ')}${failed.length > 5 ? ', …' : ''} (see sync_run_scopes)`;
}

/** Memory for each hash or sort of this transaction (MB), unless the server allows more already. */
const RUN_SETS_WORK_MEM_MB = 64;

/**
 * The end of a run hashes every id it saw (de-duplicated into run_seen, then joined with plots and
 * links for the counts): 130,000 ids at 100,000 plots, 1.3 million at a million. Past work_mem
 * (4 MB by default) each of those hashes is split into batches written to temporary files and read
 * back; with room for them the no-change refresh's end at 100,000 plots took 0.90 s instead of
 * 1.15–1.18 (bench:refresh). For this transaction only, and never lowered.
 */
export async function roomForRunSets(trx: Tx): Promise<void> {
  await sql`select set_config('work_mem', greatest(pg_size_bytes(current_setting('work_mem')), ${RUN_SETS_WORK_MEM_MB * 1024 * 1024}::int8) / 1024 || 'kB', true)`.execute(
    trx,
  );
}

/**
 * Every id the run's pages saw, in a temp table with fresh statistics: the sweeps below are then
 * hash anti-joins whatever the size (an unnest inside NOT EXISTS is re-evaluated per row).
 */
/**
 * Every plot id the run's pages saw, once per (scope, id), with whether it was read through a supplier
 * (a link): read out of sync_pages once, for the sweep and for the counts. Materialised and analysed:
 * planned from a guess, the counts' joins probed the plot table once per seen id (19 s of a no-change
 * refresh at a million plots); with real statistics they hash.
 */
async function collectRunSeen(trx: Tx, runId: string): Promise<void> {
  await sql`create temp table run_seen (linked boolean not null, scope text not null, id text not null) on commit drop`.execute(
    trx,
  );
  await sql`
    insert into run_seen (linked, scope, id)
    select distinct p.scope <> ${OWN_PLOTS_SCOPE}, p.scope, u.id
    from sync_pages p cross join lateral unnest(p.ids) as u(id)
    where p.run_id = ${runId}::uuid and p.entity = 'plots'`.execute(trx);
  // The plans need row counts and rough distinct counts, not fine histograms: a sample of 3,000 rows
  // (target 10) instead of 30,000 costs a few ms instead of 27 at 20,000 plots, 57 at 100,000.
  await sql`set local default_statistics_target = 10`.execute(trx);
  await sql`analyze run_seen`.execute(trx);
}

async function collectSeenIds(trx: Tx, runId: string): Promise<void> {
  await sql`create temp table seen_ids (entity text not null, scope text not null, id text not null) on commit drop`.execute(
    trx,
  );
  // Plots of the suppliers swept and the own plots, from run_seen; the other entities from their pages.
  await sql`
    insert into seen_ids (entity, scope, id)
    select 'plots', s.scope, s.id from run_seen s
    where s.scope in (select scope from swept_suppliers) or s.scope = ${OWN_PLOTS_SCOPE}
    union all
    select p.entity, p.scope, u.id from sync_pages p cross join lateral unnest(p.ids) as u(id)
    where p.run_id = ${runId}::uuid and p.entity <> 'plots'`.execute(trx);
  // What a supplier's scan missed and its verification read found had slid across a page boundary: seen.
  await sql`
    insert into seen_ids (entity, scope, id)
    select 'plots', s.scope, u.id from sync_run_scopes s cross join lateral unnest(s.verify_seen) as u(id)
    where s.run_id = ${runId}::uuid and s.scope in (select scope from swept_suppliers)`.execute(trx);
  await sql`analyze seen_ids`.execute(trx);
}

/**
 * Suppliers read completely whose links must be compared with what was seen: those whose scan
 * missed live links (scan-verification.ts counted them) and those with links marked missing by an
 * earlier refresh (seen again, the mark goes). The pages of every supplier that was not read
 * completely are forgotten (source_pages), so its next read is complete and swept.
 */
async function chooseSweptSuppliers(trx: Tx, runId: string, sweeping: boolean): Promise<void> {
  await sql`create temp table swept_suppliers (scope text primary key, stable boolean not null) on commit drop`.execute(
    trx,
  );
  if (sweeping) {
    await sql`
      insert into swept_suppliers (scope, stable)
      select s.scope, coalesce(s.verify_status = 'stable', false) from sync_run_scopes s
      where s.run_id = ${runId}::uuid and s.kind = 'supplier' and s.status = 'succeeded'
        and (s.missing > 0 or exists (
          select 1 from plot_suppliers l where l.supplier_id = s.scope and l.missing_since is not null and l.deleted_at is null))`.execute(
      trx,
    );
  }
  await sql`
    delete from source_pages sp using sync_run_scopes s
    where s.run_id = ${runId}::uuid and s.kind = 'supplier' and s.scope = sp.scope and (s.status <> 'succeeded' or not ${sweeping})`.execute(
    trx,
  );
}

/**
 * Each plot and each link once per run. Pages count what they saw, so a plot reached through two
 * suppliers, or served twice by one supplier whose list grew during the scan, would be counted
 * `unchanged` again: a plot's or link's `unchanged` is what the run saw, once each, that it neither
 * inserted nor updated. (Inserts are exact: a row is inserted once.) Plots as a semi-join (each live
 * plot whose id the run saw): the same number as counting distinct seen ids that are live plots,
 * without hashing and de-duplicating the join's rows (303 → 216 ms at 100,000 plots).
 */
async function countOncePerRun(trx: Tx, counts: TableCounts): Promise<TableCounts> {
  const { rows } = await sql<{ plots: number; links: number }>`
    select (select count(*) from plots p where p.deleted_at is null and exists (select 1 from run_seen s where s.id = p.id))::int8 as plots,
           (select count(*) from run_seen s join plot_suppliers l on l.plot_id = s.id and l.supplier_id = s.scope and l.deleted_at is null where s.linked)::int8 as links`.execute(
    trx,
  );
  const seen = { plots: Number(rows[0]?.plots ?? 0), plot_suppliers: Number(rows[0]?.links ?? 0) };
  for (const table of ['plots', 'plot_suppliers'] as const) {
    const c = counts[table];
    if (c) c.unchanged = Math.max(0, seen[table] - c.inserted - c.updated);
  }
  return counts;
}

/** What each page counted, summed per table. */
async function pageCounts(trx: Tx, runId: string): Promise<TableCounts> {
  const { rows } = await sql<{
    table_name: string;
    inserted: number;
    updated: number;
    unchanged: number;
    deleted: number;
  }>`
    select c.key as table_name,
           sum((c.value->>'inserted')::int8)::int8 as inserted, sum((c.value->>'updated')::int8)::int8 as updated,
           sum((c.value->>'unchanged')::int8)::int8 as unchanged, sum((c.value->>'deleted')::int8)::int8 as deleted
    from sync_pages p, jsonb_each(p.counts) c
    where p.run_id = ${runId}::uuid
    group by c.key`.execute(trx);
  const counts = emptyCounts();
  for (const r of rows) addCounts(counts, r.table_name, r);
  return counts;
}

/**
 * Links of suppliers that completed but no longer reach a plot, and every link of a supplier that
 * is no longer connected (when the listing completed); own plots not listed any more (when they were
 * read completely); then plots left with no live link, with their history and analyses.
 *
 * A row written after `startedAt` was written by another refresh running at the same time (one
 * started by hand while the schedule's ran): it saw the row, so this sweep leaves it even if this
 * run did not see it. Returns the links deferred (missed, not proven gone: marked missing_since).
 */
async function sweepPlots(
  trx: Tx,
  runId: string,
  startedAt: RawBuilder<unknown>,
  complete: { network: boolean; ownPlots: boolean },
  counts: TableCounts,
): Promise<number> {
  await sql`create temp table swept_plots (id text primary key) on commit drop`.execute(trx);
  // One anti-join. Unseen links written before the run began go when proven gone (the supplier's
  // list was verified stable, or the previous complete refresh missed them too) and are marked missing
  // otherwise; those written since stay, but their supplier is forgotten too (see below), or they would
  // never be swept. Seen links lose a mark an earlier refresh left.
  const links = await sql<{ supplier_id: string; n: number; outcome: 'deleted' | 'deferred' | 'unsettled' }>`
    with unseen as (
      select l.plot_id, l.supplier_id, l.changed_at >= ${startedAt} as unsettled, (s.stable or l.missing_since is not null) as proven
      from plot_suppliers l join swept_suppliers s on l.supplier_id = s.scope
      where l.deleted_at is null
        and not exists (select 1 from seen_ids seen where seen.entity = 'plots' and seen.scope = l.supplier_id and seen.id = l.plot_id)
    ), swept as (
      update plot_suppliers l set deleted_at = now(), changed_at = now(), missing_since = null
      from unseen u where l.plot_id = u.plot_id and l.supplier_id = u.supplier_id and not u.unsettled and u.proven
      returning l.plot_id, l.supplier_id
    ), deferred as (
      update plot_suppliers l set missing_since = now()
      from unseen u where l.plot_id = u.plot_id and l.supplier_id = u.supplier_id and not u.unsettled and not u.proven
      returning l.supplier_id
    ), cleared as (
      update plot_suppliers l set missing_since = null
      from swept_suppliers s
      where l.supplier_id = s.scope and l.missing_since is not null and l.deleted_at is null
        and exists (select 1 from seen_ids seen where seen.entity = 'plots' and seen.scope = l.supplier_id and seen.id = l.plot_id)
      returning 1
    ), ins as (insert into swept_plots select distinct plot_id from swept on conflict do nothing)
    select supplier_id, count(*)::int8 as n, 'deleted' as outcome from swept group by supplier_id
    union all
    select supplier_id, count(*)::int8, 'deferred' from deferred group by supplier_id
    union all
    select distinct supplier_id, 0::int8, 'unsettled' from unseen where unsettled
    union all
    select null, count(*)::int8, 'cleared' from cleared`.execute(trx);
  const deferred = links.rows.filter((r) => r.outcome === 'deferred').reduce((n, r) => n + Number(r.n), 0);
  let deletedLinks = links.rows.filter((r) => r.outcome === 'deleted').reduce((n, r) => n + Number(r.n), 0);
  // A supplier that lost links, or holds links written by another refresh, has its pages read in
  // full next time (see source_pages). Deferred links need no such read: they are compared anyway.
  const forget = [
    ...new Set(
      links.rows.filter((r) => r.outcome === 'deleted' || r.outcome === 'unsettled').map((r) => r.supplier_id),
    ),
  ];
  if (complete.network) {
    const gone = await sql<{ n: number }>`
      with swept as (
        update plot_suppliers l set deleted_at = now(), changed_at = now()
        where l.deleted_at is null and l.changed_at < ${startedAt}
          and not exists (select 1 from sync_run_scopes s where s.run_id = ${runId}::uuid and s.kind = 'supplier' and s.scope = l.supplier_id)
        returning l.plot_id
      ), ins as (insert into swept_plots select distinct plot_id from swept on conflict do nothing)
      select count(*)::int8 as n from swept`.execute(trx);
    deletedLinks += Number(gone.rows[0]?.n ?? 0);
    await sql`
      delete from source_pages p
      where not exists (select 1 from sync_run_scopes s where s.run_id = ${runId}::uuid and s.kind = 'supplier' and s.scope = p.scope)`.execute(
      trx,
    );
  }
  if (forget.length > 0) await sql`delete from source_pages where scope = any(${forget}::text[])`.execute(trx);
  addCounts(counts, 'plot_suppliers', { deleted: deletedLinks });

  const orphaned = await sql<{ n: number }>`
    with gone as (
      update plots p set deleted_at = now(), changed_at = now()
      from swept_plots s
      where p.id = s.id and p.deleted_at is null and not p.is_own and p.changed_at < ${startedAt}
        and not exists (select 1 from plot_suppliers l where l.plot_id = p.id and l.deleted_at is null)
      returning p.id
    )
    select count(*)::int8 as n from gone`.execute(trx);
  let deletedPlots = Number(orphaned.rows[0]?.n ?? 0);
  // swept_plots also holds plots that merely lost one of several links: keep only those now deleted.
  await sql`delete from swept_plots s using plots p where p.id = s.id and p.deleted_at is null`.execute(trx);
  if (complete.ownPlots) {
    const own = await sql<{ n: number }>`
      with gone as (
        update plots p set deleted_at = now(), changed_at = now()
        where p.is_own and p.deleted_at is null and p.changed_at < ${startedAt}
          and not exists (select 1 from seen_ids seen where seen.entity = 'plots' and seen.scope = ${OWN_PLOTS_SCOPE} and seen.id = p.id)
        returning p.id
      ), ins as (insert into swept_plots select id from gone on conflict do nothing)
      select count(*)::int8 as n from gone`.execute(trx);
    deletedPlots += Number(own.rows[0]?.n ?? 0);
  }
  addCounts(counts, 'plots', { deleted: deletedPlots });
  if (deletedPlots === 0) return deferred;
  const history = await sql`
    update plot_history h set valid_to = now(), is_current = false
    from swept_plots s where h.plot_id = s.id and h.is_current`.execute(trx);
  addCounts(counts, 'plot_history', { updated: Number(history.numAffectedRows ?? 0) });
  // A plot that is gone is in no statement: its findings (the overlap ones too) stop holding.
  const findings = await sql`
    update eudr_findings f set valid_to = now(), is_current = false
    from swept_plots s where f.plot_id = s.id and f.is_current`.execute(trx);
  addCounts(counts, 'eudr_findings', { updated: Number(findings.numAffectedRows ?? 0) });
  const analyses = await sql`
    update analyses a set deleted_at = now(), changed_at = now()
    from swept_plots s where a.plot_id = s.id and a.deleted_at is null`.execute(trx);
  addCounts(counts, 'analyses', { deleted: Number(analyses.numAffectedRows ?? 0) });
  return deferred;
}

/** Rows of a listing read in one response that the response no longer had. */
async function sweepEntity(
  trx: Tx,
  startedAt: RawBuilder<unknown>,
  scope: string,
  table: 'businesses' | 'business_connections' | 'business_invitations',
  counts: TableCounts,
): Promise<void> {
  const result = await sql`
    update ${sql.table(table)} t set deleted_at = now(), changed_at = now()
    where t.deleted_at is null and t.changed_at < ${startedAt}
      and not exists (select 1 from seen_ids seen where seen.entity = ${table} and seen.scope = ${scope} and seen.id = t.id)`.execute(
    trx,
  );
  addCounts(counts, table, { deleted: Number(result.numAffectedRows ?? 0) });
}

export async function readSummary(db: Warehouse, runId: string): Promise<RunSummary> {
  const run = await db.selectFrom('sync_runs').selectAll().where('id', '=', runId).executeTakeFirstOrThrow();
  const countRows = await db
    .selectFrom('sync_run_counts')
    .selectAll()
    .where('run_id', '=', runId)
    .orderBy('table_name')
    .execute();
  const issues = await sql<{
    n: number;
    replaced: number;
  }>`select count(*)::int8 as n, count(*) filter (where action = 'replaced')::int8 as replaced
     from sync_issues where run_id = ${runId}::uuid`.execute(db);
  const counts = emptyCounts();
  let rowsWritten = 0;
  for (const c of countRows) {
    addCounts(counts, c.table_name, c);
    rowsWritten += c.inserted + c.updated + c.deleted;
  }
  const finished = run.finished_at ?? new Date();
  return {
    runId,
    status: run.status,
    startedAt: run.started_at.toISOString(),
    finishedAt: finished.toISOString(),
    seconds: Math.round((finished.getTime() - run.started_at.getTime()) / 100) / 10,
    suppliers: run.suppliers_total ?? 0,
    suppliersFailed: run.suppliers_failed,
    pages: run.pages,
    plotsSeen: run.plots_seen,
    requests: run.requests,
    retries: run.retries,
    rateLimited: run.rate_limited,
    counts,
    rowsWritten,
    deletionsConfirmed: Number(run.deletions_confirmed),
    deletionsDeferred: Number(run.deletions_deferred),
    verifyPages: run.verify_pages,
    issues: Number(issues.rows[0]?.n ?? 0),
    valuesReplaced: Number(issues.rows[0]?.replaced ?? 0),
    error: run.error,
  };
}
