-- Views for analysts and BI tools, and the read-only role they connect with.

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
  coalesce(s.supplier_ids, '{}') as supplier_ids,
  coalesce(s.supplier_names, '{}') as supplier_names,
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
  p.created_at,
  p.updated_at,
  p.first_seen_at,
  p.changed_at,
  seen.last_seen_at
from plots p
left join lateral (
  select array_agg(ps.supplier_id order by ps.supplier_id) as supplier_ids,
         array_agg(coalesce(b.name, ps.supplier_id) order by ps.supplier_id) as supplier_names
  from plot_suppliers ps
  left join businesses b on b.id = ps.supplier_id
  where ps.plot_id = p.id and ps.deleted_at is null
) s on true
left join lateral (
  select max(si.seen_at) as last_seen_at
  from sightings si
  where (si.entity = 'plot_supplier' and si.key like p.id || '|%') or (si.entity = 'own_plot' and si.key = p.id)
) seen on true
left join analyses eu on eu.id = p.euforobs_analysis_id
left join analyses pr on pr.id = p.precision_analysis_id
where p.deleted_at is null;
comment on view bi_current_plots is 'Plots present at the last refresh, with suppliers, risk and the latest EUFOROBS and PRECISION analyses.';

-- A plot is flagged when its risk level is high or medium, or its risk status says mitigation or non-compliance.
create view bi_risk_overview as
with current_links as (
  select p.id, p.country_code, p.commodities, p.area_ha,
         coalesce(ps.supplier_id, '(own)') as supplier_id,
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
group by l.supplier_id, b.name, c.commodity, l.country_code;
comment on view bi_risk_overview is 'Plots, hectares and share flagged (risk level high/medium or status IN_RISK_MITIGATION/EUDR_NON_COMPLIANT) by supplier, commodity and country.';

-- What changed, from history: one row per change of a tracked attribute, with the values before.
create view bi_plot_changes as
select
  h.plot_id,
  h.valid_from as changed_at,
  case when prev.plot_id is null then 'appeared' else 'changed' end as change,
  prev.risk_assessment_status as risk_assessment_status_before,
  h.risk_assessment_status,
  prev.risk_level as risk_level_before,
  h.risk_level,
  (prev.geometry_hash is distinct from h.geometry_hash and prev.plot_id is not null) as geometry_changed,
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
comment on view bi_plot_changes is 'Changes of tracked plot attributes (risk status, risk level, geometry, commodities, most recent analysis), appearances and removals; filter on changed_at.';

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
  coalesce(sum(c.inserted), 0) as rows_inserted,
  coalesce(sum(c.updated), 0) as rows_updated,
  coalesce(sum(c.unchanged), 0) as rows_unchanged,
  coalesce(sum(c.deleted), 0) as rows_deleted,
  r.error,
  extract(epoch from (now() - (select max(finished_at) from sync_runs s where s.status = 'succeeded')))::numeric(12, 0) as seconds_since_last_success
from sync_runs r
left join sync_run_counts c on c.run_id = r.id
group by r.id;
comment on view bi_sync_health is 'One row per refresh with its outcome, volume, retries and 429s, and the age of the last successful one.';

-- The read-only role for BI tools. Roles are cluster-wide, so create it only once.
do $$
begin
  if not exists (select 1 from pg_roles where rolname = 'ddsync_reader') then
    create role ddsync_reader nologin;
  end if;
end
$$;
grant usage on schema public to ddsync_reader;
grant select on all tables in schema public to ddsync_reader;
alter default privileges in schema public grant select on tables to ddsync_reader;
