import { expect } from 'vitest';
import { sql } from 'kysely';
import type { Warehouse } from '../../warehouse/database.ts';

// The summary views as they were defined before the summary tables (sql/views at the commit before
// migration 0028): each aggregates the per-plot views (bi_current_plots, bi_eudr_plot_readiness) at
// every read. The analyst-summaries test runs them as the oracle the summary views must agree with.

export const SUMMARY_VIEW_ORACLES = {
  bi_suppliers: `
with supplier as (
  -- One row per supplier even if the service lists two connections to it: the oldest.
  select distinct on (c.partner_business_id)
         c.partner_business_id as supplier_business_id, c.id as connection_id, c.created_at as connected_at,
         c.plots_count, c.plots_commodities
  from business_connections c
  where c.role = 'supplier' and c.deleted_at is null
  order by c.partner_business_id, c.created_at nulls last, c.id
),
linked as not materialized (
  select ps.supplier_id, ps.missing_since, p.*
  from plot_suppliers ps
  join bi_current_plots p on p.plot_id = ps.plot_id
  where ps.deleted_at is null
),
figures as (
  select l.supplier_id,
         count(*) as plots,
         count(*) filter (where l.missing_since is not null) as plots_deletion_deferred,
         count(*) filter (where l.supplier_count > 1) as plots_shared,
         sum(1.0::float8 / l.supplier_count) as plots_allocated,
         coalesce(sum(l.area_ha), 0) as hectares,
         coalesce(sum(l.area_ha / l.supplier_count), 0) as hectares_allocated,
         array_agg(distinct l.country_code order by l.country_code) filter (where l.country_code is not null) as plot_country_codes,
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
         count(*) filter (where l.country_risk_level = 'low') as plots_country_risk_low,
         count(*) filter (where l.country_risk_level = 'standard') as plots_country_risk_standard,
         count(*) filter (where l.country_risk_level = 'high') as plots_country_risk_high,
         count(*) filter (where l.country_risk_level is null or l.country_risk_level not in ('low', 'standard', 'high')) as plots_country_risk_unknown
  from linked l
  group by l.supplier_id
),
commodities as (
  select l.supplier_id, array_agg(distinct c.commodity order by c.commodity) as commodities
  from linked l cross join lateral unnest(l.commodities) as c(commodity)
  group by l.supplier_id
)
select
  s.supplier_business_id,
  coalesce(b.name, s.supplier_business_id) as supplier_name,
  b.address_country_code as country_code,
  b.address_country as country,
  s.connection_id,
  s.connected_at,
  s.plots_count as plots_announced,
  s.plots_commodities as commodities_announced,
  coalesce(f.plots, 0) as plots,
  s.plots_count - coalesce(f.plots, 0) as plots_difference,
  coalesce(f.plots_deletion_deferred, 0) as plots_deletion_deferred,
  coalesce(f.plots_shared, 0) as plots_shared,
  coalesce(f.plots_allocated, 0) as plots_allocated,
  coalesce(f.hectares, 0) as hectares,
  coalesce(f.hectares_allocated, 0) as hectares_allocated,
  coalesce(c.commodities, '{}') as commodities,
  coalesce(f.plot_country_codes, '{}') as plot_country_codes,
  coalesce(f.flagged_plots, 0) as flagged_plots,
  coalesce(f.flagged_hectares, 0) as flagged_hectares,
  coalesce(f.plots_risk_high, 0) as plots_risk_high,
  coalesce(f.plots_risk_medium, 0) as plots_risk_medium,
  coalesce(f.plots_risk_low, 0) as plots_risk_low,
  coalesce(f.plots_risk_none, 0) as plots_risk_none,
  coalesce(f.plots_risk_not_assessed, 0) as plots_risk_not_assessed,
  coalesce(f.plots_risk_other, 0) as plots_risk_other,
  coalesce(f.plots_status_new, 0) as plots_status_new,
  coalesce(f.plots_status_under_review, 0) as plots_status_under_review,
  coalesce(f.plots_status_in_risk_mitigation, 0) as plots_status_in_risk_mitigation,
  coalesce(f.plots_status_eudr_compliant, 0) as plots_status_eudr_compliant,
  coalesce(f.plots_status_eudr_non_compliant, 0) as plots_status_eudr_non_compliant,
  coalesce(f.plots_status_other, 0) as plots_status_other,
  coalesce(f.plots_analysis_succeeded, 0) as plots_analysis_succeeded,
  coalesce(f.plots_analysis_in_progress, 0) as plots_analysis_in_progress,
  coalesce(f.plots_analysis_failed, 0) as plots_analysis_failed,
  coalesce(f.plots_analysis_other, 0) as plots_analysis_other,
  coalesce(f.plots_not_analysed, 0) as plots_not_analysed,
  coalesce(f.plots_with_precision, 0) as plots_with_precision,
  f.max_risk_of_deforestation,
  coalesce(f.deforested_area_m2, 0) as deforested_area_m2,
  f.last_analysed_at,
  coalesce(f.invalid_geometries, 0) as invalid_geometries,
  ls.last_seen_at,
  case when coalesce(f.plots, 0) = 0 then null
       when f.plots_country_risk_high > 0 then 'high'
       when f.plots_country_risk_unknown > 0 then 'unknown'
       when f.plots_country_risk_standard > 0 then 'standard'
       else 'low' end as country_risk_level,
  coalesce(f.plots_country_risk_low, 0)::int as plots_country_risk_low,
  coalesce(f.plots_country_risk_standard, 0)::int as plots_country_risk_standard,
  coalesce(f.plots_country_risk_high, 0)::int as plots_country_risk_high,
  coalesce(f.plots_country_risk_unknown, 0)::int as plots_country_risk_unknown,
  case when coalesce(f.plots, 0) = 0 then null else f.plots_country_risk_low = f.plots end as simplified_due_diligence_eligible
from supplier s
left join businesses b on b.id = s.supplier_business_id
left join figures f on f.supplier_id = s.supplier_business_id
left join commodities c on c.supplier_id = s.supplier_business_id
left join sync_last_seen ls on ls.scope = s.supplier_business_id`,
  bi_eudr_supplier_readiness: `
with supplier as (
  select c.partner_business_id as supplier_business_id
  from business_connections c
  where c.role = 'supplier' and c.deleted_at is null
  union
  select ps.supplier_id from plot_suppliers ps where ps.deleted_at is null
),
linked as not materialized (
  select ps.supplier_id, r.*
  from plot_suppliers ps
  join bi_eudr_plot_readiness r on r.plot_id = ps.plot_id
  where ps.deleted_at is null
),
figures as (
  select l.supplier_id,
         count(*) as plots,
         count(*) filter (where l.ready) as plots_ready,
         coalesce(sum(l.area_ha), 0) as hectares,
         coalesce(sum(l.area_ha) filter (where l.ready), 0) as hectares_ready,
         count(*) filter (where l.country_risk_level = 'low') as plots_country_risk_low,
         count(*) filter (where l.country_risk_level = 'standard') as plots_country_risk_standard,
         count(*) filter (where l.country_risk_level = 'high') as plots_country_risk_high,
         count(*) filter (where l.country_risk_level is null or l.country_risk_level not in ('low', 'standard', 'high')) as plots_country_risk_unknown
  from linked l
  group by l.supplier_id
),
reasons as (
  select x.supplier_id,
         jsonb_agg(jsonb_build_object('code', x.code, 'plots', x.plots) order by x.plots desc, x.code) as top_reasons
  from (
    select l.supplier_id, c.code, count(*) as plots,
           row_number() over (partition by l.supplier_id order by count(*) desc, c.code) as rank
    from linked l cross join lateral unnest(l.blocking_codes) as c(code)
    group by l.supplier_id, c.code
  ) x
  where x.rank <= 5
  group by x.supplier_id
)
select
  s.supplier_business_id,
  coalesce(b.name, s.supplier_business_id) as supplier_name,
  coalesce(f.plots, 0)::int as plots,
  coalesce(f.plots_ready, 0)::int as plots_ready,
  (coalesce(f.plots, 0) - coalesce(f.plots_ready, 0))::int as plots_not_ready,
  coalesce(f.hectares, 0)::float8 as hectares,
  coalesce(f.hectares_ready, 0)::float8 as hectares_ready,
  case when coalesce(f.plots, 0) > 0 then f.plots_ready::float8 / f.plots end as share_ready,
  coalesce(r.top_reasons, '[]'::jsonb) as top_reasons,
  case when coalesce(f.plots, 0) = 0 then null
       when f.plots_country_risk_high > 0 then 'high'
       when f.plots_country_risk_unknown > 0 then 'unknown'
       when f.plots_country_risk_standard > 0 then 'standard'
       else 'low' end as country_risk_level,
  coalesce(f.plots_country_risk_low, 0)::int as plots_country_risk_low,
  coalesce(f.plots_country_risk_standard, 0)::int as plots_country_risk_standard,
  coalesce(f.plots_country_risk_high, 0)::int as plots_country_risk_high,
  coalesce(f.plots_country_risk_unknown, 0)::int as plots_country_risk_unknown,
  case when coalesce(f.plots, 0) = 0 then null else f.plots_country_risk_low = f.plots end as simplified_due_diligence_eligible
from supplier s
left join businesses b on b.id = s.supplier_business_id
left join figures f on f.supplier_id = s.supplier_business_id
left join reasons r on r.supplier_id = s.supplier_business_id`,
  bi_risk_overview: `
with cells as (
  select p.plot_id, p.area_ha, p.flagged, p.country_code, p.country_risk_level, p.is_own, l.supplier_business_id, c.commodity
  from bi_current_plots p
  cross join lateral unnest(case when cardinality(p.supplier_business_ids) = 0 then array[null::text] else p.supplier_business_ids end) as l(supplier_business_id)
  cross join lateral unnest(case when cardinality(p.commodities) = 0 then array[null::text] else p.commodities end) as c(commodity)
),
weighted as (
  -- Each plot's cells share it equally: the allocated columns add up to the warehouse's totals.
  select cells.*, 1.0::float8 / count(*) over (partition by plot_id) as weight from cells
)
select
  w.supplier_business_id,
  coalesce(b.name, w.supplier_business_id, case when bool_and(w.is_own) then '(own plots)' else '(no supplier)' end) as supplier_name,
  w.commodity,
  w.country_code,
  count(distinct w.plot_id) as plots,
  coalesce(sum(w.area_ha), 0) as hectares,
  count(distinct w.plot_id) filter (where w.flagged) as flagged_plots,
  round((count(distinct w.plot_id) filter (where w.flagged))::numeric / count(distinct w.plot_id), 4) as flagged_share,
  sum(w.weight) as plots_allocated,
  coalesce(sum(w.weight * w.area_ha), 0) as hectares_allocated,
  w.country_risk_level
from weighted w
left join businesses b on b.id = w.supplier_business_id
-- The country's risk level follows from country_code (bi_current_plots): grouping by it adds no row.
group by w.supplier_business_id, b.name, w.commodity, w.country_code, w.country_risk_level, (w.supplier_business_id is null and w.is_own)`,
  bi_warehouse_totals: `
select
  count(*) as plots,
  coalesce(sum(p.area_ha), 0) as hectares,
  count(*) filter (where p.area_ha is null) as plots_without_area,
  count(*) filter (where p.is_own) as own_plots,
  count(*) filter (where p.supplier_count > 0) as supplier_plots,
  count(*) filter (where p.supplier_count > 1) as shared_plots,
  count(*) filter (where p.flagged) as flagged_plots,
  coalesce(sum(p.area_ha) filter (where p.flagged), 0) as flagged_hectares,
  count(*) filter (where not p.geometry_valid) as invalid_geometries,
  (select count(*) from bi_suppliers) as suppliers,
  (select sum(s.plots_announced) from bi_suppliers s) as plots_announced
from bi_current_plots p`,
} as const;

export const SUMMARY_ORDER: Record<keyof typeof SUMMARY_VIEW_ORACLES, string> = {
  bi_suppliers: 'supplier_business_id',
  bi_eudr_supplier_readiness: 'supplier_business_id',
  bi_risk_overview: 'supplier_business_id nulls first, commodity nulls first, country_code nulls first, supplier_name',
  bi_warehouse_totals: '1',
};

/** A value as compared: floats to 12 significant digits (a sum's last bits depend on the order of its terms). */
function comparable(value: unknown): unknown {
  if (typeof value === 'number' && !Number.isInteger(value)) return Number(value.toPrecision(12));
  if (typeof value === 'string' && /^-?\d+\.\d+$/.test(value)) return Number(Number(value).toPrecision(12));
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map(comparable);
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, comparable(v)]));
  return value;
}

export async function rowsOf(db: Warehouse, query: string, order: string): Promise<unknown[]> {
  const { rows } = await sql<
    Record<string, unknown>
  >`select * from (${sql.raw(query)}) v order by ${sql.raw(order)}`.execute(db);
  return rows.map(comparable);
}

/** Each summary view against its definition before the summary tables, row by row, column by column. */
export async function expectSummariesAgree(db: Warehouse, when: string): Promise<void> {
  for (const [view, oracle] of Object.entries(SUMMARY_VIEW_ORACLES)) {
    const order = SUMMARY_ORDER[view as keyof typeof SUMMARY_VIEW_ORACLES];
    const expected = await rowsOf(db, oracle, order);
    const actual = await rowsOf(db, `select * from ${view}`, order);
    expect(actual, `${view} ${when}`).toEqual(expected);
  }
  // And the totals are those of the per-plot view (the oracle's own premise).
  const { rows } = await sql<{ same: boolean }>`
    select (select plots from bi_warehouse_totals) = (select count(*) from bi_current_plots)
       and (select plots from bi_warehouse_totals) = (select count(*) from bi_eudr_plot_readiness) as same`.execute(db);
  expect(rows[0]!.same, when).toBe(true);
}
