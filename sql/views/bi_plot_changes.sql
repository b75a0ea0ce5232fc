-- The changes (a version of plot_history, or a plot removed) first, the version before each looked up
-- after: a filter on the plots (plot_id in ...) and a limit look up the versions before of only the
-- rows they return. Each branch of the union reads one table, so Postgres flattens it and applies the
-- filter to both tables before the lookup (with the lookup inside a branch, it looked up every
-- change's version before and filtered after: 20,000 look-ups for Brazil's first 1,000 rows).
create view bi_plot_changes as
select
  c.plot_id,
  c.changed_at,
  case when c.removed then 'removed' when prev.plot_id is null then 'appeared' when prev.valid_to < c.changed_at then 'reappeared' else 'changed' end as change,
  case when c.removed then normalise_status(c.risk_assessment_status) else normalise_status(prev.risk_assessment_status) end as risk_assessment_status_before,
  case when c.removed then c.risk_assessment_status else prev.risk_assessment_status end as risk_assessment_status_before_raw,
  case when c.removed then null else normalise_status(c.risk_assessment_status) end as risk_assessment_status,
  case when c.removed then null else c.risk_assessment_status end as risk_assessment_status_raw,
  case when c.removed then normalise_status(c.risk_level) else normalise_status(prev.risk_level) end as risk_level_before,
  case when c.removed then c.risk_level else prev.risk_level end as risk_level_before_raw,
  case when c.removed then null else normalise_status(c.risk_level) end as risk_level,
  case when c.removed then null else c.risk_level end as risk_level_raw,
  (not c.removed and prev.plot_id is not null and prev.geometry_hash is distinct from c.geometry_hash) as geometry_changed,
  case when c.removed then c.commodities else prev.commodities end as commodities_before,
  case when c.removed then null else c.commodities end as commodities,
  case when c.removed then c.most_recent_analysis_id else prev.most_recent_analysis_id end as most_recent_analysis_id_before,
  case when c.removed then null else c.most_recent_analysis_id end as most_recent_analysis_id,
  c.run_id
from (
  select h.plot_id, h.valid_from as changed_at, false as removed, h.risk_assessment_status, h.risk_level, h.geometry_hash,
         h.commodities, h.most_recent_analysis_id, h.run_id
  from plot_history h
  union all
  select p.id, p.deleted_at, true, p.risk_assessment_status, p.risk_level, null, p.commodities, p.most_recent_analysis_id, null
  from plots p
  where p.deleted_at is not null
) c
left join lateral (
  select x.plot_id, x.valid_to, x.risk_assessment_status, x.risk_level, x.geometry_hash, x.commodities, x.most_recent_analysis_id
  from plot_history x
  where not c.removed and x.plot_id = c.plot_id and x.valid_from < c.changed_at
  order by x.valid_from desc limit 1
) prev on true;

comment on view bi_plot_changes is 'One row per change of a plot: appeared, reappeared, changed (a tracked attribute: risk status, risk level, geometry, commodities, most recent analysis; with the values before) or removed. Filter on changed_at >= a date. Count rows per change, not plots: a plot may change several times.';
comment on column bi_plot_changes.plot_id is 'The plot (plots.id).';
comment on column bi_plot_changes.changed_at is 'When the refresh recorded the change (the removal time for removed).';
comment on column bi_plot_changes.change is 'appeared, reappeared, changed or removed.';
comment on column bi_plot_changes.risk_assessment_status_before is 'Risk assessment status before the change, normalised; for removed, the last one.';
comment on column bi_plot_changes.risk_assessment_status_before_raw is 'The same as the service sent it.';
comment on column bi_plot_changes.risk_assessment_status is 'Risk assessment status after the change, normalised; null for removed.';
comment on column bi_plot_changes.risk_assessment_status_raw is 'The same as the service sent it.';
comment on column bi_plot_changes.risk_level_before is 'Risk level before the change, normalised; for removed, the last one.';
comment on column bi_plot_changes.risk_level_before_raw is 'The same as the service sent it.';
comment on column bi_plot_changes.risk_level is 'Risk level after the change, normalised; null for removed.';
comment on column bi_plot_changes.risk_level_raw is 'The same as the service sent it.';
comment on column bi_plot_changes.geometry_changed is 'The polygon changed.';
comment on column bi_plot_changes.commodities_before is 'Commodities before the change; for removed, the last ones.';
comment on column bi_plot_changes.commodities is 'Commodities after the change; null for removed.';
comment on column bi_plot_changes.most_recent_analysis_id_before is 'Most recent analysis before the change (analyses.id); for removed, the last one.';
comment on column bi_plot_changes.most_recent_analysis_id is 'Most recent analysis after the change; null for removed.';
comment on column bi_plot_changes.run_id is 'The refresh that recorded it (sync_runs.id); null for removed.';

grant select on bi_plot_changes to ddsync_reader;
