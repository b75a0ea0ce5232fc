create view bi_risk_overview as
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
group by w.supplier_business_id, b.name, w.commodity, w.country_code, w.country_risk_level, (w.supplier_business_id is null and w.is_own);

comment on view bi_risk_overview is 'One row per supplier, commodity and plot country: plots, hectares, flagged plots and share flagged, and the country''s risk level (country_risk_level). Rows overlap: a plot shared by two suppliers counts under each, a plot with two commodities under each, so plots, hectares and flagged_plots must not be summed across rows (use bi_current_plots, bi_suppliers or bi_warehouse_totals); plots_allocated and hectares_allocated split each plot equally among its rows and may be summed.';
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
comment on column bi_risk_overview.country_risk_level is 'Risk level in force today of the plots'' country of production (country_code, trimmed, upper case) under the Commission''s benchmarking (bi_country_risk), as bi_current_plots.country_risk_level: low, standard or high; unknown when the code is not settled by the stored sources (a territory, VA, TW, EH) or is not an ISO code at all; null for plots without a country.';

grant select on bi_risk_overview to ddsync_reader;
