import { type Kysely, sql } from 'kysely';
import type { Warehouse } from './database.ts';

/**
 * The summary tables behind the analysts' summary views (migration 0028, docs/analyst-summaries.md):
 * `summary_suppliers`, `summary_supplier_countries`, `summary_risk_cells`, `summary_totals`. The
 * views used to aggregate every current plot at each read (bi_suppliers 2 s at 100,000 plots); they
 * now read these few rows and join live only what changes without a refresh (business names,
 * connections, when a part was last read, the country risk level in force today).
 *
 * Only a refresh writes what they sum (plots, links, analyses, findings: its pages, its sweep, its
 * cross-plot checks), and a migration may; so they are made to agree with the plots where a refresh
 * ends, whatever its outcome (`finishRefresh`, after the cross-plot checks), and where migrations ran
 * (`migrateToLatest`). Each time in one transaction that reads one snapshot and writes only the rows
 * whose figures differ: a reader sees the old summaries or the new ones, never a mix, and a refresh
 * that changed nothing writes nothing here either.
 */

// biome-ignore lint/suspicious/noExplicitAny: the migrator's connection has no schema type
type Db = Kysely<any>;

/** Any one writer at a time (two runs ending together, a migration): the second waits, then writes what changed since. */
const SUMMARY_LOCK_ID = 7_250_028;

/** The tables whose rows the summaries add up: a run that wrote none of them leaves the summaries true. */
export const SUMMARISED_TABLES = ['plots', 'plot_suppliers', 'analyses', 'eudr_findings'] as const;

export interface SummaryOutcome {
  /** false when nothing they sum changed since they were last made. */
  refreshed: boolean;
  rowsWritten: number;
  seconds: number;
}

/**
 * At the end of a refresh run (succeeded, partial or failed alike: each may have written plots).
 * Skipped when the run wrote none of the summarised tables and no other run did since the summaries
 * were last made (a run not finished yet counts as having written: its counts are not known).
 */
export async function refreshSummariesAfterRun(db: Warehouse, runId: string): Promise<SummaryOutcome> {
  return oneWriter(db, async (trx, started) => {
    if (!(await summariesStale(trx, runId))) return { refreshed: false, rowsWritten: 0, seconds: 0 };
    const rowsWritten = await writeSummaries(trx);
    const seconds = (performance.now() - started) / 1000;
    await recordRefresh(trx, runId, rowsWritten, seconds);
    return { refreshed: true, rowsWritten, seconds };
  });
}

/**
 * Runs `write` in a repeatable-read transaction once no other writer of the summaries is at work: the
 * lock is the session's, taken before the transaction, so its snapshot includes what the writer
 * before it committed (a transaction-level lock would be taken after the snapshot, and the later
 * writer would fail on the rows the earlier one rewrote).
 */
async function oneWriter(
  db: Warehouse,
  write: (trx: Db, started: number) => Promise<SummaryOutcome>,
): Promise<SummaryOutcome> {
  return db.connection().execute(async (conn) => {
    await sql`select pg_advisory_lock(${SUMMARY_LOCK_ID})`.execute(conn);
    try {
      const started = performance.now();
      return await conn
        .transaction()
        .setIsolationLevel('repeatable read')
        .execute((trx) => write(trx, started));
    } finally {
      await sql`select pg_advisory_unlock(${SUMMARY_LOCK_ID})`.execute(conn);
    }
  });
}

/**
 * Made to agree with the plots now, whatever changed: for rows written by other means than a refresh
 * (tests that write plots by hand, a repair by SQL).
 */
export async function refreshSummaries(db: Warehouse): Promise<SummaryOutcome> {
  return oneWriter(db, async (trx, started) => {
    const rowsWritten = await writeSummaries(trx);
    const seconds = (performance.now() - started) / 1000;
    await recordRefresh(trx, null, rowsWritten, seconds);
    return { refreshed: true, rowsWritten, seconds };
  });
}

/**
 * After migrations ran, inside the migrator's transaction (a migration may change plots or findings,
 * and 0028 starts the tables empty). Does nothing before 0028.
 */
export async function refreshSummariesAfterMigrations(conn: Db): Promise<SummaryOutcome | undefined> {
  const { rows } = await sql<{ present: boolean }>`
    select to_regclass('summary_refreshes') is not null as present`.execute(conn);
  if (!rows[0]?.present) return undefined;
  const started = performance.now();
  await sql`select pg_advisory_xact_lock(${SUMMARY_LOCK_ID})`.execute(conn);
  const rowsWritten = await writeSummaries(conn);
  const seconds = (performance.now() - started) / 1000;
  await recordRefresh(conn, null, rowsWritten, seconds);
  return { refreshed: true, rowsWritten, seconds };
}

async function summariesStale(db: Db, runId: string): Promise<boolean> {
  const { rows } = await sql<{ stale: boolean }>`
    select not exists (select 1 from summary_refreshes)
        or exists (
          select 1 from sync_runs r
          where (r.id = ${runId}::uuid
                 or r.finished_at is null
                 or r.finished_at >= (select refreshed_at from summary_refreshes))
            and (r.finished_at is null and r.id <> ${runId}::uuid
                 or exists (select 1 from sync_run_counts c
                            where c.run_id = r.id and c.table_name = any(${[...SUMMARISED_TABLES]}::text[])
                              and c.inserted + c.updated + c.deleted > 0))
        ) as stale`.execute(db);
  return rows[0]?.stale ?? true;
}

async function recordRefresh(db: Db, runId: string | null, rowsWritten: number, seconds: number): Promise<void> {
  await sql`delete from summary_refreshes`.execute(db);
  await sql`
    insert into summary_refreshes (refreshed_at, run_id, rows_written, seconds)
    values (now(), ${runId}::uuid, ${rowsWritten}, ${seconds})`.execute(db);
}

/**
 * The current plots as the per-plot views see them, one row each, with what the summaries need:
 * the same expressions as bi_current_plots (flagged, the normalised values, supplier_count) and
 * bi_eudr_plot_readiness (area_ha, ready, blocking_codes).
 */
const PLOTS = sql`
  create temp table summary_plots on commit drop as
  select p.id as plot_id, p.is_own, p.country_code, upper(btrim(coalesce(p.country_code, ''))) as country_key,
         p.commodities, p.area_ha, coalesce(p.area_ha, p.surface_area_m2 / 10000.0) as readiness_area_ha,
         p.geometry_valid, n.risk_level, n.risk_assessment_status,
         ((n.risk_level in ('high', 'medium')) is true
           or (n.risk_assessment_status in ('in_risk_mitigation', 'eudr_non_compliant')) is true) as flagged,
         p.most_recent_analysis_id, normalise_status(mr.status) as most_recent_analysis_status,
         mr.risk_of_deforestation as most_recent_risk_of_deforestation,
         mr.deforested_area_m2 as most_recent_deforested_area_m2, mr.analysed_at as most_recent_analysed_at,
         p.precision_analysis_id,
         p.content_hash <> '' as checked,
         p.content_hash <> '' and f.plot_id is null as ready,
         coalesce(l.supplier_count, 0) as supplier_count
  from plots p
  -- Each normalised once per plot.
  cross join lateral (select normalise_status(p.risk_level) as risk_level,
                             normalise_status(p.risk_assessment_status) as risk_assessment_status offset 0) n
  left join analyses mr on mr.id = p.most_recent_analysis_id
  left join (select plot_id, count(*) as supplier_count from plot_suppliers where deleted_at is null group by plot_id) l
    on l.plot_id = p.id
  left join (select distinct plot_id from eudr_findings where is_current and severity = 'blocking') f on f.plot_id = p.id
  where p.deleted_at is null`;

/** Live links to current plots (what bi_suppliers' and bi_eudr_supplier_readiness's rows count). */
const LINKS = sql`
  create temp table summary_links on commit drop as
  select ps.supplier_id, ps.missing_since, p.*
  from plot_suppliers ps join summary_plots p on p.plot_id = ps.plot_id
  where ps.deleted_at is null`;

/** Every business with a live link, and each link's blocking codes (not_checked for a plot not checked yet). */
const SUPPLIERS = sql`
  create temp table summary_link_suppliers on commit drop as
  select distinct supplier_id from plot_suppliers where deleted_at is null`;
const REASONS = sql`
  create temp table summary_link_reasons on commit drop as
  select l.supplier_id, e.code
  from summary_links l join eudr_findings e on e.plot_id = l.plot_id and e.is_current and e.severity = 'blocking'
  union all
  select l.supplier_id, 'not_checked' from summary_links l where not l.checked`;

const SUPPLIER_FIGURES = sql`
  with figures as (
    select l.supplier_id,
           count(*) as plots,
           count(*) filter (where l.missing_since is not null) as plots_deletion_deferred,
           count(*) filter (where l.supplier_count > 1) as plots_shared,
           sum(1.0::float8 / l.supplier_count) as plots_allocated,
           coalesce(sum(l.area_ha), 0) as hectares,
           coalesce(sum(l.area_ha / l.supplier_count), 0) as hectares_allocated,
           count(*) filter (where l.flagged) as flagged_plots,
           coalesce(sum(l.area_ha) filter (where l.flagged), 0) as flagged_hectares,
           count(*) filter (where l.risk_level = 'high') as plots_risk_high,
           count(*) filter (where l.risk_level = 'medium') as plots_risk_medium,
           count(*) filter (where l.risk_level = 'low') as plots_risk_low,
           count(*) filter (where l.risk_level = 'none') as plots_risk_none,
           count(*) filter (where l.risk_level is null) as plots_risk_not_assessed,
           count(*) filter (where l.risk_level not in ('high', 'medium', 'low', 'none')) as plots_risk_other,
           count(*) filter (where l.risk_assessment_status = 'new') as plots_status_new,
           count(*) filter (where l.risk_assessment_status = 'under_review') as plots_status_under_review,
           count(*) filter (where l.risk_assessment_status = 'in_risk_mitigation') as plots_status_in_risk_mitigation,
           count(*) filter (where l.risk_assessment_status = 'eudr_compliant') as plots_status_eudr_compliant,
           count(*) filter (where l.risk_assessment_status = 'eudr_non_compliant') as plots_status_eudr_non_compliant,
           count(*) filter (where l.risk_assessment_status is null
                              or l.risk_assessment_status not in ('new', 'under_review', 'in_risk_mitigation', 'eudr_compliant', 'eudr_non_compliant')) as plots_status_other,
           count(*) filter (where l.most_recent_analysis_status = 'succeeded') as plots_analysis_succeeded,
           count(*) filter (where l.most_recent_analysis_status in ('pending', 'not_started', 'started')) as plots_analysis_in_progress,
           count(*) filter (where l.most_recent_analysis_status = 'failed') as plots_analysis_failed,
           count(*) filter (where l.most_recent_analysis_id is null) as plots_not_analysed,
           count(*) filter (where l.most_recent_analysis_id is not null
                              and (l.most_recent_analysis_status is null
                                   or l.most_recent_analysis_status not in ('succeeded', 'pending', 'not_started', 'started', 'failed'))) as plots_analysis_other,
           count(*) filter (where l.precision_analysis_id is not null) as plots_with_precision,
           max(l.most_recent_risk_of_deforestation) as max_risk_of_deforestation,
           coalesce(sum(l.most_recent_deforested_area_m2), 0) as deforested_area_m2,
           max(l.most_recent_analysed_at) as last_analysed_at,
           count(*) filter (where not l.geometry_valid) as invalid_geometries,
           count(*) filter (where l.ready) as plots_ready,
           coalesce(sum(l.readiness_area_ha), 0) as readiness_hectares,
           coalesce(sum(l.readiness_area_ha) filter (where l.ready), 0) as hectares_ready
    from summary_links l
    group by l.supplier_id
  ),
  -- Distinct values by grouping first (hashed), then sorted per supplier: no sort of every link.
  countries as (
    select x.supplier_id, array_agg(x.country_code order by x.country_code) as plot_country_codes
    from (select distinct l.supplier_id, l.country_code from summary_links l where l.country_code is not null) x
    group by x.supplier_id
  ),
  commodities as (
    select x.supplier_id, array_agg(x.commodity order by x.commodity) as commodities
    from (select distinct l.supplier_id, c.commodity from summary_links l cross join lateral unnest(l.commodities) as c(commodity)) x
    group by x.supplier_id
  ),
  reasons as (
    select x.supplier_id,
           jsonb_agg(jsonb_build_object('code', x.code, 'plots', x.plots) order by x.plots desc, x.code) as top_reasons
    from (
      select r.supplier_id, r.code, count(*) as plots,
             row_number() over (partition by r.supplier_id order by count(*) desc, r.code) as rank
      from summary_link_reasons r
      group by r.supplier_id, r.code
    ) x
    where x.rank <= 5
    group by x.supplier_id
  )
  select s.supplier_id, f.plots, f.plots_deletion_deferred, f.plots_shared, f.plots_allocated, f.hectares,
         f.hectares_allocated, k.plot_country_codes, c.commodities, f.flagged_plots, f.flagged_hectares,
         f.plots_risk_high, f.plots_risk_medium, f.plots_risk_low, f.plots_risk_none, f.plots_risk_not_assessed,
         f.plots_risk_other, f.plots_status_new, f.plots_status_under_review, f.plots_status_in_risk_mitigation,
         f.plots_status_eudr_compliant, f.plots_status_eudr_non_compliant, f.plots_status_other,
         f.plots_analysis_succeeded, f.plots_analysis_in_progress, f.plots_analysis_failed, f.plots_not_analysed,
         f.plots_analysis_other, f.plots_with_precision, f.max_risk_of_deforestation, f.deforested_area_m2,
         f.last_analysed_at, f.invalid_geometries, f.plots_ready, f.readiness_hectares, f.hectares_ready, r.top_reasons
  from summary_link_suppliers s
  left join figures f on f.supplier_id = s.supplier_id
  left join countries k on k.supplier_id = s.supplier_id
  left join commodities c on c.supplier_id = s.supplier_id
  left join reasons r on r.supplier_id = s.supplier_id`;

const SUPPLIER_COUNTRIES = sql`
  select l.supplier_id, l.country_key, count(*) as plots
  from summary_links l
  group by l.supplier_id, l.country_key`;

/**
 * bi_risk_overview's rows, as its definition before 0028 made them from bi_current_plots: a plot has
 * a cell per live supplier (or one without) and commodity (or one without; none when commodities is
 * null, as unnest gives nothing), each weighing 1 / its cells. Counted without sorting: the cells of a
 * plot are suppliers × commodities, and a commodity listed twice makes the same cell twice (`copies`:
 * its hectares and weight count twice, as they did, the plot once).
 */
const RISK_CELLS = sql`
  with cells as (
    -- Grouped by the cell's key alone (the plot's own values are the same in each of its rows).
    select p.plot_id, ps.supplier_id as supplier_business_id, c.commodity, count(*) as copies,
           max(p.area_ha) as area_ha, bool_or(p.flagged) as flagged, max(p.country_code) as country_code,
           bool_or(p.is_own) as is_own,
           max(1.0::float8 / (greatest(p.supplier_count, 1) * greatest(cardinality(p.commodities), 1))) as weight
    from summary_plots p
    left join plot_suppliers ps on ps.plot_id = p.plot_id and ps.deleted_at is null
    cross join lateral unnest(case when cardinality(p.commodities) = 0 then array[null::text] else p.commodities end) as c(commodity)
    group by p.plot_id, ps.supplier_id, c.commodity
  )
  select w.supplier_business_id, w.commodity, w.country_code,
         (w.supplier_business_id is null and w.is_own) as own_group,
         bool_and(w.is_own) as all_own,
         count(*) as plots,
         coalesce(sum(w.area_ha * w.copies), 0) as hectares,
         count(*) filter (where w.flagged) as flagged_plots,
         sum(w.weight * w.copies) as plots_allocated,
         coalesce(sum(w.weight * w.copies * w.area_ha), 0) as hectares_allocated
  from cells w
  group by w.supplier_business_id, w.commodity, w.country_code, (w.supplier_business_id is null and w.is_own)`;

const TOTALS = sql`
  select count(*) as plots,
         coalesce(sum(p.area_ha), 0) as hectares,
         count(*) filter (where p.area_ha is null) as plots_without_area,
         count(*) filter (where p.is_own) as own_plots,
         count(*) filter (where p.supplier_count > 0) as supplier_plots,
         count(*) filter (where p.supplier_count > 1) as shared_plots,
         count(*) filter (where p.flagged) as flagged_plots,
         coalesce(sum(p.area_ha) filter (where p.flagged), 0) as flagged_hectares,
         count(*) filter (where not p.geometry_valid) as invalid_geometries
  from summary_plots p`;

/**
 * Makes `table` hold exactly the rows of `fresh` (whose columns are the table's, in order), writing
 * only the rows that differ: one whose text differs is deleted and its new version inserted. Rows
 * are compared as text (hashable; a float8 prints its exact value), so an unchanged table gets no
 * write at all. Returns the rows deleted plus inserted.
 */
async function replaceRows(db: Db, table: string, fresh: ReturnType<typeof sql>): Promise<number> {
  const t = sql.table(table);
  await sql`create temp table summary_fresh on commit drop as ${fresh}`.execute(db);
  const deleted = await sql`
    delete from ${t} t where not exists (select 1 from summary_fresh f where (f.*)::text = (t.*)::text)`.execute(db);
  const inserted = await sql`
    insert into ${t} select * from summary_fresh f
    where not exists (select 1 from ${t} t where (t.*)::text = (f.*)::text)`.execute(db);
  await sql`drop table summary_fresh`.execute(db);
  return Number(deleted.numAffectedRows ?? 0) + Number(inserted.numAffectedRows ?? 0);
}

/**
 * Computes every summary from the current plots and writes what differs. In the caller's
 * transaction; with repeatable read every statement reads the same snapshot.
 */
async function writeSummaries(db: Db): Promise<number> {
  // Sums of float8 depend on the order rows are added: one plan (no parallel workers) keeps an
  // unchanged warehouse's figures bit for bit, so they compare equal and are not rewritten.
  await sql`set local max_parallel_workers_per_gather = 0`.execute(db);
  // Room for the hash tables of 1,000,000 plots' aggregates in memory.
  await sql`set local work_mem = '128MB'`.execute(db);
  await PLOTS.execute(db);
  await LINKS.execute(db);
  await SUPPLIERS.execute(db);
  await REASONS.execute(db);
  let written = 0;
  written += await replaceRows(db, 'summary_suppliers', SUPPLIER_FIGURES);
  written += await replaceRows(db, 'summary_supplier_countries', SUPPLIER_COUNTRIES);
  written += await replaceRows(db, 'summary_risk_cells', RISK_CELLS);
  written += await replaceRows(db, 'summary_totals', TOTALS);
  await sql`drop table summary_plots, summary_links, summary_link_suppliers, summary_link_reasons`.execute(db);
  return written;
}
