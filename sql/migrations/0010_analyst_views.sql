-- Views an analyst can use without reading the code: one naming convention, status values in one
-- vocabulary, numbers that say whether they may be summed, and a comment on every table, view and
-- column (docs/warehouse.md).
--
-- Naming. In a table, the row's own key is `id`; a reference to another row is `<entity>_id`, or
-- `<role>_<entity>_id` when the entity plays a role (`source_business_id`, `euforobs_analysis_id`).
-- Table columns keep their names (the refresh and the submission write them by name); those that
-- break the convention say why in their comment: `plot_suppliers.supplier_id` and
-- `sync_run_scopes.supplier_id` (a business as supplier), `plots.owner_id` (the service's ownerId),
-- `transactions.key` and `webhook_events.msg_id` (keys not called id). In views, where entities meet,
-- every id is qualified: `plot_id`, `supplier_business_id`, `owner_business_id`, `analysis_id`.
--
-- Status values. Tables keep what the service sent. Views expose `<column>` normalised by
-- normalise_status() (lower case, spaces and hyphens as `_`: 'PENDING' → 'pending', 'not started' →
-- 'not_started') and `<column>_raw` as sent. A value outside the known vocabulary is normalised the
-- same way and kept, never dropped or mapped to a catch-all.

-- ── Flagged plots keep their area ───────────────────────────────────────────────────────────────
-- Until now a ring that crosses itself was measured as @turf/area measures it: its lobes cancel out
-- (a bow-tie gets 0 ha). The refresh now measures a flagged shape as drawn (activities/refresh/
-- drawn-area.ts). SQL cannot do that here (no PostGIS), and a refresh would not rewrite these plots by
-- itself: the area is derived, so their fingerprint and history hash are unchanged. An empty content
-- hash matches no fingerprint, and forgetting the pages that hold them makes the next refresh parse
-- those pages: it rewrites each flagged plot once with its area (no history row: nothing tracked changed).
update plots set content_hash = '' where not geometry_valid and geometry is not null;
delete from source_pages
where ids && (select coalesce(array_agg(id), '{}') from plots where not geometry_valid and geometry is not null);

-- ── Status vocabulary ───────────────────────────────────────────────────────────────────────────
-- Not declared strict (null gives null anyway): Postgres then inlines it into the views' queries.
create or replace function normalise_status(value text) returns text
language sql immutable parallel safe
as $$ select nullif(regexp_replace(lower(btrim(value, E' \t\r\n')), '[[:space:]-]+', '_', 'g'), '') $$;
comment on function normalise_status(text) is 'A status as the views expose it: lower case, trimmed, runs of spaces and hyphens as one underscore (''IN_RISK_MITIGATION'' → ''in_risk_mitigation'', ''not started'' → ''not_started''); an unknown value is normalised the same way, never dropped; empty → null.';

-- ── Views: dropped and created again (create or replace cannot rename a column) ────────────────
drop view if exists bi_warehouse_totals;
drop view if exists bi_suppliers;
drop view if exists bi_risk_overview;
drop view if exists bi_current_plots;
drop view if exists sync_last_seen;
drop view if exists bi_plot_changes;
drop view if exists bi_sync_health;
drop view if exists bi_webhook_health;
drop view if exists bi_transaction_pipeline;
drop view if exists bi_transaction_latency;
drop view if exists bi_transaction_errors;

-- Grouped by scope alone (a scope has one kind): unique per scope, so a view that joins it and reads
-- none of its columns skips the join.
create view sync_last_seen as
select scope, min(kind) as kind, case when min(kind) = 'supplier' then scope end as supplier_business_id, max(finished_at) as last_seen_at
from sync_run_scopes
where status = 'succeeded'
group by scope;
comment on view sync_last_seen is 'One row per part of the network ever read completely (a supplier, the own plots, the network listing, the invitations): when it was last read completely. Live rows of that part were seen then (a complete read that missed one would have soft-deleted it or deferred its deletion).';
comment on column sync_last_seen.scope is 'The part: a supplier''s business id, own-plots, network or invitations.';
comment on column sync_last_seen.kind is 'supplier, own_plots, network or invitations.';
comment on column sync_last_seen.supplier_business_id is 'The supplier''s business id when kind is supplier; null otherwise.';
comment on column sync_last_seen.last_seen_at is 'End of the last refresh that read this part completely.';

-- A plot is flagged when its risk level is high or medium, or its risk status is in_risk_mitigation or eudr_non_compliant.
create view bi_current_plots as
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
  coalesce(l.supplier_count, 0)::int as supplier_count,
  coalesce(l.supplier_business_ids, '{}') as supplier_business_ids,
  coalesce(l.supplier_names, '{}') as supplier_names,
  p.most_recent_analysis_id,
  mr.type as most_recent_analysis_type,
  normalise_status(mr.status) as most_recent_analysis_status,
  mr.status as most_recent_analysis_status_raw,
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
  mr.risk_of_deforestation as most_recent_risk_of_deforestation,
  mr.deforested_area_m2 as most_recent_deforested_area_m2,
  mr.analysed_at as most_recent_analysed_at,
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
         count(*) as supplier_count,
         array_agg(ps.supplier_id order by ps.supplier_id) as supplier_business_ids,
         array_agg(coalesce(b.name, ps.supplier_id) order by ps.supplier_id) as supplier_names,
         max(ls.last_seen_at) as last_seen_at
  from plot_suppliers ps
  left join businesses b on b.id = ps.supplier_id
  left join sync_last_seen ls on ls.scope = ps.supplier_id
  where ps.deleted_at is null
  group by ps.plot_id
) l on l.plot_id = p.id
left join sync_last_seen own on own.scope = 'own-plots'
left join analyses mr on mr.id = p.most_recent_analysis_id
left join analyses eu on eu.id = p.euforobs_analysis_id
left join analyses pr on pr.id = p.precision_analysis_id
where p.deleted_at is null;
comment on view bi_current_plots is 'One row per current plot (not soft-deleted), however many suppliers reach it: suppliers, risk, analyses, area, geometry quality, when last seen. Every number may be summed: sum(area_ha) and count(*) are the warehouse''s hectares and plots.';
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

create view bi_suppliers as
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
         count(*) filter (where not l.geometry_valid) as invalid_geometries
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
  ls.last_seen_at
from supplier s
left join businesses b on b.id = s.supplier_business_id
left join figures f on f.supplier_id = s.supplier_business_id
left join commodities c on c.supplier_id = s.supplier_business_id
left join sync_last_seen ls on ls.scope = s.supplier_business_id;
comment on view bi_suppliers is 'One row per direct supplier (live supplier connection): what the connection announces against what the warehouse holds, hectares, commodities, risk, analyses, when last seen. Counts are of distinct plots of that supplier (a plot with two commodities counts once). A plot reached through two suppliers counts for each: plots, hectares and the other counts must not be added up across suppliers; plots_allocated and hectares_allocated may (each shared plot split equally), and add up to the plots reached through suppliers.';
comment on column bi_suppliers.supplier_business_id is 'The supplier''s business id (business_connections.partner_business_id).';
comment on column bi_suppliers.supplier_name is 'The supplier''s name (its id when unknown).';
comment on column bi_suppliers.country_code is 'Country code of the supplier''s address.';
comment on column bi_suppliers.country is 'Country of the supplier''s address.';
comment on column bi_suppliers.connection_id is 'The business connection (business_connections.id); the oldest if the service lists two.';
comment on column bi_suppliers.connected_at is 'When the connection was created at the service.';
comment on column bi_suppliers.plots_announced is 'Plots the connection announces (plotsCount): the supplier''s plots and its upstream''s, as the service counts them.';
comment on column bi_suppliers.commodities_announced is 'Commodities the connection announces (plotsCommodities).';
comment on column bi_suppliers.plots is 'Current plots the warehouse holds for this supplier (live links). Not summable across suppliers.';
comment on column bi_suppliers.plots_difference is 'plots_announced minus plots: positive when the warehouse holds fewer than announced (not read yet, or left out as invalid, see sync_issues).';
comment on column bi_suppliers.plots_deletion_deferred is 'Of plots, those the last refresh missed but could not prove gone (plot_suppliers.missing_since): kept until the next refresh confirms or clears it.';
comment on column bi_suppliers.plots_shared is 'Of plots, those also reached through another supplier.';
comment on column bi_suppliers.plots_allocated is 'plots with each plot divided by its number of suppliers: summable across suppliers.';
comment on column bi_suppliers.hectares is 'Hectares of plots. Not summable across suppliers.';
comment on column bi_suppliers.hectares_allocated is 'Hectares with each plot''s area divided by its number of suppliers: summable across suppliers.';
comment on column bi_suppliers.commodities is 'Distinct commodities of the supplier''s plots, sorted.';
comment on column bi_suppliers.plot_country_codes is 'Distinct countries of the supplier''s plots, sorted.';
comment on column bi_suppliers.flagged_plots is 'Plots flagged (bi_current_plots.flagged).';
comment on column bi_suppliers.flagged_hectares is 'Hectares of the flagged plots.';
comment on column bi_suppliers.plots_risk_high is 'Plots with risk level high.';
comment on column bi_suppliers.plots_risk_medium is 'Plots with risk level medium.';
comment on column bi_suppliers.plots_risk_low is 'Plots with risk level low.';
comment on column bi_suppliers.plots_risk_none is 'Plots with risk level none.';
comment on column bi_suppliers.plots_risk_not_assessed is 'Plots without a risk level (analysis pending).';
comment on column bi_suppliers.plots_risk_other is 'Plots with a risk level outside high, medium, low, none (see bi_current_plots.risk_level_raw).';
comment on column bi_suppliers.plots_status_new is 'Plots with risk assessment status new.';
comment on column bi_suppliers.plots_status_under_review is 'Plots with risk assessment status under_review.';
comment on column bi_suppliers.plots_status_in_risk_mitigation is 'Plots with risk assessment status in_risk_mitigation.';
comment on column bi_suppliers.plots_status_eudr_compliant is 'Plots with risk assessment status eudr_compliant.';
comment on column bi_suppliers.plots_status_eudr_non_compliant is 'Plots with risk assessment status eudr_non_compliant.';
comment on column bi_suppliers.plots_status_other is 'Plots with no risk assessment status or one outside the five known.';
comment on column bi_suppliers.plots_analysis_succeeded is 'Plots whose most recent analysis succeeded.';
comment on column bi_suppliers.plots_analysis_in_progress is 'Plots whose most recent analysis is pending, not_started or started.';
comment on column bi_suppliers.plots_analysis_failed is 'Plots whose most recent analysis failed.';
comment on column bi_suppliers.plots_analysis_other is 'Plots whose most recent analysis has no status or one outside the known.';
comment on column bi_suppliers.plots_not_analysed is 'Plots without any analysis.';
comment on column bi_suppliers.plots_with_precision is 'Plots with a PRECISION analysis.';
comment on column bi_suppliers.max_risk_of_deforestation is 'Highest risk of deforestation (0 to 1) among the plots'' most recent analyses.';
comment on column bi_suppliers.deforested_area_m2 is 'Deforested area (m²) of the plots'' most recent analyses, added up.';
comment on column bi_suppliers.last_analysed_at is 'Latest analysis time among the plots'' most recent analyses.';
comment on column bi_suppliers.invalid_geometries is 'Plots whose polygon is flagged invalid (they keep their area).';
comment on column bi_suppliers.last_seen_at is 'When a refresh last read this supplier completely (sync_last_seen).';

create view bi_risk_overview as
with cells as (
  select p.plot_id, p.area_ha, p.flagged, p.country_code, p.is_own, l.supplier_business_id, c.commodity
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
  coalesce(sum(w.weight * w.area_ha), 0) as hectares_allocated
from weighted w
left join businesses b on b.id = w.supplier_business_id
group by w.supplier_business_id, b.name, w.commodity, w.country_code, (w.supplier_business_id is null and w.is_own);
comment on view bi_risk_overview is 'One row per supplier, commodity and plot country: plots, hectares, flagged plots and share flagged. Rows overlap: a plot shared by two suppliers counts under each, a plot with two commodities under each, so plots, hectares and flagged_plots must not be summed across rows (use bi_current_plots, bi_suppliers or bi_warehouse_totals); plots_allocated and hectares_allocated split each plot equally among its rows and may be summed.';
comment on column bi_risk_overview.supplier_business_id is 'The direct supplier through which the plots are reached; null for plots reached through none (own plots).';
comment on column bi_risk_overview.supplier_name is 'The supplier''s name; (own plots) or (no supplier) when supplier_business_id is null.';
comment on column bi_risk_overview.commodity is 'One commodity of the plots; null for plots without commodities.';
comment on column bi_risk_overview.country_code is 'Country of the plots.';
comment on column bi_risk_overview.plots is 'Distinct plots in this row. Not summable across rows.';
comment on column bi_risk_overview.hectares is 'Hectares of those plots. Not summable across rows.';
comment on column bi_risk_overview.flagged_plots is 'Of plots, those flagged (bi_current_plots.flagged). Not summable across rows.';
comment on column bi_risk_overview.flagged_share is 'flagged_plots / plots, 0 to 1.';
comment on column bi_risk_overview.plots_allocated is 'Plots with each plot divided among its rows (suppliers × commodities): summable, adds up to the current plots.';
comment on column bi_risk_overview.hectares_allocated is 'Hectares divided the same way: summable, adds up to the current hectares.';

create view bi_warehouse_totals as
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
from bi_current_plots p;
comment on view bi_warehouse_totals is 'One row: the warehouse''s totals, each plot counted once: what the allocated columns of bi_suppliers and bi_risk_overview add up to, and what any breakdown is checked against.';
comment on column bi_warehouse_totals.plots is 'Current plots.';
comment on column bi_warehouse_totals.hectares is 'Their hectares.';
comment on column bi_warehouse_totals.plots_without_area is 'Current plots without an area (no geometry, or none with positions).';
comment on column bi_warehouse_totals.own_plots is 'Plots of the calling business itself.';
comment on column bi_warehouse_totals.supplier_plots is 'Plots reached through at least one supplier (what bi_suppliers.plots_allocated adds up to).';
comment on column bi_warehouse_totals.shared_plots is 'Plots reached through two suppliers or more.';
comment on column bi_warehouse_totals.flagged_plots is 'Flagged plots (bi_current_plots.flagged).';
comment on column bi_warehouse_totals.flagged_hectares is 'Their hectares.';
comment on column bi_warehouse_totals.invalid_geometries is 'Plots whose polygon is flagged invalid.';
comment on column bi_warehouse_totals.suppliers is 'Direct suppliers (rows of bi_suppliers).';
comment on column bi_warehouse_totals.plots_announced is 'Plots the supplier connections announce, added up (the service''s count: a plot reached through two suppliers counts for each).';

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
  extract(epoch from (now() - (select max(finished_at) from sync_runs s where s.status = 'succeeded')))::numeric(12, 0) as seconds_since_last_success,
  r.deletions_confirmed,
  r.deletions_deferred
from sync_runs r
left join (
  select run_id, sum(inserted) as inserted, sum(updated) as updated, sum(unchanged) as unchanged, sum(deleted) as deleted
  from sync_run_counts group by run_id
) c on c.run_id = r.id;
comment on view bi_sync_health is 'One row per refresh: outcome, duration, volume, requests, retries, 429s, rows written, record issues, deletions, and the age of the last successful refresh. Counts are per run and may be summed across runs; seconds_since_last_success is the same on every row.';
comment on column bi_sync_health.run_id is 'The refresh (sync_runs.id).';
comment on column bi_sync_health.kind is 'refresh.';
comment on column bi_sync_health.status is 'running, succeeded, partial (some suppliers failed; they were not swept) or failed.';
comment on column bi_sync_health.started_at is 'When the refresh started.';
comment on column bi_sync_health.finished_at is 'When it finished; null while running.';
comment on column bi_sync_health.seconds is 'Duration so far, in seconds.';
comment on column bi_sync_health.suppliers_total is 'Suppliers listed at the start.';
comment on column bi_sync_health.suppliers_done is 'Suppliers read completely.';
comment on column bi_sync_health.suppliers_failed is 'Suppliers whose read failed.';
comment on column bi_sync_health.pages is 'Pages of plots read.';
comment on column bi_sync_health.plots_seen is 'Plots read (a plot reached through two suppliers is read twice).';
comment on column bi_sync_health.requests is 'Requests to the service, retries included.';
comment on column bi_sync_health.retries is 'Requests repeated after a 429, 5xx or network error.';
comment on column bi_sync_health.rate_limited is 'Responses 429 (rate limited).';
comment on column bi_sync_health.rows_inserted is 'Rows inserted, all tables together (sync_run_counts).';
comment on column bi_sync_health.rows_updated is 'Rows rewritten because they changed.';
comment on column bi_sync_health.rows_unchanged is 'Rows seen and left as they were.';
comment on column bi_sync_health.rows_deleted is 'Rows soft-deleted.';
comment on column bi_sync_health.record_issues is 'Records the service sent that could not be stored as sent (sync_issues).';
comment on column bi_sync_health.error is 'Why the refresh failed or was partial.';
comment on column bi_sync_health.seconds_since_last_success is 'Seconds since the last successful refresh finished (the same on every row).';
comment on column bi_sync_health.deletions_confirmed is 'Rows soft-deleted because they were proven gone at the source.';
comment on column bi_sync_health.deletions_deferred is 'Plot links missed but not proven gone: kept live, settled by the next refresh.';

create view bi_webhook_health as
select w.id as webhook_id, w.name as webhook_name, w.managed, w.url, w.is_active,
       s.successful_messages, s.failed_messages,
       case when coalesce(s.successful_messages, 0) + coalesce(s.failed_messages, 0) = 0 then null
            else round(s.successful_messages::numeric / (s.successful_messages + s.failed_messages), 4) end as success_rate,
       a.last_attempt_at,
       normalise_status(a.last_attempt_status) as last_attempt_status,
       a.last_attempt_status as last_attempt_status_raw,
       a.last_failure_at, a.failures_24h,
       (normalise_status(a.last_attempt_status) <> 'success') is true as failing
from webhooks w
left join lateral (
  select successful_messages, failed_messages from webhook_stats x where x.webhook_id = w.id order by taken_at desc limit 1
) s on true
left join lateral (
  select max(attempted_at) as last_attempt_at,
         (array_agg(status order by attempted_at desc))[1] as last_attempt_status,
         max(attempted_at) filter (where normalise_status(status) <> 'success') as last_failure_at,
         count(*) filter (where normalise_status(status) <> 'success' and attempted_at > now() - interval '24 hours') as failures_24h
  from webhook_attempts y where y.webhook_id = w.id
) a on true
where w.deleted_at is null;
comment on view bi_webhook_health is 'One row per webhook the service lists: success rate (latest stats), last attempt and failure, failures in the last 24 hours, whether it is failing now. Message counts may be summed across webhooks.';
comment on column bi_webhook_health.webhook_id is 'The webhook (webhooks.id).';
comment on column bi_webhook_health.webhook_name is 'Its name in DDSYNC_WEBHOOKS when ddsync manages it; null otherwise.';
comment on column bi_webhook_health.managed is 'ddsync keeps it as DDSYNC_WEBHOOKS says.';
comment on column bi_webhook_health.url is 'Where the service delivers.';
comment on column bi_webhook_health.is_active is 'Active at the service.';
comment on column bi_webhook_health.successful_messages is 'Messages delivered, from the latest stats snapshot.';
comment on column bi_webhook_health.failed_messages is 'Messages that failed, from the latest stats snapshot.';
comment on column bi_webhook_health.success_rate is 'successful / (successful + failed), 0 to 1; null before any message.';
comment on column bi_webhook_health.last_attempt_at is 'When the latest delivery attempt was made.';
comment on column bi_webhook_health.last_attempt_status is 'Its status, normalised: success (other values as the service sends them, normalised).';
comment on column bi_webhook_health.last_attempt_status_raw is 'Its status as the service sent it.';
comment on column bi_webhook_health.last_failure_at is 'When the latest attempt that did not succeed was made.';
comment on column bi_webhook_health.failures_24h is 'Attempts that did not succeed in the last 24 hours.';
comment on column bi_webhook_health.failing is 'The latest attempt did not succeed.';

create view bi_transaction_pipeline as
select t.batch_id, t.state, normalise_status(t.status) as status, t.status as status_raw, count(*) as transactions,
       min(t.updated_at) as oldest_update, max(t.updated_at) as latest_update
from transactions t
group by t.batch_id, t.state, t.status;
comment on view bi_transaction_pipeline is 'One row per batch, ddsync state and service status: how many transactions stand there. Each transaction is in one row: transactions may be summed.';
comment on column bi_transaction_pipeline.batch_id is 'The submission batch (submission_batches.id).';
comment on column bi_transaction_pipeline.state is 'ddsync''s state: pending, created, submitted, available, error, withdrawn, failed, timed_out, cancelled.';
comment on column bi_transaction_pipeline.status is 'The service''s status, normalised: draft, to_submit, submitted, available, error, withdrawn; other values kept; null before the transaction was created.';
comment on column bi_transaction_pipeline.status_raw is 'The service''s status as sent.';
comment on column bi_transaction_pipeline.transactions is 'Transactions in this batch, state and status.';
comment on column bi_transaction_pipeline.oldest_update is 'The longest-unchanged transaction''s last update.';
comment on column bi_transaction_pipeline.latest_update is 'The latest update.';

create view bi_transaction_latency as
select t.batch_id,
       count(*) as available,
       round(percentile_cont(0.5) within group (order by extract(epoch from (t.validated_at - t.submitted_at)))::numeric, 1) as median_seconds_submit_to_available,
       round(percentile_cont(0.95) within group (order by extract(epoch from (t.validated_at - t.submitted_at)))::numeric, 1) as p95_seconds_submit_to_available,
       grouping(t.batch_id) = 1 as is_overall
from transactions t
where t.state = 'available' and t.submitted_at is not null and t.validated_at is not null
group by rollup (t.batch_id);
comment on view bi_transaction_latency is 'One row per batch with AVAILABLE transactions, plus one over all batches (is_overall): time from submit to AVAILABLE, median and p95. Do not sum the rows: the overall row repeats the batches.';
comment on column bi_transaction_latency.batch_id is 'The submission batch; null on the overall row.';
comment on column bi_transaction_latency.available is 'Transactions that reached AVAILABLE with both times known.';
comment on column bi_transaction_latency.median_seconds_submit_to_available is 'Median seconds from submit to AVAILABLE.';
comment on column bi_transaction_latency.p95_seconds_submit_to_available is '95th percentile of the same.';
comment on column bi_transaction_latency.is_overall is 'The row over all batches.';

create view bi_transaction_errors as
select t.state, coalesce(t.error_reason, t.last_error, '(no reason given)') as reason, count(*) as transactions, max(t.updated_at) as latest
from transactions t
where t.state in ('error', 'failed', 'timed_out', 'withdrawn')
group by t.state, coalesce(t.error_reason, t.last_error, '(no reason given)');
comment on view bi_transaction_errors is 'One row per outcome and reason of transactions that ended without a DDS reference. Each transaction is in one row: transactions may be summed.';
comment on column bi_transaction_errors.state is 'error (rejected by the EU system), failed (refused by the service), timed_out or withdrawn.';
comment on column bi_transaction_errors.reason is 'The service''s reason, else the last error ddsync met.';
comment on column bi_transaction_errors.transactions is 'Transactions with this outcome and reason.';
comment on column bi_transaction_errors.latest is 'The latest of their updates.';

comment on view bi_pdf_archive is 'One row: survey-response PDFs per state, the oldest still waiting for COMPLETED, the next attempt, archived bytes (per survey response) and stored files and bytes (identical PDFs stored once).';
comment on column bi_pdf_archive.queued is 'Added, not tried yet.';
comment on column bi_pdf_archive.waiting is 'Survey response not COMPLETED yet (422): tried again later.';
comment on column bi_pdf_archive.retrying is 'Last attempt failed (5xx, network, not a PDF): tried again later.';
comment on column bi_pdf_archive.archived is 'Stored.';
comment on column bi_pdf_archive.gone is 'The survey response does not exist (404): not tried again.';
comment on column bi_pdf_archive.total is 'All survey responses in the archive queue.';
comment on column bi_pdf_archive.oldest_waiting_since is 'When the longest-waiting one was queued.';
comment on column bi_pdf_archive.next_attempt_at is 'When the next due one will be tried.';
comment on column bi_pdf_archive.archived_bytes is 'Bytes of the archived PDFs, per survey response.';
comment on column bi_pdf_archive.stored_files is 'Files stored (identical PDFs once).';
comment on column bi_pdf_archive.stored_bytes is 'Bytes stored (identical PDFs once).';
comment on column bi_pdf_archive.last_archived_at is 'When the latest one was archived.';

-- ── Tables and their columns ────────────────────────────────────────────────────────────────────
comment on table kysely_migration is 'The migrations applied (sql/migrations), kept by the migrator.';
comment on column kysely_migration.name is 'Migration file name without .sql.';
comment on column kysely_migration.timestamp is 'When it was applied.';
comment on table kysely_migration_lock is 'The migrator''s lock row.';
comment on column kysely_migration_lock.id is 'The lock''s name.';
comment on column kysely_migration_lock.is_locked is 'Whether a migrator holds it.';

comment on column sync_runs.id is 'The refresh''s id (also in its Temporal workflow''s input).';
comment on column sync_runs.kind is 'refresh.';
comment on column sync_runs.workflow_id is 'The Temporal workflow running it.';
comment on column sync_runs.status is 'running, succeeded, partial (some suppliers failed; they were not swept) or failed.';
comment on column sync_runs.started_at is 'When it started.';
comment on column sync_runs.finished_at is 'When it finished; null while running.';
comment on column sync_runs.suppliers_total is 'Suppliers listed at the start.';
comment on column sync_runs.suppliers_done is 'Suppliers read completely.';
comment on column sync_runs.suppliers_failed is 'Suppliers whose read failed.';
comment on column sync_runs.plots_expected is 'Sum of the connections'' plotsCount when the suppliers were listed: what progress is measured against.';
comment on column sync_runs.pages is 'Pages of plots read.';
comment on column sync_runs.plots_seen is 'Plots read (a plot reached through two suppliers is read twice).';
comment on column sync_runs.requests is 'Requests to the service, retries included.';
comment on column sync_runs.retries is 'Requests repeated after a 429, 5xx or network error.';
comment on column sync_runs.rate_limited is 'Responses 429.';
comment on column sync_runs.error is 'Why it failed or was partial.';

comment on column sync_run_counts.run_id is 'The refresh (sync_runs.id).';
comment on column sync_run_counts.table_name is 'The table written.';
comment on column sync_run_counts.inserted is 'Rows inserted.';
comment on column sync_run_counts.updated is 'Rows rewritten because they changed.';
comment on column sync_run_counts.unchanged is 'Rows seen and left as they were.';
comment on column sync_run_counts.deleted is 'Rows soft-deleted.';

comment on column sync_run_scopes.run_id is 'The refresh (sync_runs.id).';
comment on column sync_run_scopes.scope is 'The part: a supplier''s business id, own-plots, network or invitations.';
comment on column sync_run_scopes.kind is 'supplier, own_plots, network or invitations.';
comment on column sync_run_scopes.supplier_id is 'The supplier''s business id when kind is supplier (named before the convention: a business as supplier, supplier_business_id in views).';
comment on column sync_run_scopes.status is 'pending, running, succeeded or failed; only a part that succeeded is swept.';
comment on column sync_run_scopes.started_at is 'When its read started.';
comment on column sync_run_scopes.finished_at is 'When its read finished.';
comment on column sync_run_scopes.plots_expected is 'Plots the connection announced (plotsCount) for a supplier.';
comment on column sync_run_scopes.pages is 'Pages read.';
comment on column sync_run_scopes.plots_seen is 'Plots read.';
comment on column sync_run_scopes.requests is 'Requests, retries included.';
comment on column sync_run_scopes.retries is 'Requests repeated after a 429, 5xx or network error.';
comment on column sync_run_scopes.rate_limited is 'Responses 429.';
comment on column sync_run_scopes.error is 'Why its read failed.';

comment on table sync_pages is 'Bookkeeping of a running refresh, not for analysts: one row per page read, with the ids it saw (what the sweep keeps), its counts and requests; removed when the run finishes.';
comment on column sync_pages.run_id is 'The refresh (sync_runs.id).';
comment on column sync_pages.scope is 'The part read (sync_run_scopes.scope).';
comment on column sync_pages.entity is 'The table whose ids the page saw: plots, businesses, business_connections or business_invitations.';
comment on column sync_pages.page is 'Page number, from 1.';
comment on column sync_pages.ids is 'Ids of the valid records of the page.';
comment on column sync_pages.received is 'Records the service sent, valid or not.';
comment on column sync_pages.counts is 'Rows inserted / updated / unchanged / deleted per table by this page (JSON).';
comment on column sync_pages.reused is 'The page''s text was the same as at the last complete read (source_pages): not parsed, not written.';
comment on column sync_pages.requests is 'Requests for this page, retries included.';
comment on column sync_pages.retries is 'Requests repeated.';
comment on column sync_pages.rate_limited is 'Responses 429.';
comment on column sync_pages.written_at is 'When the page was recorded.';
comment on column sync_pages.content_hash is 'Hash of the page''s text as this run read it, compared with a verification read of the same page (0009).';

comment on table source_pages is 'Bookkeeping of the refresh, not for analysts: the last complete read of each page of each supplier (hash of its text, ids, records), so an identical page is neither parsed nor written again.';
comment on column source_pages.scope is 'The supplier''s business id.';
comment on column source_pages.page is 'Page number, from 1.';
comment on column source_pages.content_hash is 'Hash of the page''s text (with the mapping version).';
comment on column source_pages.ids is 'Plot ids of the page.';
comment on column source_pages.received is 'Records the page held.';
comment on column source_pages.read_at is 'When it was read.';

comment on table sync_issues is 'Records the service sent that could not be stored as sent: skipped (left out) or nulled (stored with that value null), with the field and the rule.';
comment on column sync_issues.run_id is 'The refresh (sync_runs.id).';
comment on column sync_issues.scope is 'The part read (sync_run_scopes.scope).';
comment on column sync_issues.entity is 'What the record was: plots, businesses, business_connections, business_invitations.';
comment on column sync_issues.record_id is 'The record''s id, when it had one (an id of the table named by entity).';
comment on column sync_issues.location is 'Where the record was, e.g. page 3 #17.';
comment on column sync_issues.field is 'The field at fault, e.g. productionDateStart.';
comment on column sync_issues.rule is 'The rule it broke, e.g. expected a date (YYYY-MM-DD).';
comment on column sync_issues.action is 'skipped (the record was left out) or nulled (stored, that value null).';
comment on column sync_issues.seen_at is 'When it was met.';

comment on column businesses.id is 'The business''s id at the service.';
comment on column businesses.name is 'Name.';
comment on column businesses.email is 'E-mail.';
comment on column businesses.username is 'User name at the service.';
comment on column businesses.address_street is 'Address: street.';
comment on column businesses.address_zip is 'Address: zip code.';
comment on column businesses.address_postcode is 'Address: postcode.';
comment on column businesses.address_area is 'Address: area.';
comment on column businesses.address_city is 'Address: city.';
comment on column businesses.address_country_code is 'Address: country code.';
comment on column businesses.address_country is 'Address: country.';
comment on column businesses.address_line1 is 'Address: line 1.';
comment on column businesses.address_line2 is 'Address: line 2.';
comment on column businesses.eori is 'EORI number.';
comment on column businesses.vat is 'VAT number.';
comment on column businesses.system_environment is 'The business''s system environment at the service, e.g. ACCEPTANCE.';
comment on column businesses.initial_locale is 'Locale tag.';
comment on column businesses.units is 'Units (metric).';
comment on column businesses.created_at is 'When it was created at the service.';
comment on column businesses.updated_at is 'When it was last updated at the service.';
comment on column businesses.is_caller is 'The calling business (whose credentials ddsync uses).';
comment on column businesses.content_hash is 'Hash of the stored content: a refresh rewrites the row only when it differs.';
comment on column businesses.first_seen_at is 'When a refresh first stored it.';
comment on column businesses.changed_at is 'When a refresh last stored a change.';
comment on column businesses.deleted_at is 'Soft delete: when a complete refresh no longer saw it; cleared if it comes back.';

comment on table business_connections is 'Connections of the calling business: one row per connection, to a supplier or a buyer (role).';
comment on column business_connections.id is 'The connection''s id at the service.';
comment on column business_connections.source_business_id is 'The source side''s business id.';
comment on column business_connections.target_business_id is 'The target side''s business id.';
comment on column business_connections.partner_business_id is 'The side that is not the calling business: the supplier or the buyer (role).';
comment on column business_connections.role is 'supplier or buyer: what the partner is to the calling business.';
comment on column business_connections.plots_count is 'Plots the service counts for the connection (plotsCount).';
comment on column business_connections.plots_commodities is 'Commodities of those plots (plotsCommodities).';
comment on column business_connections.custom_data is 'customData as sent (JSON).';
comment on column business_connections.created_at is 'When the connection was created at the service.';
comment on column business_connections.updated_at is 'When it was last updated at the service.';
comment on column business_connections.content_hash is 'Hash of the stored content: a refresh rewrites the row only when it differs.';
comment on column business_connections.first_seen_at is 'When a refresh first stored it.';
comment on column business_connections.changed_at is 'When a refresh last stored a change.';
comment on column business_connections.deleted_at is 'Soft delete: when a complete refresh no longer saw it; cleared if it comes back.';

comment on column plots.id is 'The plot''s id at the service.';
comment on column plots.owner_id is 'ownerId as sent: the business that owns the plot (named as the service names it; owner_business_id in views).';
comment on column plots.name is 'Name.';
comment on column plots.description is 'Description.';
comment on column plots.country_code is 'Country code as sent.';
comment on column plots.commodities is 'Commodities as sent (cattle, cocoa, coffee, oil palm, rubber, soya, wood).';
comment on column plots.area_ha is 'Area of the polygon in hectares, computed with @turf/area. A flagged (invalid) shape keeps an area: each ring measured as drawn, cut where it crosses itself, a point counted once if the ring winds round it (README, "The warehouse"); outer ring minus holes.';
comment on column plots.bbox_min_lon is 'Bounding box of the polygon: westernmost longitude.';
comment on column plots.bbox_min_lat is 'Bounding box: southernmost latitude.';
comment on column plots.bbox_max_lon is 'Bounding box: easternmost longitude.';
comment on column plots.bbox_max_lat is 'Bounding box: northernmost latitude.';
comment on column plots.geometry_issue is 'What is wrong with the polygon (e.g. self-intersection at [lon, lat], ring 0 is not closed); null when valid.';
comment on column plots.risk_assessment_status is 'riskAssessmentStatus as sent (NEW, UNDER_REVIEW, IN_RISK_MITIGATION, EUDR_COMPLIANT, EUDR_NON_COMPLIANT, or any other value); views normalise it.';
comment on column plots.risk_level is 'riskLevel as sent (high, medium, low, none; null while the analysis is pending); views normalise it.';
comment on column plots.production_date_start is 'Start of production (null when unset or not a date, see sync_issues).';
comment on column plots.production_date_end is 'End of production.';
comment on column plots.filename is 'Name of the file the plot was uploaded from.';
comment on column plots.custom_data is 'customData as sent (JSON).';
comment on column plots.most_recent_analysis_id is 'The most recent analysis (analyses.id), either type.';
comment on column plots.euforobs_analysis_id is 'The latest EUFOROBS analysis (analyses.id).';
comment on column plots.precision_analysis_id is 'The latest PRECISION analysis (analyses.id).';
comment on column plots.is_own is 'A plot of the calling business itself (GET /plots).';
comment on column plots.created_at is 'When it was created at the service.';
comment on column plots.updated_at is 'When it was last updated at the service.';
comment on column plots.content_hash is 'Fingerprint of the plot as sent: a refresh rewrites the plot only when it differs (empty: rewrite at the next refresh).';
comment on column plots.history_hash is 'Hash of the tracked attributes: a change opens a plot_history row.';
comment on column plots.first_seen_at is 'When a refresh first stored it.';
comment on column plots.changed_at is 'When a refresh last stored a change.';
comment on column plots.deleted_at is 'Soft delete: when a complete refresh proved it gone (no supplier reaches it); cleared if it comes back.';

comment on table plot_suppliers is 'One row per (plot, direct supplier) link: a plot reached through two suppliers is one plot and two links. Own plots have none.';
comment on column plot_suppliers.plot_id is 'The plot (plots.id).';
comment on column plot_suppliers.supplier_id is 'The direct supplier''s business id (named before the convention: a business as supplier, supplier_business_id in views).';
comment on column plot_suppliers.first_seen_at is 'When a refresh first linked them.';
comment on column plot_suppliers.changed_at is 'When the link last changed (came back, was deleted).';
comment on column plot_suppliers.deleted_at is 'Soft delete: when a complete read of the supplier proved the plot no longer reached through it.';

comment on column plot_species.plot_id is 'The plot (plots.id).';
comment on column plot_species.position is 'Position in the plot''s species list, from 0.';
comment on column plot_species.scientific_name is 'Scientific name.';
comment on column plot_species.common_name is 'Common name.';

comment on column analyses.id is 'The analysis''s id at the service.';
comment on column analyses.plot_id is 'The plot it analyses (plots.id).';
comment on column analyses.type is 'EUFOROBS or PRECISION (as sent).';
comment on column analyses.status is 'Status as sent (PENDING, not started, started, succeeded, failed, or any other value); views normalise it.';
comment on column analyses.name is 'Name.';
comment on column analyses.version is 'Version.';
comment on column analyses.analysed_at is 'When it was analysed.';
comment on column analyses.deforested_area_m2 is 'Deforested area, m².';
comment on column analyses.deforested_geometry is 'Deforested area as GeoJSON.';
comment on column analyses.risk_of_deforestation is 'Risk of deforestation, 0 to 1.';
comment on column analyses.custom_data is 'customData as sent (JSON).';
comment on column analyses.created_at is 'When it was created at the service.';
comment on column analyses.updated_at is 'When it was last updated at the service.';
comment on column analyses.is_most_recent is 'The plot''s most recent analysis.';
comment on column analyses.is_most_recent_of_type is 'The plot''s latest analysis of its type.';
comment on column analyses.content_hash is 'Hash of the stored content: rewritten only when it differs.';
comment on column analyses.first_seen_at is 'When a refresh first stored it.';
comment on column analyses.changed_at is 'When a refresh last stored a change.';
comment on column analyses.deleted_at is 'Soft delete: set with its plot''s.';

comment on column plot_history.plot_id is 'The plot (plots.id).';
comment on column plot_history.valid_from is 'When this version was first seen.';
comment on column plot_history.valid_to is 'When it was replaced or the plot removed; null while current.';
comment on column plot_history.is_current is 'The plot''s current version.';
comment on column plot_history.risk_assessment_status is 'Risk assessment status as sent.';
comment on column plot_history.risk_level is 'Risk level as sent.';
comment on column plot_history.geometry_hash is 'Hash of the polygon: a different hash is a different polygon.';
comment on column plot_history.commodities is 'Commodities.';
comment on column plot_history.most_recent_analysis_id is 'Most recent analysis (analyses.id).';
comment on column plot_history.euforobs_analysis_id is 'Latest EUFOROBS analysis (analyses.id).';
comment on column plot_history.precision_analysis_id is 'Latest PRECISION analysis (analyses.id).';
comment on column plot_history.history_hash is 'Hash of the tracked attributes of this version.';
comment on column plot_history.run_id is 'The refresh that opened it (sync_runs.id).';

comment on column business_invitations.id is 'The invitation''s id at the service.';
comment on column business_invitations.status is 'Status as sent (PENDING, ACCEPTED, REJECTED, CANCELLED).';
comment on column business_invitations.email is 'E-mail of the invited user.';
comment on column business_invitations.sender_business_id is 'The business that sent it.';
comment on column business_invitations.business_id is 'The business it invites to connect with (the invitation''s business).';
comment on column business_invitations.source_is_invitee is 'Whether the invited business shares data (true) or receives it.';
comment on column business_invitations.custom_data is 'customData as sent (JSON).';
comment on column business_invitations.created_at is 'When it was created at the service.';
comment on column business_invitations.updated_at is 'When it was last updated at the service.';
comment on column business_invitations.content_hash is 'Hash of the stored content: rewritten only when it differs.';
comment on column business_invitations.first_seen_at is 'When a refresh first stored it.';
comment on column business_invitations.changed_at is 'When a refresh last stored a change.';
comment on column business_invitations.deleted_at is 'Soft delete: when a complete refresh no longer saw it.';

comment on column submission_batches.id is 'The batch''s id.';
comment on column submission_batches.source is 'The file handed to ddsync submit.';
comment on column submission_batches.created_at is 'When it was handed over.';
comment on column submission_batches.rows is 'Rows in the file.';
comment on column submission_batches.accepted is 'Rows accepted (each becomes a transaction).';
comment on column submission_batches.invalid is 'Rows refused, with their errors (transaction_requests).';
comment on column submission_batches.duplicates is 'Rows whose key was submitted earlier.';
comment on column submission_batches.workflow_id is 'The Temporal workflow submitting it.';
comment on column submission_batches.status is 'open (transactions still being created, submitted or followed), done or cancelled.';
comment on column submission_batches.finished_at is 'When every transaction ended, or the batch was cancelled.';

comment on column transaction_requests.id is 'The row''s id.';
comment on column transaction_requests.batch_id is 'The batch (submission_batches.id).';
comment on column transaction_requests.line is 'Line of an NDJSON file, or position (from 1) in a JSON array.';
comment on column transaction_requests.key is 'The row''s key (the transaction''s customId); unique among accepted rows.';
comment on column transaction_requests.status is 'accepted, invalid or duplicate.';
comment on column transaction_requests.payload is 'The create body sent (accepted rows).';
comment on column transaction_requests.errors is '[{field, rule}] of an invalid row.';
comment on column transaction_requests.earlier_batch_id is 'For a duplicate: the batch that submitted the key first.';
comment on column transaction_requests.create_attempts is 'Creates sent for this key.';
comment on column transaction_requests.created_at is 'When the row was read.';

comment on column transactions.key is 'The request key (customId at the service): this row''s key. Named key, not id, because id is the service''s id, unknown until created.';
comment on column transactions.batch_id is 'The batch (submission_batches.id).';
comment on column transactions.id is 'The transaction''s id at the service; null until created.';
comment on column transactions.activity_type is 'IMPORT, EXPORT, TRADE or DOMESTIC.';
comment on column transactions.country_of_activity is 'Country of the activity (ISO 3166 alpha-2).';
comment on column transactions.legal_entity_id is 'The legal entity that submits, when given.';
comment on column transactions.state is 'ddsync''s state: pending, created, submitted, available, error, withdrawn, failed (refused by the service), timed_out, cancelled.';
comment on column transactions.status is 'The service''s status as last seen (DRAFT, TO_SUBMIT, SUBMITTED, AVAILABLE, ERROR, WITHDRAWN, or any other); views normalise it.';
comment on column transactions.verification_number is 'Verification number assigned with the DDS reference, e.g. 4NAB3QYM.';
comment on column transactions.error_reason is 'Why the EU system rejected it (ERROR).';
comment on column transactions.last_error is 'The last error ddsync met for it.';
comment on column transactions.created_at is 'When it was created at the service.';
comment on column transactions.submitted_at is 'When it was submitted.';
comment on column transactions.validated_at is 'When it was seen AVAILABLE.';
comment on column transactions.last_polled_at is 'When its status was last read.';
comment on column transactions.updated_at is 'When this row last changed.';

comment on table transaction_components is 'The components of each transaction, as sent.';
comment on column transaction_components.transaction_key is 'The transaction (transactions.key).';
comment on column transaction_components.position is 'Position in the transaction, from 0.';
comment on column transaction_components.kind is 'supplier (goods of a supplier''s plots) or dds_reference (goods submitted before).';
comment on column transaction_components.hsn is 'HS code, digits.';
comment on column transaction_components.quantity is 'Quantity.';
comment on column transaction_components.unit is 'Unit: LTR, MTR, MTRSQR, MTRCUBE, KGM, TNE, PCS, PR, SET or PKG.';
comment on column transaction_components.description is 'Description.';
comment on column transaction_components.supplier_business_ids is 'The suppliers'' business ids (kind supplier).';
comment on column transaction_components.plot_ids is 'The plots (plots.id) named; null for all plots of the suppliers.';
comment on column transaction_components.dds_references is '[{id, verificationNumber}] (kind dds_reference).';

comment on table transaction_status_events is 'Every status of a transaction observed, once, with when and how it was seen.';
comment on column transaction_status_events.transaction_key is 'The transaction (transactions.key).';
comment on column transaction_status_events.status is 'The service''s status as sent.';
comment on column transaction_status_events.seen_at is 'When ddsync first saw it.';
comment on column transaction_status_events.source is 'How: create, submit, poll or webhook.';

comment on column webhooks.id is 'The webhook''s id at the service.';
comment on column webhooks.name is 'Its name in DDSYNC_WEBHOOKS when ddsync manages it (its description carries [ddsync:<name>]); null otherwise.';
comment on column webhooks.managed is 'ddsync keeps it as DDSYNC_WEBHOOKS says; others are never touched.';
comment on column webhooks.url is 'Where the service delivers.';
comment on column webhooks.description is 'Description.';
comment on column webhooks.events is 'Event kinds it receives.';
comment on column webhooks.is_active is 'Active at the service.';
comment on column webhooks.created_at is 'When it was created at the service.';
comment on column webhooks.updated_at is 'When it was last updated at the service.';
comment on column webhooks.first_seen_at is 'When ddsync first stored it.';
comment on column webhooks.changed_at is 'When ddsync last stored a change.';
comment on column webhooks.deleted_at is 'When the service no longer listed it.';

comment on table webhook_attempts is 'Every delivery attempt of every webhook, once.';
comment on column webhook_attempts.id is 'The attempt''s id at the service.';
comment on column webhook_attempts.webhook_id is 'The webhook (webhooks.id).';
comment on column webhook_attempts.msg_id is 'The message delivered (webhook_events.msg_id when the receiver got it).';
comment on column webhook_attempts.url is 'Where it was delivered.';
comment on column webhook_attempts.status is 'Status as sent (SUCCESS, or another); views normalise it.';
comment on column webhook_attempts.response_status_code is 'HTTP status the endpoint answered.';
comment on column webhook_attempts.response is 'The endpoint''s answer, at most 2,000 characters.';
comment on column webhook_attempts.attempted_at is 'When it was attempted.';
comment on column webhook_attempts.event_type is 'Event kind of the message, e.g. transaction.updated.';
comment on column webhook_attempts.first_seen_at is 'When ddsync first stored it.';

comment on table webhook_stats is 'A snapshot of each webhook''s counters at each reconciliation.';
comment on column webhook_stats.webhook_id is 'The webhook (webhooks.id).';
comment on column webhook_stats.taken_at is 'When the snapshot was taken.';
comment on column webhook_stats.successful_messages is 'Messages delivered, as the service counts them.';
comment on column webhook_stats.failed_messages is 'Messages that failed, as the service counts them.';

comment on table webhook_events is 'Each message ddsync''s receiver accepted, once (retries of a message id are counted, not stored again), and what was done with it.';
comment on column webhook_events.msg_id is 'The message id (svix-id): this row''s key, named as the service names it.';
comment on column webhook_events.webhook_name is 'The managed webhook it came through (webhooks.name).';
comment on column webhook_events.event_type is 'Event kind, e.g. transaction.updated.';
comment on column webhook_events.payload is 'The message body (JSON).';
comment on column webhook_events.sent_at is 'The message''s own time (svix-timestamp).';
comment on column webhook_events.received_at is 'When the receiver first accepted it.';
comment on column webhook_events.last_received_at is 'When it was last delivered.';
comment on column webhook_events.deliveries is 'Times it was delivered.';
comment on column webhook_events.transaction_id is 'The transaction it names (transactions.id, the service''s id).';
comment on column webhook_events.handling is 'pending, signalled, no_transaction (unknown to ddsync), workflow_closed, ignored (another event kind) or failed.';
comment on column webhook_events.handling_error is 'Why handling failed.';
comment on column webhook_events.handled_at is 'When it was handled.';

comment on column survey_response_pdfs.id is 'The survey response''s id at the service (a UUID, lower case).';
comment on column survey_response_pdfs.state is 'queued, waiting (not COMPLETED yet, 422), retrying (last attempt failed), archived or gone (404).';
comment on column survey_response_pdfs.queued_at is 'When it was added.';
comment on column survey_response_pdfs.next_attempt_at is 'When it is due; while an archive run holds it, the end of that run''s lease; null once archived or gone.';
comment on column survey_response_pdfs.lease_owner is 'The archive run (workflow id) holding it until next_attempt_at.';
comment on column survey_response_pdfs.attempts is 'Archive runs that tried it.';
comment on column survey_response_pdfs.last_attempt_at is 'When it was last tried.';
comment on column survey_response_pdfs.size_bytes is 'Size of the stored PDF.';
comment on column survey_response_pdfs.sha256 is 'SHA-256 of the PDF (hex).';
comment on column survey_response_pdfs.storage_path is 'Path under the archive directory (<sha[0..2]>/<sha>.pdf; identical PDFs share it).';
comment on column survey_response_pdfs.archived_at is 'When it was stored.';
comment on column survey_response_pdfs.last_status is 'HTTP status of the last attempt; null when no response came.';
comment on column survey_response_pdfs.last_error is 'Error of the last attempt.';

grant select on all tables in schema public to ddsync_reader;
