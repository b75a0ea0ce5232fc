-- Views for analysts and BI tools, and the read-only role they connect with.

-- When each part of the business network was last read completely: a live row of that part was
-- seen then (a complete read that missed it would have soft-deleted it). Rows are not rewritten
-- at every run to record this, which keeps a refresh with nothing new free of writes.
create view sync_last_seen as
select scope, kind, max(finished_at) as last_seen_at
from sync_run_scopes
where status = 'succeeded'
group by scope, kind;
comment on view sync_last_seen is 'Per scope (a supplier id, own-plots, network): when it was last read completely. Live rows of that scope were seen then.';

-- Current plots with their suppliers, risk and latest analyses.
create view bi_current_plots as
select
  p.id as plot_id,
  p.name,
  p.owner_id,
  p.is_own,
  p.country_code,
  p.commodities,
  p.area_ha,
  p.surface_area_m2,
  p.geometry_valid,
  p.geometry_issue,
  p.risk_assessment_status,
  p.risk_level,
  coalesce(l.supplier_ids, '{}') as supplier_ids,
  coalesce(l.supplier_names, '{}') as supplier_names,
  p.most_recent_analysis_id,
  eu.status as euforobs_status,
  eu.risk_of_deforestation as euforobs_risk_of_deforestation,
  eu.deforested_area_m2 as euforobs_deforested_area_m2,
  eu.analysed_at as euforobs_analysed_at,
  pr.status as precision_status,
  pr.risk_of_deforestation as precision_risk_of_deforestation,
  pr.deforested_area_m2 as precision_deforested_area_m2,
  pr.analysed_at as precision_analysed_at,
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
  case when p.is_own then own.last_seen_at else l.last_seen_at end as last_seen_at
from plots p
left join (
  select ps.plot_id,
         array_agg(ps.supplier_id order by ps.supplier_id) as supplier_ids,
         array_agg(coalesce(b.name, ps.supplier_id) order by ps.supplier_id) as supplier_names,
         max(ls.last_seen_at) as last_seen_at
  from plot_suppliers ps
  left join businesses b on b.id = ps.supplier_id
  left join sync_last_seen ls on ls.scope = ps.supplier_id
  where ps.deleted_at is null
  group by ps.plot_id
) l on l.plot_id = p.id
left join sync_last_seen own on own.scope = 'own-plots'
left join analyses eu on eu.id = p.euforobs_analysis_id
left join analyses pr on pr.id = p.precision_analysis_id
where p.deleted_at is null;
comment on view bi_current_plots is 'Plots present at the last refresh, with suppliers, risk, the latest EUFOROBS and PRECISION analyses, and when they were last seen.';

-- A plot is flagged when its risk level is high or medium, or its risk status says mitigation or non-compliance.
create view bi_risk_overview as
with current_links as (
  select p.id, p.country_code, p.commodities, p.area_ha,
         case when p.is_own then '(own)' else ps.supplier_id end as supplier_id,
         (p.risk_level in ('high', 'medium') or p.risk_assessment_status in ('IN_RISK_MITIGATION', 'EUDR_NON_COMPLIANT')) as flagged
  from plots p
  left join plot_suppliers ps on ps.plot_id = p.id and ps.deleted_at is null
  where p.deleted_at is null
)
select
  l.supplier_id,
  coalesce(b.name, l.supplier_id) as supplier_name,
  c.commodity,
  l.country_code,
  count(*) as plots,
  round(sum(coalesce(l.area_ha, 0))::numeric, 2) as hectares,
  count(*) filter (where l.flagged) as flagged_plots,
  round((count(*) filter (where l.flagged))::numeric / count(*), 4) as flagged_share
from current_links l
cross join lateral unnest(case when cardinality(l.commodities) = 0 then array['(none)'] else l.commodities end) as c(commodity)
left join businesses b on b.id = l.supplier_id
where l.supplier_id is not null
group by l.supplier_id, b.name, c.commodity, l.country_code;
comment on view bi_risk_overview is 'Per supplier, commodity and country: plots, hectares and share flagged (risk level high/medium or status IN_RISK_MITIGATION/EUDR_NON_COMPLIANT). A plot shared by two suppliers counts for each; a plot with two commodities counts under each.';

-- What changed, from history: one row per change of a tracked attribute, with the values before.
create view bi_plot_changes as
select
  h.plot_id,
  h.valid_from as changed_at,
  case when prev.plot_id is null then 'appeared' when prev.valid_to < h.valid_from then 'reappeared' else 'changed' end as change,
  prev.risk_assessment_status as risk_assessment_status_before,
  h.risk_assessment_status,
  prev.risk_level as risk_level_before,
  h.risk_level,
  (prev.plot_id is not null and prev.geometry_hash is distinct from h.geometry_hash) as geometry_changed,
  prev.commodities as commodities_before,
  h.commodities,
  prev.most_recent_analysis_id as most_recent_analysis_before,
  h.most_recent_analysis_id,
  h.run_id
from plot_history h
left join lateral (
  select * from plot_history x
  where x.plot_id = h.plot_id and x.valid_from < h.valid_from
  order by x.valid_from desc limit 1
) prev on true
union all
select p.id, p.deleted_at, 'removed', p.risk_assessment_status, null, p.risk_level, null, false, p.commodities, null, p.most_recent_analysis_id, null, null
from plots p
where p.deleted_at is not null;
comment on view bi_plot_changes is 'Appearances, changes of tracked plot attributes (risk status, risk level, geometry, commodities, most recent analysis) and removals; filter on changed_at >= a date.';

create view bi_sync_health as
select
  r.id as run_id,
  r.kind,
  r.status,
  r.started_at,
  r.finished_at,
  extract(epoch from (coalesce(r.finished_at, now()) - r.started_at))::numeric(12, 1) as seconds,
  r.suppliers_total,
  r.suppliers_done,
  r.suppliers_failed,
  r.pages,
  r.plots_seen,
  r.requests,
  r.retries,
  r.rate_limited,
  coalesce(c.inserted, 0) as rows_inserted,
  coalesce(c.updated, 0) as rows_updated,
  coalesce(c.unchanged, 0) as rows_unchanged,
  coalesce(c.deleted, 0) as rows_deleted,
  (select count(*) from sync_issues i where i.run_id = r.id) as record_issues,
  r.error,
  extract(epoch from (now() - (select max(finished_at) from sync_runs s where s.status = 'succeeded')))::numeric(12, 0) as seconds_since_last_success
from sync_runs r
left join (
  select run_id, sum(inserted) as inserted, sum(updated) as updated, sum(unchanged) as unchanged, sum(deleted) as deleted
  from sync_run_counts group by run_id
) c on c.run_id = r.id;
comment on view bi_sync_health is 'One row per refresh: outcome, duration, volume, retries, 429s, rows written, record issues, and the age of the last successful refresh.';

-- The read-only role for BI tools (a group role: grant it to a login role). Roles are cluster-wide:
-- another database of the cluster may have created it, even at this very moment.
do $$
begin
  if not exists (select 1 from pg_roles where rolname = 'ddsync_reader') then
    create role ddsync_reader nologin;
  end if;
exception when duplicate_object or unique_violation then
  null;
end
$$;
grant usage on schema public to ddsync_reader;
grant select on all tables in schema public to ddsync_reader;
alter default privileges in schema public grant select on tables to ddsync_reader;
