-- The rows as of the end of the last refresh (summary_risk_cells, kept by warehouse/analyst-summaries.ts:
-- docs/analyst-summaries.md): one per supplier, commodity and plot country, each plot's cells sharing it
-- equally (the allocated columns add up to the warehouse's totals); names and the country's risk level
-- in force today joined here. The level follows from country_code (bi_current_plots): it adds no row.
create view bi_risk_overview as
select
  w.supplier_business_id,
  coalesce(b.name, w.supplier_business_id, case when w.all_own then '(own plots)' else '(no supplier)' end) as supplier_name,
  w.commodity,
  w.country_code,
  w.plots,
  w.hectares,
  w.flagged_plots,
  round(w.flagged_plots::numeric / w.plots, 4) as flagged_share,
  w.plots_allocated,
  w.hectares_allocated,
  case when nullif(btrim(w.country_code), '') is null then null else coalesce(cr.level, 'unknown') end as country_risk_level
from summary_risk_cells w
left join businesses b on b.id = w.supplier_business_id
left join bi_country_risk cr on cr.country_code = upper(btrim(w.country_code));

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
