-- A supplier's country risk: the highest of its plots', unknown ranked above standard and below high
-- (an unknown level could be either). Eligible for simplified due diligence: every plot low.
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
-- The figures of its current plots as of the end of the last refresh (summary_suppliers, kept by
-- warehouse/analyst-summaries.ts: docs/analyst-summaries.md); the country risk levels in force today.
country_risk as (
  select c.supplier_id,
         coalesce(sum(c.plots) filter (where x.level = 'low'), 0)::bigint as plots_country_risk_low,
         coalesce(sum(c.plots) filter (where x.level = 'standard'), 0)::bigint as plots_country_risk_standard,
         coalesce(sum(c.plots) filter (where x.level = 'high'), 0)::bigint as plots_country_risk_high,
         coalesce(sum(c.plots) filter (where x.level is null or x.level not in ('low', 'standard', 'high')), 0)::bigint as plots_country_risk_unknown
  from summary_supplier_countries c
  left join bi_country_risk cr on cr.country_code = c.country_key
  cross join lateral (select case when c.country_key = '' then null else coalesce(cr.level, 'unknown') end as level) x
  group by c.supplier_id
),
figures as (
  select f.*, r.plots_country_risk_low, r.plots_country_risk_standard, r.plots_country_risk_high, r.plots_country_risk_unknown
  from summary_suppliers f
  left join country_risk r on r.supplier_id = f.supplier_id
),
commodities as (
  select f.supplier_id, f.commodities from summary_suppliers f
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
comment on column bi_suppliers.country_risk_level is 'The highest risk level of the countries of production of the supplier''s current plots (bi_current_plots.country_risk_level): high if any plot is high; otherwise unknown if any is unknown or has no country (it could be higher); otherwise standard if any is standard; otherwise low. Null for a supplier without current plots.';
comment on column bi_suppliers.plots_country_risk_low is 'Plots whose country of production is of low risk (bi_current_plots.country_risk_level).';
comment on column bi_suppliers.plots_country_risk_standard is 'Plots whose country of production is of standard risk.';
comment on column bi_suppliers.plots_country_risk_high is 'Plots whose country of production is of high risk.';
comment on column bi_suppliers.plots_country_risk_unknown is 'Plots whose country''s risk is unknown (not settled by the stored sources, or not an ISO code) or that have no country.';
comment on column bi_suppliers.simplified_due_diligence_eligible is 'true when the supplier has current plots and every one lies in a low-risk country (plots_country_risk_low = plots): eligible for simplified due diligence (Article 13 of Regulation (EU) 2023/1115) as far as the countries go, subject to the operator''s own assessment that the risk of circumvention, or of mixing with products of unknown origin or from standard- or high-risk countries, is negligible (Art. 13(1)), and not when it has information of a risk (Art. 13(2)). false when any plot is in a standard-, high- or unknown-risk country or has none; null without current plots.';

grant select on bi_suppliers to ddsync_reader;
