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
 * noted plots again and moves the rows they count in by exact deltas (0037): what each counted before
 * (its old facts) taken away, what it counts now added; counts as integers, sums of float8 kept exact
 * as numeric beside them, distinct values and the top reasons from counts per value
 * (`summary_supplier_values`), a maximum counted again from its supplier's plots only when the plot
 * holding it went. So it costs the touched plots, not their suppliers' size. A refresh that touched
 * nothing reads one empty table and writes nothing.
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
  /**
   * Plot facts the summary rows were made from: every current plot's when whole; otherwise the touched
   * plots' facts before and now, whose differences move the rows (0037), whatever their suppliers hold.
   */
  plotsCounted?: number;
  /** Suppliers whose maximum (risk of deforestation, last analysed) was counted again from their plots: its plot was taken away. */
  maximaRecounted?: number;
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
    : // Every plot's live links sorted, as plot_supplier_ids keeps them (0035); the few links whose
      // deletion is deferred grouped apart: sorting and grouping every link cost 0.3 s at 100,000 plots.
      sql`left join (
        select s.plot_id, s.supplier_ids, m.missing_ids from plot_supplier_ids s
        left join (
          select ps.plot_id, array_agg(ps.supplier_id order by ps.supplier_id) as missing_ids
          from plot_suppliers ps where ps.deleted_at is null and ps.missing_since is not null group by ps.plot_id
        ) m on m.plot_id = s.plot_id) l on l.plot_id = p.id`;
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
 * Every live link to a current plot, with what the supplier rows count of the plot (what bi_suppliers'
 * and bi_eudr_supplier_readiness's rows count): a making from every plot reads it several times, so
 * kept.
 */
const LINKS = sql`create temp table summary_links on commit drop as ${signedLinks(true)}`;

/** Every business with a live link (to a current plot or not). */
const SUPPLIERS = sql`select distinct ps.supplier_id from plot_suppliers ps where ps.deleted_at is null`;

/**
 * The rows of summary_suppliers from every plot, their countries, commodities and reasons from
 * summary_supplier_values (made just before from the same links): grouping the links by each again
 * cost a first load's making 0.4 s at 100,000 plots.
 */
function supplierFigures() {
  return sql`
  with figures as (
    select l.supplier_id,
           count(*) as plots,
           count(*) filter (where l.missing) as plots_deletion_deferred,
           count(*) filter (where l.supplier_count > 1) as plots_shared,
           trim_scale(sum(summary_exact(1.0::float8 / l.supplier_count))) as plots_allocated_exact,
           trim_scale(coalesce(sum(summary_exact(l.area_ha)), 0)) as hectares_exact,
           trim_scale(coalesce(sum(summary_exact(l.area_ha / l.supplier_count)), 0)) as hectares_allocated_exact,
           count(*) filter (where l.flagged) as flagged_plots,
           trim_scale(coalesce(sum(summary_exact(l.area_ha)) filter (where l.flagged), 0)) as flagged_hectares_exact,
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
           trim_scale(coalesce(sum(summary_exact(l.most_recent_deforested_area_m2)), 0)) as deforested_area_m2_exact,
           max(l.most_recent_analysed_at) as last_analysed_at,
           count(*) filter (where not l.geometry_valid) as invalid_geometries,
           count(*) filter (where l.ready) as plots_ready,
           trim_scale(coalesce(sum(summary_exact(l.readiness_area_ha)), 0)) as readiness_hectares_exact,
           trim_scale(coalesce(sum(summary_exact(l.readiness_area_ha)) filter (where l.ready), 0)) as hectares_ready_exact
    from summary_links l
    group by l.supplier_id
  )
  select s.supplier_id, f.plots, f.plots_deletion_deferred, f.plots_shared, f.plots_allocated_exact::float8 as plots_allocated,
         f.hectares_exact::float8 as hectares, f.hectares_allocated_exact::float8 as hectares_allocated,
         ${supplierValues('country')} as plot_country_codes, ${supplierValues('commodity')} as commodities,
         f.flagged_plots, f.flagged_hectares_exact::float8 as flagged_hectares,
         f.plots_risk_high, f.plots_risk_medium, f.plots_risk_low, f.plots_risk_none, f.plots_risk_not_assessed,
         f.plots_risk_other, f.plots_status_new, f.plots_status_under_review, f.plots_status_in_risk_mitigation,
         f.plots_status_eudr_compliant, f.plots_status_eudr_non_compliant, f.plots_status_other,
         f.plots_analysis_succeeded, f.plots_analysis_in_progress, f.plots_analysis_failed, f.plots_not_analysed,
         f.plots_analysis_other, f.plots_with_precision, f.max_risk_of_deforestation, f.deforested_area_m2_exact::float8 as deforested_area_m2,
         f.last_analysed_at, f.invalid_geometries, f.plots_ready, f.readiness_hectares_exact::float8 as readiness_hectares,
         f.hectares_ready_exact::float8 as hectares_ready, ${TOP_REASONS} as top_reasons, f.plots_allocated_exact, f.hectares_exact,
         f.hectares_allocated_exact, f.flagged_hectares_exact, f.deforested_area_m2_exact, f.readiness_hectares_exact,
         f.hectares_ready_exact
  from (${SUPPLIERS}) s
  left join figures f on f.supplier_id = s.supplier_id`;
}

/**
 * A supplier's (`s.supplier_id`) distinct country codes or commodities, sorted, from
 * summary_supplier_values (made or moved before summary_suppliers, whole or by deltas alike).
 */
function supplierValues(kind: 'country' | 'commodity') {
  return sql`(select array_agg(v.value order by v.value) from summary_supplier_values v
    where v.supplier_id = s.supplier_id and v.kind = ${sql.lit(kind)})`;
}

/** A supplier's five most frequent reasons, from summary_supplier_values (as supplierValues). */
const TOP_REASONS = sql`(select jsonb_agg(jsonb_build_object('code', x.value, 'plots', x.plots) order by x.plots desc, x.value)
  from (select v.value, v.plots from summary_supplier_values v
        where v.supplier_id = s.supplier_id and v.kind = 'reason'
        order by v.plots desc, v.value limit 5) x)`;

/** The touched plots' old facts (taken away, -1) and new ones (added, +1); or every fact (+1). */
function signedFacts(whole: boolean) {
  return whole
    ? sql`select 1 as sign, f.* from summary_plot_facts f`
    : sql`select -1 as sign, f.* from summary_old_facts f
          union all
          select 1, f.* from summary_fresh_facts f`;
}

/** Live links of signed facts (one row per plot and supplier), with what summary_suppliers counts of them. */
function signedLinks(whole: boolean) {
  return sql`
  select f.sign, s.supplier_id, s.supplier_id = any(f.missing_supplier_ids) as missing,
         cardinality(f.supplier_ids) as supplier_count, f.country_code, f.commodities, f.area_ha,
         f.readiness_area_ha, f.geometry_valid, f.risk_level, f.risk_assessment_status, f.flagged,
         f.most_recent_analysis_id is not null as analysed, f.most_recent_analysis_status,
         f.most_recent_risk_of_deforestation, f.most_recent_deforested_area_m2, f.most_recent_analysed_at,
         f.has_precision, f.ready,
         case when f.checked then f.blocking_codes else f.blocking_codes || 'not_checked'::text end as reasons
  from (${signedFacts(whole)}) f cross join unnest(f.supplier_ids) as s(supplier_id)`;
}

/**
 * summary_supplier_values' rows (0037): per supplier, its links per country code, its commodities per
 * place in their lists, its reasons per occurrence (what plot_country_codes, commodities and
 * top_reasons are made of), summed with their signs; a delta keeps only the values that move. From
 * every plot: read from summary_links (LINKS).
 */
function supplierValueSums(whole: boolean) {
  return sql`
  with l as materialized (${whole ? sql`select * from summary_links` : signedLinks(false)})
  select l.supplier_id, 'country'::text as kind, l.country_code as value, sum(l.sign)::bigint as plots
  from l where l.country_code is not null group by l.supplier_id, l.country_code
  ${whole ? sql`` : sql`having sum(l.sign) <> 0`}
  union all
  select l.supplier_id, 'commodity', c.commodity, sum(l.sign)::bigint
  from l cross join lateral unnest(l.commodities) as c(commodity) group by l.supplier_id, c.commodity
  ${whole ? sql`` : sql`having sum(l.sign) <> 0`}
  union all
  select l.supplier_id, 'reason', r.code, sum(l.sign)::bigint
  from l cross join lateral unnest(l.reasons) as r(code) group by l.supplier_id, r.code
  ${whole ? sql`` : sql`having sum(l.sign) <> 0`}`;
}

/** summary_suppliers' counts: each a count of its links where the condition holds (as supplierFigures counts them). */
const SUPPLIER_COUNTS: [string, string][] = [
  ['plots_deletion_deferred', 'l.missing'],
  ['plots_shared', 'l.supplier_count > 1'],
  ['flagged_plots', 'l.flagged'],
  ['plots_risk_high', `l.risk_level = 'high'`],
  ['plots_risk_medium', `l.risk_level = 'medium'`],
  ['plots_risk_low', `l.risk_level = 'low'`],
  ['plots_risk_none', `l.risk_level = 'none'`],
  ['plots_risk_not_assessed', 'l.risk_level is null'],
  ['plots_risk_other', `l.risk_level not in ('high', 'medium', 'low', 'none')`],
  ['plots_status_new', `l.risk_assessment_status = 'new'`],
  ['plots_status_under_review', `l.risk_assessment_status = 'under_review'`],
  ['plots_status_in_risk_mitigation', `l.risk_assessment_status = 'in_risk_mitigation'`],
  ['plots_status_eudr_compliant', `l.risk_assessment_status = 'eudr_compliant'`],
  ['plots_status_eudr_non_compliant', `l.risk_assessment_status = 'eudr_non_compliant'`],
  [
    'plots_status_other',
    `l.risk_assessment_status is null or l.risk_assessment_status not in ('new', 'under_review', 'in_risk_mitigation', 'eudr_compliant', 'eudr_non_compliant')`,
  ],
  ['plots_analysis_succeeded', `l.most_recent_analysis_status = 'succeeded'`],
  ['plots_analysis_in_progress', `l.most_recent_analysis_status in ('pending', 'not_started', 'started')`],
  ['plots_analysis_failed', `l.most_recent_analysis_status = 'failed'`],
  ['plots_not_analysed', 'not l.analysed'],
  [
    'plots_analysis_other',
    `l.analysed and (l.most_recent_analysis_status is null or l.most_recent_analysis_status not in ('succeeded', 'pending', 'not_started', 'started', 'failed'))`,
  ],
  ['plots_with_precision', 'l.has_precision'],
  ['invalid_geometries', 'not l.geometry_valid'],
  ['plots_ready', 'l.ready'],
];

/** summary_suppliers' sums of float8: each kept exact as `<name>_exact` (0037), its term as numeric and its filter. */
const SUPPLIER_SUMS: [string, string, string][] = [
  ['plots_allocated', 'summary_exact(1.0::float8 / l.supplier_count)', 'true'],
  ['hectares', 'summary_exact(l.area_ha)', 'true'],
  ['hectares_allocated', 'summary_exact(l.area_ha / l.supplier_count)', 'true'],
  ['flagged_hectares', 'summary_exact(l.area_ha)', 'l.flagged'],
  ['deforested_area_m2', 'summary_exact(l.most_recent_deforested_area_m2)', 'true'],
  ['readiness_hectares', 'summary_exact(l.readiness_area_ha)', 'true'],
  ['hectares_ready', 'summary_exact(l.readiness_area_ha)', 'l.ready'],
];

/** summary_suppliers' columns, in order. */
const SUPPLIER_COLUMNS = [
  'supplier_id',
  'plots',
  'plots_deletion_deferred',
  'plots_shared',
  'plots_allocated',
  'hectares',
  'hectares_allocated',
  'plot_country_codes',
  'commodities',
  'flagged_plots',
  'flagged_hectares',
  'plots_risk_high',
  'plots_risk_medium',
  'plots_risk_low',
  'plots_risk_none',
  'plots_risk_not_assessed',
  'plots_risk_other',
  'plots_status_new',
  'plots_status_under_review',
  'plots_status_in_risk_mitigation',
  'plots_status_eudr_compliant',
  'plots_status_eudr_non_compliant',
  'plots_status_other',
  'plots_analysis_succeeded',
  'plots_analysis_in_progress',
  'plots_analysis_failed',
  'plots_not_analysed',
  'plots_analysis_other',
  'plots_with_precision',
  'max_risk_of_deforestation',
  'deforested_area_m2',
  'last_analysed_at',
  'invalid_geometries',
  'plots_ready',
  'readiness_hectares',
  'hectares_ready',
  'top_reasons',
  ...SUPPLIER_SUMS.map(([name]) => `${name}_exact`),
];

/** The plot holding a supplier's maximum was taken away, and no plot added reaches it: counted again. */
function maximumGone(column: string) {
  const old = sql.ref(`o.${column}`);
  return sql`(${sql.ref(`d.removed_${column}`)} >= ${old} and coalesce(${sql.ref(`d.added_${column}`)} < ${old}, true))`;
}

/** The suppliers in scope (with plots left) whose maximum movedSuppliers counts again from their plots. */
function maximaToRecount() {
  return sql`
  with d as (
    select l.supplier_id, sum(l.sign) as plots,
           max(l.most_recent_risk_of_deforestation) filter (where l.sign > 0) as added_max_risk_of_deforestation,
           max(l.most_recent_risk_of_deforestation) filter (where l.sign < 0) as removed_max_risk_of_deforestation,
           max(l.most_recent_analysed_at) filter (where l.sign > 0) as added_last_analysed_at,
           max(l.most_recent_analysed_at) filter (where l.sign < 0) as removed_last_analysed_at
    from (${signedLinks(false)}) l group by l.supplier_id)
  select 1 from summary_scope s
  join summary_suppliers o on o.supplier_id = s.supplier_id
  join d on d.supplier_id = s.supplier_id
  where coalesce(o.plots, 0) + d.plots > 0
    and (${maximumGone('max_risk_of_deforestation')} or ${maximumGone('last_analysed_at')})`;
}

/** A maximum over a supplier's links: moved, or counted again from its facts when the plot holding it went. */
function movedMaximum(column: string, factColumn: string) {
  const old = sql.ref(`o.${column}`);
  const added = sql.ref(`d.added_${column}`);
  return sql`case when ${maximumGone(column)}
    then (select max(${sql.ref(`f.${factColumn}`)}) from summary_plot_facts f
          where f.plot_id in (select ps.plot_id from plot_suppliers ps
                              where ps.supplier_id = s.supplier_id and ps.deleted_at is null)
            and s.supplier_id = any(f.supplier_ids))
    else greatest(${old}, ${added}) end`;
}

/**
 * The rows of summary_suppliers of the suppliers in `summary_scope` that have a live link, from their
 * rows before, the touched plots' deltas (counts, exact sums, the maxima added and taken away) and
 * summary_supplier_values (already moved): no plot of theirs is read but the touched ones, unless the
 * plot holding a maximum was taken away. A supplier left with no current plot has no figures (nulls).
 */
function movedSuppliers() {
  const deltas = sql.join(
    [
      sql`sum(l.sign)::bigint as plots`,
      ...SUPPLIER_COUNTS.map(
        ([name, cond]) => sql`coalesce(sum(l.sign) filter (where ${sql.raw(cond)}), 0)::bigint as ${sql.ref(name)}`,
      ),
      ...SUPPLIER_SUMS.map(
        ([name, term, cond]) =>
          sql`coalesce(sum(l.sign * ${sql.raw(term)}) filter (where ${sql.raw(cond)}), 0) as ${sql.ref(`${name}_exact`)}`,
      ),
      sql`max(l.most_recent_risk_of_deforestation) filter (where l.sign > 0) as added_max_risk_of_deforestation`,
      sql`max(l.most_recent_risk_of_deforestation) filter (where l.sign < 0) as removed_max_risk_of_deforestation`,
      sql`max(l.most_recent_analysed_at) filter (where l.sign > 0) as added_last_analysed_at`,
      sql`max(l.most_recent_analysed_at) filter (where l.sign < 0) as removed_last_analysed_at`,
    ],
    sql`, `,
  );
  const counts = new Set(['plots', ...SUPPLIER_COUNTS.map(([name]) => name)]);
  const sums = new Set(SUPPLIER_SUMS.map(([name]) => name));
  const column = (name: string) => {
    if (name === 'supplier_id') return sql`s.supplier_id`;
    if (counts.has(name)) return sql`coalesce(${sql.ref(`o.${name}`)}, 0) + coalesce(${sql.ref(`d.${name}`)}, 0)`;
    if (sums.has(name))
      return sql`(coalesce(${sql.ref(`o.${name}_exact`)}, 0) + coalesce(${sql.ref(`d.${name}_exact`)}, 0))::float8`;
    if (name.endsWith('_exact'))
      return sql`trim_scale(coalesce(${sql.ref(`o.${name}`)}, 0) + coalesce(${sql.ref(`d.${name}`)}, 0))`;
    if (name === 'plot_country_codes') return supplierValues('country');
    if (name === 'commodities') return supplierValues('commodity');
    if (name === 'max_risk_of_deforestation')
      return movedMaximum('max_risk_of_deforestation', 'most_recent_risk_of_deforestation');
    if (name === 'last_analysed_at') return movedMaximum('last_analysed_at', 'most_recent_analysed_at');
    if (name === 'top_reasons') return TOP_REASONS;
    throw new Error(`summary_suppliers.${name}: not made from deltas`);
  };
  return sql`
  with d as (select l.supplier_id, ${deltas} from (${signedLinks(false)}) l group by l.supplier_id)
  select ${sql.join(
    SUPPLIER_COLUMNS.map((name) =>
      name === 'supplier_id' ? column(name) : sql`case when n.plots > 0 then ${column(name)} end as ${sql.ref(name)}`,
    ),
    sql`, `,
  )}
  from summary_scope s
  left join summary_suppliers o on o.supplier_id = s.supplier_id
  left join d on d.supplier_id = s.supplier_id
  cross join lateral (select coalesce(o.plots, 0) + coalesce(d.plots, 0) as plots) n
  -- Every business with a live link (to a current plot or not) has a row.
  where exists (select 1 from plot_suppliers ps where ps.supplier_id = s.supplier_id and ps.deleted_at is null)`;
}

/**
 * Plots as the additive summaries count them, each with a sign: every fact with +1 (a making from every
 * plot), or the touched plots' old facts with -1 and their new ones with +1 (a delta). One row per plot
 * and live supplier, or one without a supplier (`supplier_id` null) for a plot reached through none.
 */
function signedPlots(whole: boolean) {
  const facts = signedFacts(whole);
  return sql`
  select f.sign, s.supplier_id, cardinality(f.supplier_ids) as supplier_count, f.is_own, f.country_code,
         f.country_key, f.commodities, f.area_ha, f.flagged
  from (${facts}) f
  cross join lateral unnest(case when f.supplier_ids = '{}' then array[null::text] else f.supplier_ids end) as s(supplier_id)`;
}

/**
 * The plots per supplier and country (summary_supplier_countries' rows), summed with their signs; a
 * delta keeps only the keys that move.
 */
function supplierCountrySums(whole: boolean) {
  return sql`
  select l.supplier_id, l.country_key, sum(l.sign)::bigint as plots
  from (${signedPlots(whole)}) l
  where l.supplier_id is not null
  group by l.supplier_id, l.country_key
  ${whole ? sql`` : sql`having sum(l.sign) <> 0`}`;
}

/**
 * bi_risk_overview's cells, summed with their signs, as its definition before 0028 made them from
 * bi_current_plots: a plot has a cell per live supplier (or one without) and commodity (or one
 * without; none when commodities is null, as unnest gives nothing), each weighing 1 / its cells. Each
 * plot gives a cell one row, at the first place its commodity has in its list (`array_position`, which
 * finds a null too), and a commodity listed twice makes the same cell twice (`copies`: its hectares
 * and weight count twice, as they did, the plot once). Every sum of float8 is kept exact (numeric, each
 * term the float8 product as summary_exact reads it: the same for a plot however it is summed); all_own as the plots that
 * are not own (0037). A delta keeps only the keys that move.
 */
function riskCellSums(whole: boolean) {
  return sql`
  with cells as (
    select p.sign, p.supplier_id as supplier_business_id, c.commodity, p.country_code, p.is_own, p.flagged,
           (p.supplier_id is null and p.is_own) as own_group,
           coalesce(summary_exact(p.area_ha * x.copies), 0) as hectares,
           summary_exact(x.weight * x.copies) as plots_allocated,
           coalesce(summary_exact(x.weight * x.copies * p.area_ha), 0) as hectares_allocated
    from (${signedPlots(whole)}) p
    cross join lateral unnest(case when cardinality(p.commodities) = 0 then array[null::text] else p.commodities end)
      with ordinality as c(commodity, place)
    cross join lateral (
      select case when cardinality(p.commodities) = 0 then 1
                  else cardinality(array_positions(p.commodities, c.commodity)) end as copies,
             1.0::float8 / (greatest(p.supplier_count, 1) * greatest(cardinality(p.commodities), 1)) as weight) x
    where cardinality(p.commodities) = 0 or c.place = array_position(p.commodities, c.commodity)
  )
  select w.supplier_business_id, w.commodity, w.country_code, w.own_group,
         sum(w.sign)::bigint as plots,
         coalesce(sum(w.sign) filter (where w.flagged), 0)::bigint as flagged_plots,
         coalesce(sum(w.sign) filter (where not w.is_own), 0)::bigint as not_own_plots,
         trim_scale(sum(w.sign * w.hectares)) as hectares_exact,
         trim_scale(sum(w.sign * w.plots_allocated)) as plots_allocated_exact,
         trim_scale(sum(w.sign * w.hectares_allocated)) as hectares_allocated_exact
  from cells w
  group by w.supplier_business_id, w.commodity, w.country_code, w.own_group
  ${
    whole
      ? sql``
      : sql`having sum(w.sign) <> 0 or coalesce(sum(w.sign) filter (where w.flagged), 0) <> 0
               or coalesce(sum(w.sign) filter (where not w.is_own), 0) <> 0 or sum(w.sign * w.hectares) <> 0
               or sum(w.sign * w.plots_allocated) <> 0 or sum(w.sign * w.hectares_allocated) <> 0`
  }`;
}

/** summary_risk_cells' rows from every plot, in its columns' order. */
const RISK_CELLS = sql`
  select c.supplier_business_id, c.commodity, c.country_code, c.own_group, c.not_own_plots = 0 as all_own, c.plots,
         c.hectares_exact::float8 as hectares, c.flagged_plots, c.plots_allocated_exact::float8 as plots_allocated,
         c.hectares_allocated_exact::float8 as hectares_allocated, c.not_own_plots, c.hectares_exact,
         c.plots_allocated_exact, c.hectares_allocated_exact
  from (${riskCellSums(true)}) c`;

/** The totals' figures, summed with their signs (every fact, or a delta); hectares exact (0037). */
function totalSums(whole: boolean) {
  const facts = signedFacts(whole);
  return sql`
  select coalesce(sum(p.sign), 0)::bigint as plots,
         trim_scale(coalesce(sum(p.sign * summary_exact(p.area_ha)), 0)) as hectares_exact,
         coalesce(sum(p.sign) filter (where p.area_ha is null), 0)::bigint as plots_without_area,
         coalesce(sum(p.sign) filter (where p.is_own), 0)::bigint as own_plots,
         coalesce(sum(p.sign) filter (where cardinality(p.supplier_ids) > 0), 0)::bigint as supplier_plots,
         coalesce(sum(p.sign) filter (where cardinality(p.supplier_ids) > 1), 0)::bigint as shared_plots,
         coalesce(sum(p.sign) filter (where p.flagged), 0)::bigint as flagged_plots,
         trim_scale(coalesce(sum(p.sign * summary_exact(p.area_ha)) filter (where p.flagged), 0)) as flagged_hectares_exact,
         coalesce(sum(p.sign) filter (where not p.geometry_valid), 0)::bigint as invalid_geometries
  from (${facts}) p`;
}

/** From the facts of every current plot: one pass over a narrow table. In summary_totals' columns' order. */
const TOTALS = sql`
  select t.plots, t.hectares_exact::float8 as hectares, t.plots_without_area, t.own_plots, t.supplier_plots,
         t.shared_plots, t.flagged_plots, t.flagged_hectares_exact::float8 as flagged_hectares, t.invalid_geometries,
         t.hectares_exact, t.flagged_hectares_exact
  from (${totalSums(true)}) t`;

/**
 * Moves the additive summaries by the touched plots' deltas (their old facts taken away, their new ones
 * added): summary_supplier_countries, summary_risk_cells and summary_totals. Exact: counts are integers
 * and sums numeric, so the rows equal what a making from every plot gives (0037). Writes only the rows
 * that move; a row whose plots fall to 0 is deleted. Returns the rows written.
 */
async function applyDeltas(db: Db): Promise<number> {
  let written = 0;
  const n = (r: { numAffectedRows?: bigint }) => Number(r.numAffectedRows ?? 0);

  await sql`create temp table summary_delta on commit drop as ${supplierValueSums(false)}`.execute(db);
  const sameValue = sql`t.supplier_id = d.supplier_id and t.kind = d.kind and t.value is not distinct from d.value`;
  written += n(
    await sql`delete from summary_supplier_values t using summary_delta d where ${sameValue} and t.plots + d.plots = 0`.execute(
      db,
    ),
  );
  written += n(
    await sql`update summary_supplier_values t set plots = t.plots + d.plots from summary_delta d where ${sameValue}`.execute(
      db,
    ),
  );
  written += n(
    await sql`
    insert into summary_supplier_values (supplier_id, kind, value, plots)
    select d.supplier_id, d.kind, d.value, d.plots from summary_delta d
    -- A key whose row the delete above took (its plots fell to 0) has a negative delta: not a new row.
    where d.plots > 0 and not exists (select 1 from summary_supplier_values t where ${sameValue})`.execute(db),
  );
  await sql`drop table summary_delta`.execute(db);

  await sql`create temp table summary_delta on commit drop as ${supplierCountrySums(false)}`.execute(db);
  written += n(
    await sql`
    delete from summary_supplier_countries t using summary_delta d
    where t.supplier_id = d.supplier_id and t.country_key = d.country_key and t.plots + d.plots = 0`.execute(db),
  );
  written += n(
    await sql`
    update summary_supplier_countries t set plots = t.plots + d.plots from summary_delta d
    where t.supplier_id = d.supplier_id and t.country_key = d.country_key`.execute(db),
  );
  written += n(
    await sql`
    insert into summary_supplier_countries (supplier_id, country_key, plots)
    select d.supplier_id, d.country_key, d.plots from summary_delta d
    where d.plots > 0
      and not exists (select 1 from summary_supplier_countries t
                      where t.supplier_id = d.supplier_id and t.country_key = d.country_key)`.execute(db),
  );
  await sql`drop table summary_delta`.execute(db);

  await sql`create temp table summary_delta on commit drop as ${riskCellSums(false)}`.execute(db);
  const sameCell = sql`t.supplier_business_id is not distinct from d.supplier_business_id
    and t.commodity is not distinct from d.commodity and t.country_code is not distinct from d.country_code
    and t.own_group = d.own_group`;
  written += n(
    await sql`delete from summary_risk_cells t using summary_delta d where ${sameCell} and t.plots + d.plots = 0`.execute(
      db,
    ),
  );
  written += n(
    await sql`
    update summary_risk_cells t
    set plots = t.plots + d.plots,
        flagged_plots = t.flagged_plots + d.flagged_plots,
        not_own_plots = t.not_own_plots + d.not_own_plots,
        all_own = t.not_own_plots + d.not_own_plots = 0,
        hectares_exact = trim_scale(t.hectares_exact + d.hectares_exact),
        hectares = (t.hectares_exact + d.hectares_exact)::float8,
        plots_allocated_exact = trim_scale(t.plots_allocated_exact + d.plots_allocated_exact),
        plots_allocated = (t.plots_allocated_exact + d.plots_allocated_exact)::float8,
        hectares_allocated_exact = trim_scale(t.hectares_allocated_exact + d.hectares_allocated_exact),
        hectares_allocated = (t.hectares_allocated_exact + d.hectares_allocated_exact)::float8
    from summary_delta d where ${sameCell}`.execute(db),
  );
  written += n(
    await sql`
    insert into summary_risk_cells
    select d.supplier_business_id, d.commodity, d.country_code, d.own_group, d.not_own_plots = 0, d.plots,
           d.hectares_exact::float8, d.flagged_plots, d.plots_allocated_exact::float8,
           d.hectares_allocated_exact::float8, d.not_own_plots, d.hectares_exact, d.plots_allocated_exact,
           d.hectares_allocated_exact
    from summary_delta d where d.plots > 0 and not exists (select 1 from summary_risk_cells t where ${sameCell})`.execute(
      db,
    ),
  );
  await sql`drop table summary_delta`.execute(db);

  written += n(
    await sql`
    update summary_totals t
    set plots = t.plots + d.plots,
        hectares_exact = trim_scale(t.hectares_exact + d.hectares_exact),
        hectares = (t.hectares_exact + d.hectares_exact)::float8,
        plots_without_area = t.plots_without_area + d.plots_without_area,
        own_plots = t.own_plots + d.own_plots,
        supplier_plots = t.supplier_plots + d.supplier_plots,
        shared_plots = t.shared_plots + d.shared_plots,
        flagged_plots = t.flagged_plots + d.flagged_plots,
        flagged_hectares_exact = trim_scale(t.flagged_hectares_exact + d.flagged_hectares_exact),
        flagged_hectares = (t.flagged_hectares_exact + d.flagged_hectares_exact)::float8,
        invalid_geometries = t.invalid_geometries + d.invalid_geometries
    from (${totalSums(false)}) d
    where d.plots <> 0 or d.hectares_exact <> 0 or d.plots_without_area <> 0 or d.own_plots <> 0
       or d.supplier_plots <> 0 or d.shared_plots <> 0 or d.flagged_plots <> 0 or d.flagged_hectares_exact <> 0
       or d.invalid_geometries <> 0`.execute(db),
  );
  return written;
}

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
): Promise<
  | { whole: boolean; plotsTouched: number; plotsCounted: number; maximaRecounted: number; rowsWritten: number }
  | undefined
> {
  // The plots noted that this snapshot sees; notes committed after it stay for the next making.
  const touched = await count(db, sql`select 1 from summary_changes`);
  if (!wholeAsked && touched === 0) return undefined;
  // Sums of float8 depend on the order rows are added: one plan (no parallel workers) keeps an
  // unchanged warehouse's figures bit for bit, so they compare equal and are not rewritten.
  await sql`set local max_parallel_workers_per_gather = 0`.execute(db);
  // summary_exact (0039) reads a float8's text: its shortest exact form, whatever the session chose.
  await sql`set local extra_float_digits = 1`.execute(db);
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
    // What the touched plots counted before: taken away from the additive summaries (applyDeltas).
    await sql`
      create temp table summary_old_facts on commit drop as
      select * from summary_plot_facts where plot_id in (select plot_id from summary_touched)`.execute(db);
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
  let written = 0;
  let plotsCounted = plotsRead;
  let maximaRecounted = 0;
  if (whole) {
    await LINKS.execute(db);
    // The values before the suppliers' rows, which read their countries, commodities and reasons there.
    written += await replaceRows(db, 'summary_supplier_values', supplierValueSums(true), sql`true`);
    written += await replaceRows(db, 'summary_suppliers', supplierFigures(), sql`true`);
    written += await replaceRows(db, 'summary_supplier_countries', supplierCountrySums(true), sql`true`);
    written += await replaceRows(db, 'summary_risk_cells', RISK_CELLS, sql`true`);
    written += await replaceRows(db, 'summary_totals', TOTALS, sql`true`);
    await sql`drop table summary_links`.execute(db);
  } else {
    plotsCounted =
      (await count(db, sql`select 1 from summary_old_facts`)) +
      (await count(db, sql`select 1 from summary_fresh_facts`));
    // The values before the suppliers' rows, which are made of them.
    written += await applyDeltas(db);
    maximaRecounted = await count(db, maximaToRecount());
    written += await replaceRows(
      db,
      'summary_suppliers',
      movedSuppliers(),
      sql`t.supplier_id in (select supplier_id from summary_scope)`,
    );
  }
  await sql`drop table summary_touched`.execute(db);
  if (!whole) await sql`drop table summary_fresh_facts, summary_old_facts, summary_scope`.execute(db);
  return { whole, plotsTouched: plotsRead, plotsCounted, maximaRecounted, rowsWritten: written };
}
