create view bi_plot_changes as
select
  h.plot_id,
  h.valid_from as changed_at,
  case when prev.plot_id is null then 'appeared' when prev.valid_to < h.valid_from then 'reappeared' else 'changed' end as change,
  normalise_status(prev.risk_assessment_status) as risk_assessment_status_before,
  prev.risk_assessment_status as risk_assessment_status_before_raw,
  normalise_status(h.risk_assessment_status) as risk_assessment_status,
  h.risk_assessment_status as risk_assessment_status_raw,
  normalise_status(prev.risk_level) as risk_level_before,
  prev.risk_level as risk_level_before_raw,
  normalise_status(h.risk_level) as risk_level,
  h.risk_level as risk_level_raw,
  (prev.plot_id is not null and prev.geometry_hash is distinct from h.geometry_hash) as geometry_changed,
  prev.commodities as commodities_before,
  h.commodities,
  prev.most_recent_analysis_id as most_recent_analysis_id_before,
  h.most_recent_analysis_id,
  h.run_id
from plot_history h
left join lateral (
  select * from plot_history x
  where x.plot_id = h.plot_id and x.valid_from < h.valid_from
  order by x.valid_from desc limit 1
) prev on true
union all
select p.id, p.deleted_at, 'removed',
       normalise_status(p.risk_assessment_status), p.risk_assessment_status, null, null,
       normalise_status(p.risk_level), p.risk_level, null, null,
       false, p.commodities, null, p.most_recent_analysis_id, null, null
from plots p
where p.deleted_at is not null;

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
