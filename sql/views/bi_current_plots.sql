-- A plot is flagged when its risk level is high or medium, or its risk status is in_risk_mitigation or eudr_non_compliant.
-- A plot's country of production is plots.country_code (Art. 9(1)(c); warehouse/eudr/country-of-production.ts
-- checks it), matched trimmed and upper case as the readiness check accepts it, with the level bi_country_risk
-- gives that country: one row per plot.
-- Two branches, the same columns and joins, that differ in where a plot's supplier ids come from:
-- plot_supplier_ids (0035: its live links as one sorted array, kept by triggers) for a plot that has
-- a row there, none for one that has not (own plots). A filter on a column reaches each branch: in
-- the first, `'<id>' = any(supplier_business_ids)` is tested on plot_supplier_ids' rows, before
-- any plot is looked up (by key, for the rows it keeps); in the second it is false and the branch
-- reads nothing. One query with the links aggregated per plot (as until 0035) tested such a filter
-- only after the links of every plot scanned, and a left join of plot_supplier_ids keeps the filter
-- above the join, so the plots would still be read first (docs/analyst-views.md).
create view bi_current_plots as
-- When each part was last read completely: a row per scope, made once per query.
with last_seen as materialized (
  select ls.scope, ls.last_seen_at from sync_last_seen ls
)
-- The union inside a subquery: a query that reads only some columns (count(*), sum(area_ha)) then makes
-- only those in each branch (Postgres leaves every column of a union that a WITH query returns directly).
select * from (
select
  p.id as plot_id,
  p.name as plot_name,
  p.owner_id as owner_business_id,
  p.is_own,
  p.country_code,
  p.commodities,
  p.area_ha,
  p.surface_area_m2,
  p.geometry_valid,
  p.geometry_issue,
  normalise_status(p.risk_assessment_status) as risk_assessment_status,
  p.risk_assessment_status as risk_assessment_status_raw,
  normalise_status(p.risk_level) as risk_level,
  p.risk_level as risk_level_raw,
  ((normalise_status(p.risk_level) in ('high', 'medium')) is true
    or (normalise_status(p.risk_assessment_status) in ('in_risk_mitigation', 'eudr_non_compliant')) is true) as flagged,
  cardinality(l.supplier_ids) as supplier_count,
  l.supplier_ids as supplier_business_ids,
  coalesce(sn.supplier_names, '{}') as supplier_names,
  p.most_recent_analysis_id,
  case when p.most_recent_analysis_id = p.euforobs_analysis_id then eu.type when p.most_recent_analysis_id = p.precision_analysis_id then pr.type else mr.type end as most_recent_analysis_type,
  normalise_status(case when p.most_recent_analysis_id = p.euforobs_analysis_id then eu.status
                        when p.most_recent_analysis_id = p.precision_analysis_id then pr.status else mr.status end) as most_recent_analysis_status,
  case when p.most_recent_analysis_id = p.euforobs_analysis_id then eu.status when p.most_recent_analysis_id = p.precision_analysis_id then pr.status else mr.status end as most_recent_analysis_status_raw,
  p.euforobs_analysis_id,
  normalise_status(eu.status) as euforobs_status,
  eu.status as euforobs_status_raw,
  eu.risk_of_deforestation as euforobs_risk_of_deforestation,
  eu.deforested_area_m2 as euforobs_deforested_area_m2,
  eu.analysed_at as euforobs_analysed_at,
  p.precision_analysis_id,
  normalise_status(pr.status) as precision_status,
  pr.status as precision_status_raw,
  pr.risk_of_deforestation as precision_risk_of_deforestation,
  pr.deforested_area_m2 as precision_deforested_area_m2,
  pr.analysed_at as precision_analysed_at,
  case when p.most_recent_analysis_id = p.euforobs_analysis_id then eu.risk_of_deforestation when p.most_recent_analysis_id = p.precision_analysis_id then pr.risk_of_deforestation else mr.risk_of_deforestation end as most_recent_risk_of_deforestation,
  case when p.most_recent_analysis_id = p.euforobs_analysis_id then eu.deforested_area_m2 when p.most_recent_analysis_id = p.precision_analysis_id then pr.deforested_area_m2 else mr.deforested_area_m2 end as most_recent_deforested_area_m2,
  case when p.most_recent_analysis_id = p.euforobs_analysis_id then eu.analysed_at when p.most_recent_analysis_id = p.precision_analysis_id then pr.analysed_at else mr.analysed_at end as most_recent_analysed_at,
  p.production_date_start,
  p.production_date_end,
  p.bbox_min_lon,
  p.bbox_min_lat,
  p.bbox_max_lon,
  p.bbox_max_lat,
  p.created_at,
  p.updated_at,
  p.first_seen_at,
  p.changed_at,
  case when p.is_own then own.last_seen_at else sn.last_seen_at end as last_seen_at,
  case when nullif(btrim(p.country_code), '') is null then null else coalesce(cr.level, 'unknown') end as country_risk_level
from plot_supplier_ids l
join plots p on p.id = l.plot_id
-- Its suppliers' names and when they were last read completely, in one pass over its suppliers: only
-- for the rows returned (after a filter on supplier_business_ids). last_seen has a row per scope. In the
-- second branch (no supplier ids) it reads nothing of the plot: made once.
left join lateral (
  select array_agg(coalesce(b.name, s.id) order by s.n) as supplier_names, max(ls.last_seen_at) as last_seen_at
  from unnest(l.supplier_ids) with ordinality as s(id, n)
  left join businesses b on b.id = s.id
  left join last_seen ls on ls.scope = s.id
) sn on true
left join last_seen own on own.scope = 'own-plots'
left join analyses eu on eu.id = p.euforobs_analysis_id
left join analyses pr on pr.id = p.precision_analysis_id
-- The most recent analysis is the latest EUFOROBS or PRECISION one of every plot stored so far: its
-- columns are then taken from eu or pr, and analyses is looked up for it only when it is neither (the
-- conditions on p alone make that look-up a one-time filter, skipped for the others).
left join lateral (
  select a.type, a.status, a.risk_of_deforestation, a.deforested_area_m2, a.analysed_at
  from analyses a
  where a.id = p.most_recent_analysis_id
    and p.most_recent_analysis_id is distinct from p.euforobs_analysis_id
    and p.most_recent_analysis_id is distinct from p.precision_analysis_id
  limit 1
) mr on true
-- The level in force today of its country, as bi_country_risk has it (the row with the latest applies_from
-- not after today), looked up by the key of country_risk for this plot alone.
left join lateral (
  select r.level from country_risk r
  where r.country_code = upper(btrim(p.country_code)) and r.applies_from <= current_date
  order by r.applies_from desc limit 1
) cr on true
where p.deleted_at is null
union all
select
  p.id as plot_id,
  p.name as plot_name,
  p.owner_id as owner_business_id,
  p.is_own,
  p.country_code,
  p.commodities,
  p.area_ha,
  p.surface_area_m2,
  p.geometry_valid,
  p.geometry_issue,
  normalise_status(p.risk_assessment_status) as risk_assessment_status,
  p.risk_assessment_status as risk_assessment_status_raw,
  normalise_status(p.risk_level) as risk_level,
  p.risk_level as risk_level_raw,
  ((normalise_status(p.risk_level) in ('high', 'medium')) is true
    or (normalise_status(p.risk_assessment_status) in ('in_risk_mitigation', 'eudr_non_compliant')) is true) as flagged,
  cardinality(l.supplier_ids) as supplier_count,
  l.supplier_ids as supplier_business_ids,
  coalesce(sn.supplier_names, '{}') as supplier_names,
  p.most_recent_analysis_id,
  case when p.most_recent_analysis_id = p.euforobs_analysis_id then eu.type when p.most_recent_analysis_id = p.precision_analysis_id then pr.type else mr.type end as most_recent_analysis_type,
  normalise_status(case when p.most_recent_analysis_id = p.euforobs_analysis_id then eu.status
                        when p.most_recent_analysis_id = p.precision_analysis_id then pr.status else mr.status end) as most_recent_analysis_status,
  case when p.most_recent_analysis_id = p.euforobs_analysis_id then eu.status when p.most_recent_analysis_id = p.precision_analysis_id then pr.status else mr.status end as most_recent_analysis_status_raw,
  p.euforobs_analysis_id,
  normalise_status(eu.status) as euforobs_status,
  eu.status as euforobs_status_raw,
  eu.risk_of_deforestation as euforobs_risk_of_deforestation,
  eu.deforested_area_m2 as euforobs_deforested_area_m2,
  eu.analysed_at as euforobs_analysed_at,
  p.precision_analysis_id,
  normalise_status(pr.status) as precision_status,
  pr.status as precision_status_raw,
  pr.risk_of_deforestation as precision_risk_of_deforestation,
  pr.deforested_area_m2 as precision_deforested_area_m2,
  pr.analysed_at as precision_analysed_at,
  case when p.most_recent_analysis_id = p.euforobs_analysis_id then eu.risk_of_deforestation when p.most_recent_analysis_id = p.precision_analysis_id then pr.risk_of_deforestation else mr.risk_of_deforestation end as most_recent_risk_of_deforestation,
  case when p.most_recent_analysis_id = p.euforobs_analysis_id then eu.deforested_area_m2 when p.most_recent_analysis_id = p.precision_analysis_id then pr.deforested_area_m2 else mr.deforested_area_m2 end as most_recent_deforested_area_m2,
  case when p.most_recent_analysis_id = p.euforobs_analysis_id then eu.analysed_at when p.most_recent_analysis_id = p.precision_analysis_id then pr.analysed_at else mr.analysed_at end as most_recent_analysed_at,
  p.production_date_start,
  p.production_date_end,
  p.bbox_min_lon,
  p.bbox_min_lat,
  p.bbox_max_lon,
  p.bbox_max_lat,
  p.created_at,
  p.updated_at,
  p.first_seen_at,
  p.changed_at,
  case when p.is_own then own.last_seen_at else sn.last_seen_at end as last_seen_at,
  case when nullif(btrim(p.country_code), '') is null then null else coalesce(cr.level, 'unknown') end as country_risk_level
from plots p
cross join (select '{}'::text[] as supplier_ids) l
-- Its suppliers' names and when they were last read completely, in one pass over its suppliers: only
-- for the rows returned (after a filter on supplier_business_ids). last_seen has a row per scope. In the
-- second branch (no supplier ids) it reads nothing of the plot: made once.
left join lateral (
  select array_agg(coalesce(b.name, s.id) order by s.n) as supplier_names, max(ls.last_seen_at) as last_seen_at
  from unnest(l.supplier_ids) with ordinality as s(id, n)
  left join businesses b on b.id = s.id
  left join last_seen ls on ls.scope = s.id
) sn on true
left join last_seen own on own.scope = 'own-plots'
left join analyses eu on eu.id = p.euforobs_analysis_id
left join analyses pr on pr.id = p.precision_analysis_id
-- The most recent analysis is the latest EUFOROBS or PRECISION one of every plot stored so far: its
-- columns are then taken from eu or pr, and analyses is looked up for it only when it is neither (the
-- conditions on p alone make that look-up a one-time filter, skipped for the others).
left join lateral (
  select a.type, a.status, a.risk_of_deforestation, a.deforested_area_m2, a.analysed_at
  from analyses a
  where a.id = p.most_recent_analysis_id
    and p.most_recent_analysis_id is distinct from p.euforobs_analysis_id
    and p.most_recent_analysis_id is distinct from p.precision_analysis_id
  limit 1
) mr on true
-- The level in force today of its country, as bi_country_risk has it (the row with the latest applies_from
-- not after today), looked up by the key of country_risk for this plot alone.
left join lateral (
  select r.level from country_risk r
  where r.country_code = upper(btrim(p.country_code)) and r.applies_from <= current_date
  order by r.applies_from desc limit 1
) cr on true
where p.deleted_at is null
  and not exists (select 1 from plot_supplier_ids x where x.plot_id = p.id)
) as v;

comment on view bi_current_plots is 'One row per current plot (not soft-deleted), however many suppliers reach it: suppliers, risk, analyses, area, geometry quality, when last seen, and the risk level of its country of production (country_risk_level). Every number may be summed: sum(area_ha) and count(*) are the warehouse''s hectares and plots.';
comment on column bi_current_plots.plot_id is 'The plot''s id at the service (plots.id).';
comment on column bi_current_plots.plot_name is 'The plot''s name.';
comment on column bi_current_plots.owner_business_id is 'The business that owns the plot (the service''s ownerId).';
comment on column bi_current_plots.is_own is 'A plot of the calling business itself (GET /plots).';
comment on column bi_current_plots.country_code is 'Country of the plot (ISO 3166 alpha-2) as the service sent it.';
comment on column bi_current_plots.commodities is 'Commodities of the plot (cattle, cocoa, coffee, oil palm, rubber, soya, wood), as sent.';
comment on column bi_current_plots.area_ha is 'Area in hectares computed from the polygon (for a flagged shape: the area it encloses as drawn, see plots.area_ha); summable.';
comment on column bi_current_plots.surface_area_m2 is 'surfaceArea as the service reports it, in square metres.';
comment on column bi_current_plots.geometry_valid is 'false when the polygon is invalid (geometry_issue says why); the plot is kept and keeps its area.';
comment on column bi_current_plots.geometry_issue is 'What is wrong with the polygon, e.g. self-intersection at [lon, lat]; null when valid.';
comment on column bi_current_plots.risk_assessment_status is 'Risk assessment status, normalised: new, under_review, in_risk_mitigation, eudr_compliant, eudr_non_compliant; any other value the service sends appears normalised the same way.';
comment on column bi_current_plots.risk_assessment_status_raw is 'riskAssessmentStatus as the service sent it.';
comment on column bi_current_plots.risk_level is 'Risk level, normalised: high, medium, low, none; null while the analysis is pending; other values kept.';
comment on column bi_current_plots.risk_level_raw is 'riskLevel as the service sent it.';
comment on column bi_current_plots.flagged is 'Risk level high or medium, or risk status in_risk_mitigation or eudr_non_compliant.';
comment on column bi_current_plots.supplier_count is 'Direct suppliers through which the plot is reached (live links); 0 for a plot reached through none (own plots).';
comment on column bi_current_plots.supplier_business_ids is 'Business ids of those suppliers, sorted.';
comment on column bi_current_plots.supplier_names is 'Names of those suppliers, in the order of supplier_business_ids (the id when the name is unknown).';
comment on column bi_current_plots.most_recent_analysis_id is 'The plot''s most recent analysis (analyses.id), of either type.';
comment on column bi_current_plots.most_recent_analysis_type is 'Type of the most recent analysis: EUFOROBS or PRECISION (as sent).';
comment on column bi_current_plots.most_recent_analysis_status is 'Status of the most recent analysis, normalised: pending, not_started, started, succeeded, failed; other values kept.';
comment on column bi_current_plots.most_recent_analysis_status_raw is 'That status as the service sent it.';
comment on column bi_current_plots.euforobs_analysis_id is 'The plot''s latest EUFOROBS analysis (analyses.id).';
comment on column bi_current_plots.euforobs_status is 'Its status, normalised (as most_recent_analysis_status).';
comment on column bi_current_plots.euforobs_status_raw is 'Its status as the service sent it.';
comment on column bi_current_plots.euforobs_risk_of_deforestation is 'Its risk of deforestation, 0 to 1.';
comment on column bi_current_plots.euforobs_deforested_area_m2 is 'Its deforested area, m².';
comment on column bi_current_plots.euforobs_analysed_at is 'When it was analysed.';
comment on column bi_current_plots.precision_analysis_id is 'The plot''s latest PRECISION analysis (analyses.id).';
comment on column bi_current_plots.precision_status is 'Its status, normalised (as most_recent_analysis_status).';
comment on column bi_current_plots.precision_status_raw is 'Its status as the service sent it.';
comment on column bi_current_plots.precision_risk_of_deforestation is 'Its risk of deforestation, 0 to 1.';
comment on column bi_current_plots.precision_deforested_area_m2 is 'Its deforested area, m².';
comment on column bi_current_plots.precision_analysed_at is 'When it was analysed.';
comment on column bi_current_plots.most_recent_risk_of_deforestation is 'Risk of deforestation (0 to 1) of the most recent analysis.';
comment on column bi_current_plots.most_recent_deforested_area_m2 is 'Deforested area (m²) of the most recent analysis.';
comment on column bi_current_plots.most_recent_analysed_at is 'When the most recent analysis was analysed.';
comment on column bi_current_plots.production_date_start is 'Start of production on the plot.';
comment on column bi_current_plots.production_date_end is 'End of production on the plot.';
comment on column bi_current_plots.bbox_min_lon is 'Bounding box of the polygon: westernmost longitude.';
comment on column bi_current_plots.bbox_min_lat is 'Bounding box: southernmost latitude.';
comment on column bi_current_plots.bbox_max_lon is 'Bounding box: easternmost longitude.';
comment on column bi_current_plots.bbox_max_lat is 'Bounding box: northernmost latitude.';
comment on column bi_current_plots.created_at is 'When the plot was created at the service.';
comment on column bi_current_plots.updated_at is 'When the plot was last updated at the service.';
comment on column bi_current_plots.first_seen_at is 'When a refresh first stored the plot.';
comment on column bi_current_plots.changed_at is 'When a refresh last stored a change of the plot.';
comment on column bi_current_plots.last_seen_at is 'When a complete read last saw the plot (the latest of its suppliers'' complete reads; for an own plot, of own-plots).';
comment on column bi_current_plots.country_risk_level is 'Risk level in force today of the plot''s country of production (country_code, trimmed, upper case) under the Commission''s benchmarking (bi_country_risk): low, standard or high; unknown when the code is not settled by the stored sources (a territory, VA, TW, EH) or is not an ISO code at all; null when the plot has no country.';

grant select on bi_current_plots to ddsync_reader;
