import { type Kysely, type RawBuilder, sql } from 'kysely';
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
 * whose figures differ: a reader sees the old summaries or the new ones, never a mix.
 *
 * Incremental (migration 0029): triggers note in `summary_changes` every plot a committed write
 * touched; `summary_plot_facts` keeps what the summaries counted of each plot. A making reads the
 * noted plots again, and makes again only the rows of the suppliers they belong to, before or after,
 * the rows without a supplier when one of them has or had none, and the totals (from the facts). A
 * refresh that touched nothing reads one empty table and writes nothing.
 */

// biome-ignore lint/suspicious/noExplicitAny: the migrator's connection has no schema type
type Db = Kysely<any>;

/** Any one writer at a time (two runs ending together, a migration): the second waits, then writes what changed since. */
const SUMMARY_LOCK_ID = 7_250_028;
/**
 * Taken alone by a making that fills empty facts, before it reads: the triggers skip noting while the
 * facts are empty and hold it shared to their commit (migration 0029), so no write falls between.
 */
const FILLING_LOCK_ID = 7_250_029;
/** Past this share of the counted plots noted as touched, every plot is read again in one pass instead. */
const WHOLE_AT_SHARE = 0.25;

export interface SummaryOutcome {
  /** false when nothing they sum changed since they were last made. */
  refreshed: boolean;
  /** Every plot read again (first load, migrations, on demand), or only the touched ones. */
  whole?: boolean;
  /** Plots read again: those noted as touched since the summaries were last made, or every current plot when whole. */
  plotsTouched?: number;
  rowsWritten: number;
  seconds: number;
}

/**
 * At the end of a refresh run (succeeded, partial or failed alike: each may have written plots).
 * Skipped, writing nothing, when no write touched a summarised table since the summaries were last
 * made (`summary_changes` is empty).
 */
export async function refreshSummariesAfterRun(db: Warehouse, runId: string): Promise<SummaryOutcome> {
  return oneWriter(db, false, runId);
}

/**
 * Made to agree with the plots now, reading every plot: for rows written by other means than a
 * refresh with the triggers in place (tests that write plots by hand, a repair by SQL).
 */
export async function refreshSummaries(db: Warehouse): Promise<SummaryOutcome> {
  return oneWriter(db, true, null);
}

/**
 * Runs a making in a repeatable-read transaction once no other writer of the summaries is at work: the
 * locks are the session's, taken before the transaction, so its snapshot includes what the writer
 * before it committed (a transaction-level lock would be taken after the snapshot, and the later
 * writer would fail on the rows the earlier one rewrote).
 */
async function oneWriter(db: Warehouse, whole: boolean, runId: string | null): Promise<SummaryOutcome> {
  return db.connection().execute(async (conn) => {
    await sql`select pg_advisory_lock(${SUMMARY_LOCK_ID})`.execute(conn);
    // Facts only change under the lock above: empty now, empty when the transaction reads.
    const filling = await factsEmpty(conn);
    if (filling) await sql`select pg_advisory_lock(${FILLING_LOCK_ID})`.execute(conn);
    try {
      const started = performance.now();
      return await conn
        .transaction()
        .setIsolationLevel('repeatable read')
        .execute(async (trx) => {
          const made = await makeSummaries(trx, whole || filling);
          if (!made) return { refreshed: false, rowsWritten: 0, seconds: 0 };
          const seconds = (performance.now() - started) / 1000;
          await recordRefresh(trx, runId, made.rowsWritten, seconds);
          return { refreshed: true, ...made, seconds };
        });
    } finally {
      if (filling) await sql`select pg_advisory_unlock(${FILLING_LOCK_ID})`.execute(conn);
      await sql`select pg_advisory_unlock(${SUMMARY_LOCK_ID})`.execute(conn);
    }
  });
}

/**
 * After migrations ran, inside the migrator's transaction (a migration may change plots or findings,
 * or how a figure is counted, and 0028 starts the tables empty): every plot read again. Does nothing
 * before 0029. Writers of plots wait for the migrator's locks, so none falls between.
 */
export async function refreshSummariesAfterMigrations(conn: Db): Promise<SummaryOutcome | undefined> {
  const { rows } = await sql<{ present: boolean }>`
    select to_regclass('summary_plot_facts') is not null as present`.execute(conn);
  if (!rows[0]?.present) return undefined;
  const started = performance.now();
  await sql`select pg_advisory_xact_lock(${SUMMARY_LOCK_ID})`.execute(conn);
  // Before the facts are read (each statement reads what committed before it): a write that skipped
  // noting while they were empty has committed by then.
  await sql`select pg_advisory_xact_lock(${FILLING_LOCK_ID})`.execute(conn);
  const made = await makeSummaries(conn, true);
  const rowsWritten = made?.rowsWritten ?? 0;
  const seconds = (performance.now() - started) / 1000;
  await recordRefresh(conn, null, rowsWritten, seconds);
  return { refreshed: true, whole: true, plotsTouched: made?.plotsTouched ?? 0, rowsWritten, seconds };
}

async function factsEmpty(db: Db): Promise<boolean> {
  const { rows } = await sql<{ empty: boolean }>`
    select not exists (select 1 from summary_plot_facts) as empty`.execute(db);
  return rows[0]?.empty ?? true;
}

async function recordRefresh(db: Db, runId: string | null, rowsWritten: number, seconds: number): Promise<void> {
  await sql`delete from summary_refreshes`.execute(db);
  await sql`
    insert into summary_refreshes (refreshed_at, run_id, rows_written, seconds)
    values (now(), ${runId}::uuid, ${rowsWritten}, ${seconds})`.execute(db);
}

/**
 * What the summaries count of each plot in `plots` (a filter on `p`): the same expressions as
 * bi_current_plots (flagged, the normalised values) and bi_eudr_plot_readiness (area, checked, ready),
 * its live links and its current blocking codes; current plots only. Links and findings are grouped
 * once for all plots (hashed) when every plot is read, looked up per plot otherwise.
 */
function plotFacts(scope: RawBuilder<unknown> | null) {
  const plots = scope ?? sql`true`;
  const links = scope
    ? sql`left join lateral (
        select array_agg(ps.supplier_id order by ps.supplier_id) as supplier_ids,
               array_agg(ps.supplier_id order by ps.supplier_id) filter (where ps.missing_since is not null) as missing_ids
        from plot_suppliers ps where ps.plot_id = p.id and ps.deleted_at is null) l on true`
    : sql`left join (
        select ps.plot_id, array_agg(ps.supplier_id order by ps.supplier_id) as supplier_ids,
               array_agg(ps.supplier_id order by ps.supplier_id) filter (where ps.missing_since is not null) as missing_ids
        from plot_suppliers ps where ps.deleted_at is null group by ps.plot_id) l on l.plot_id = p.id`;
  const findings = scope
    ? sql`left join lateral (
        select array_agg(e.code order by e.code) as codes
        from eudr_findings e where e.plot_id = p.id and e.is_current and e.severity = 'blocking') f on true`
    : sql`left join (
        select e.plot_id, array_agg(e.code order by e.code) as codes
        from eudr_findings e where e.is_current and e.severity = 'blocking' group by e.plot_id) f on f.plot_id = p.id`;
  return sql`
  select p.id as plot_id, p.is_own, p.country_code, upper(btrim(coalesce(p.country_code, ''))) as country_key,
         p.commodities, p.area_ha, coalesce(p.area_ha, p.surface_area_m2 / 10000.0) as readiness_area_ha,
         p.geometry_valid, n.risk_level, n.risk_assessment_status,
         ((n.risk_level in ('high', 'medium')) is true
           or (n.risk_assessment_status in ('in_risk_mitigation', 'eudr_non_compliant')) is true) as flagged,
         p.most_recent_analysis_id, m.status as most_recent_analysis_status,
         mr.risk_of_deforestation as most_recent_risk_of_deforestation,
         mr.deforested_area_m2 as most_recent_deforested_area_m2, mr.analysed_at as most_recent_analysed_at,
         p.precision_analysis_id is not null as has_precision,
         p.content_hash <> '' as checked,
         p.content_hash <> '' and f.codes is null as ready,
         coalesce(l.supplier_ids, '{}') as supplier_ids, coalesce(l.missing_ids, '{}') as missing_supplier_ids,
         coalesce(f.codes, '{}') as blocking_codes
  from plots p
  -- Each normalised once per distinct value (the planner memoises these on their inputs).
  cross join lateral (select normalise_status(p.risk_level) as risk_level,
                             normalise_status(p.risk_assessment_status) as risk_assessment_status offset 0) n
  left join analyses mr on mr.id = p.most_recent_analysis_id
  left join lateral (select normalise_status(mr.status) as status offset 0) m on true
  ${links}
  ${findings}
  where p.deleted_at is null and ${plots}`;
}

/**
 * Live links to current plots, with what the supplier rows and risk cells count of the plot (what
 * bi_suppliers', bi_eudr_supplier_readiness's and bi_risk_overview's rows count), of the suppliers in
 * `summary_scope` (all when whole). Read by three statements, so kept; only the columns they read (a
 * temporary table beyond temp_buffers goes to disk: the facts' arrays and ids doubled its width).
 */
function links(whole: boolean) {
  const scope = whole
    ? sql`true`
    : sql`f.plot_id in (select ps.plot_id from plot_suppliers ps join summary_scope s on s.supplier_id = ps.supplier_id
                        where ps.deleted_at is null)
          and s.supplier_id in (select supplier_id from summary_scope)`;
  return sql`
  create temp table summary_links on commit drop as
  select s.supplier_id, s.supplier_id = any(f.missing_supplier_ids) as missing,
         cardinality(f.supplier_ids) as supplier_count, f.is_own, f.country_code, f.country_key, f.commodities,
         f.area_ha, f.readiness_area_ha, f.geometry_valid, f.risk_level, f.risk_assessment_status, f.flagged,
         f.most_recent_analysis_id is not null as analysed, f.most_recent_analysis_status,
         f.most_recent_risk_of_deforestation, f.most_recent_deforested_area_m2, f.most_recent_analysed_at,
         f.has_precision, f.ready,
         -- Its blocking codes, and not_checked for a plot not checked yet (the top reasons count these).
         case when f.checked then f.blocking_codes else f.blocking_codes || 'not_checked'::text end as reasons
  from summary_plot_facts f cross join unnest(f.supplier_ids) as s(supplier_id)
  where ${scope}`;
}

/** Every business with a live link (to a current plot or not) among those made again. */
function suppliers(whole: boolean) {
  return sql`
  select distinct ps.supplier_id from plot_suppliers ps
  where ps.deleted_at is null
    and ${whole ? sql`true` : sql`ps.supplier_id in (select supplier_id from summary_scope)`}`;
}

/** The rows of summary_suppliers made again: read once each, so not kept (a query of its own each). */
function supplierFigures(whole: boolean) {
  return sql`
  with figures as (
    select l.supplier_id,
           count(*) as plots,
           count(*) filter (where l.missing) as plots_deletion_deferred,
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
           count(*) filter (where not l.analysed) as plots_not_analysed,
           count(*) filter (where l.analysed
                              and (l.most_recent_analysis_status is null
                                   or l.most_recent_analysis_status not in ('succeeded', 'pending', 'not_started', 'started', 'failed'))) as plots_analysis_other,
           count(*) filter (where l.has_precision) as plots_with_precision,
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
      select l.supplier_id, r.code, count(*) as plots,
             row_number() over (partition by l.supplier_id order by count(*) desc, r.code) as rank
      from summary_links l cross join unnest(l.reasons) as r(code)
      group by l.supplier_id, r.code
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
  from (${suppliers(whole)}) s
  left join figures f on f.supplier_id = s.supplier_id
  left join countries k on k.supplier_id = s.supplier_id
  left join commodities c on c.supplier_id = s.supplier_id
  left join reasons r on r.supplier_id = s.supplier_id`;
}

const SUPPLIER_COUNTRIES = sql`
  select l.supplier_id, l.country_key, count(*) as plots
  from summary_links l
  group by l.supplier_id, l.country_key`;

/**
 * bi_risk_overview's rows, as its definition before 0028 made them from bi_current_plots: a plot has
 * a cell per live supplier (or one without) and commodity (or one without; none when commodities is
 * null, as unnest gives nothing), each weighing 1 / its cells. Counted in one aggregation, without
 * grouping by plot first: each plot gives a cell one row, at the first place its commodity has in its
 * list (`array_position`, which finds a null too), and a commodity listed twice makes the same cell
 * twice (`copies`: its hectares and weight count twice, as they did, the plot once). Made of the links
 * being made again and, when `withoutSupplier`, of the plots reached through none.
 */
function riskCells(withoutSupplier: boolean) {
  return sql`
  with cell_plots as (
    select l.supplier_id, l.commodities, l.area_ha, l.flagged, l.country_code, l.is_own, l.supplier_count
    from summary_links l
    union all
    select null, f.commodities, f.area_ha, f.flagged, f.country_code, f.is_own, 0
    from summary_plot_facts f
    where f.supplier_ids = '{}' and ${sql.lit(withoutSupplier)}
  ),
  cells as (
    select p.supplier_id as supplier_business_id, c.commodity, p.area_ha, p.flagged, p.country_code, p.is_own,
           case when cardinality(p.commodities) = 0 then 1
                else cardinality(array_positions(p.commodities, c.commodity)) end as copies,
           1.0::float8 / (greatest(p.supplier_count, 1) * greatest(cardinality(p.commodities), 1)) as weight
    from cell_plots p
    cross join lateral unnest(case when cardinality(p.commodities) = 0 then array[null::text] else p.commodities end)
      with ordinality as c(commodity, place)
    where cardinality(p.commodities) = 0 or c.place = array_position(p.commodities, c.commodity)
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
}

/** From the facts of every current plot: one pass over a narrow table, whatever was touched. */
const TOTALS = sql`
  select count(*) as plots,
         coalesce(sum(p.area_ha), 0) as hectares,
         count(*) filter (where p.area_ha is null) as plots_without_area,
         count(*) filter (where p.is_own) as own_plots,
         count(*) filter (where cardinality(p.supplier_ids) > 0) as supplier_plots,
         count(*) filter (where cardinality(p.supplier_ids) > 1) as shared_plots,
         count(*) filter (where p.flagged) as flagged_plots,
         coalesce(sum(p.area_ha) filter (where p.flagged), 0) as flagged_hectares,
         count(*) filter (where not p.geometry_valid) as invalid_geometries
  from summary_plot_facts p`;

/**
 * Makes the rows of `table` that `scope` selects (a condition on `t`) hold exactly the rows of `fresh`
 * (whose columns are the table's, in order, and all within the scope), writing only the rows that
 * differ: one whose text differs is deleted and its new version inserted. Rows are compared as text
 * (hashable; a float8 prints its exact value), so an unchanged row gets no write at all. Returns the
 * rows deleted plus inserted.
 */
async function replaceRows(
  db: Db,
  table: string,
  fresh: RawBuilder<unknown>,
  scope: RawBuilder<unknown>,
): Promise<number> {
  const t = sql.table(table);
  // Nothing in the scope (a first load: only the totals' row is there): nothing to compare with.
  const { rows } = await sql<{ empty: boolean }>`
    select not exists (select 1 from ${t} t where ${scope}) as empty`.execute(db);
  if (rows[0]?.empty) {
    const inserted = await sql`insert into ${t} ${fresh}`.execute(db);
    return Number(inserted.numAffectedRows ?? 0);
  }
  await sql`create temp table summary_fresh on commit drop as ${fresh}`.execute(db);
  const deleted = await sql`
    delete from ${t} t
    where ${scope} and not exists (select 1 from summary_fresh f where (f.*)::text = (t.*)::text)`.execute(db);
  const inserted = await sql`
    insert into ${t} select * from summary_fresh f
    where not exists (select 1 from ${t} t where (t.*)::text = (f.*)::text)`.execute(db);
  await sql`drop table summary_fresh`.execute(db);
  return Number(deleted.numAffectedRows ?? 0) + Number(inserted.numAffectedRows ?? 0);
}

async function count(db: Db, query: RawBuilder<unknown>): Promise<number> {
  const { rows } = await sql<{ n: string }>`select count(*) as n from (${query}) q`.execute(db);
  return Number(rows[0]?.n ?? 0);
}

/**
 * Makes the summaries agree with the plots this transaction sees, in the caller's transaction (with
 * repeatable read every statement reads the same snapshot). `whole`: every plot read again; otherwise
 * only the plots noted in `summary_changes`, and undefined (nothing written, nothing to do) when none is.
 */
async function makeSummaries(
  db: Db,
  wholeAsked: boolean,
): Promise<{ whole: boolean; plotsTouched: number; rowsWritten: number } | undefined> {
  // The plots noted that this snapshot sees; notes committed after it stay for the next making.
  const touched = await count(db, sql`select 1 from summary_changes`);
  if (!wholeAsked && touched === 0) return undefined;
  // Sums of float8 depend on the order rows are added: one plan (no parallel workers) keeps an
  // unchanged warehouse's figures bit for bit, so they compare equal and are not rewritten.
  await sql`set local max_parallel_workers_per_gather = 0`.execute(db);
  // Room for the hash tables of 1,000,000 plots' aggregates in memory.
  await sql`set local work_mem = '128MB'`.execute(db);
  await sql`
    create temp table summary_touched on commit drop as select distinct plot_id from summary_changes`.execute(db);
  await sql`analyze summary_touched`.execute(db);
  const plotsTouched = await count(db, sql`select 1 from summary_touched`);
  // Many touched (a first load into facts made before it, a full resync): one pass is cheaper.
  const whole =
    wholeAsked ||
    (plotsTouched > 1000 && plotsTouched > WHOLE_AT_SHARE * (await count(db, sql`select 1 from summary_plot_facts`)));
  if (touched > 0) await sql`delete from summary_changes`.execute(db);

  let withoutSupplier = true;
  let plotsRead = plotsTouched;
  if (whole) {
    // Not MVCC-safe, but only a writer of the summaries (under their lock) reads or writes the facts;
    // a trigger that checks them waits for this transaction, then notes.
    await sql`truncate summary_plot_facts`.execute(db);
    const inserted = await sql`insert into summary_plot_facts ${plotFacts(null)}`.execute(db);
    plotsRead = Number(inserted.numAffectedRows ?? 0);
  } else {
    await sql`
      create temp table summary_fresh_facts on commit drop as
      ${plotFacts(sql`p.id in (select plot_id from summary_touched)`)}`.execute(db);
    // The suppliers the touched plots belonged to when last counted, and belong to now; and any link of
    // theirs, live or not (a link to a plot not current makes a supplier's row without figures).
    await sql`
      create temp table summary_scope on commit drop as
      select distinct s.supplier_id
      from (select unnest(f.supplier_ids) from summary_plot_facts f where f.plot_id in (select plot_id from summary_touched)
            union all
            select unnest(f.supplier_ids) from summary_fresh_facts f
            union all
            select ps.supplier_id from plot_suppliers ps where ps.plot_id in (select plot_id from summary_touched)
           ) as s(supplier_id)`.execute(db);
    await sql`analyze summary_scope`.execute(db);
    const { rows } = await sql<{ without: boolean }>`
      select exists (select 1 from summary_plot_facts f
                     where f.supplier_ids = '{}' and f.plot_id in (select plot_id from summary_touched))
          or exists (select 1 from summary_fresh_facts f where f.supplier_ids = '{}') as without`.execute(db);
    withoutSupplier = rows[0]?.without ?? true;
    // The facts of the touched plots: rows that differ replaced, plots no longer current gone.
    await sql`
      delete from summary_plot_facts t
      where t.plot_id in (select plot_id from summary_touched)
        and not exists (select 1 from summary_fresh_facts f where f.plot_id = t.plot_id and (f.*)::text = (t.*)::text)`.execute(
      db,
    );
    await sql`
      insert into summary_plot_facts
      select * from summary_fresh_facts f
      where not exists (select 1 from summary_plot_facts t where t.plot_id = f.plot_id)`.execute(db);
  }
  await links(whole).execute(db);
  const ofScope = (column: string) =>
    whole ? sql`true` : sql`${sql.ref(`t.${column}`)} in (select supplier_id from summary_scope)`;
  let written = 0;
  written += await replaceRows(db, 'summary_suppliers', supplierFigures(whole), ofScope('supplier_id'));
  written += await replaceRows(db, 'summary_supplier_countries', SUPPLIER_COUNTRIES, ofScope('supplier_id'));
  written += await replaceRows(
    db,
    'summary_risk_cells',
    riskCells(withoutSupplier),
    whole
      ? sql`true`
      : sql`(t.supplier_business_id in (select supplier_id from summary_scope)
             or (${sql.lit(withoutSupplier)} and t.supplier_business_id is null))`,
  );
  written += await replaceRows(db, 'summary_totals', TOTALS, sql`true`);
  await sql`drop table summary_touched, summary_links`.execute(db);
  if (!whole) await sql`drop table summary_fresh_facts, summary_scope`.execute(db);
  return { whole, plotsTouched: plotsRead, rowsWritten: written };
}
