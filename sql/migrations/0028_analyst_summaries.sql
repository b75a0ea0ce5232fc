-- The analysts' summary views (bi_suppliers, bi_eudr_supplier_readiness, bi_risk_overview,
-- bi_warehouse_totals) read their per-plot figures from these tables instead of aggregating every
-- current plot at each read (2 s for bi_suppliers at 100,000 plots). They hold what the plots, their
-- live links, their most recent analyses and their current findings add up to, and are rewritten
-- (only the rows whose figures differ) by warehouse/analyst-summaries.ts when a refresh ends, in one
-- transaction, after its sweep and its cross-plot checks, and by the migrator after migrations ran.
-- What changes without a write (business names, connections, when a part was last read, the country
-- risk level in force today) the views still read live. See docs/analyst-summaries.md.
create table summary_suppliers (
  supplier_id text primary key,
  plots bigint,
  plots_deletion_deferred bigint,
  plots_shared bigint,
  plots_allocated double precision,
  hectares double precision,
  hectares_allocated double precision,
  plot_country_codes text[],
  commodities text[],
  flagged_plots bigint,
  flagged_hectares double precision,
  plots_risk_high bigint,
  plots_risk_medium bigint,
  plots_risk_low bigint,
  plots_risk_none bigint,
  plots_risk_not_assessed bigint,
  plots_risk_other bigint,
  plots_status_new bigint,
  plots_status_under_review bigint,
  plots_status_in_risk_mitigation bigint,
  plots_status_eudr_compliant bigint,
  plots_status_eudr_non_compliant bigint,
  plots_status_other bigint,
  plots_analysis_succeeded bigint,
  plots_analysis_in_progress bigint,
  plots_analysis_failed bigint,
  plots_not_analysed bigint,
  plots_analysis_other bigint,
  plots_with_precision bigint,
  max_risk_of_deforestation double precision,
  deforested_area_m2 double precision,
  last_analysed_at timestamptz,
  invalid_geometries bigint,
  plots_ready bigint,
  readiness_hectares double precision,
  hectares_ready double precision,
  top_reasons jsonb
);
comment on table summary_suppliers is 'One row per business with a live link to a plot (plot_suppliers.supplier_id): what its current plots add up to, as of the end of the last refresh (bi_suppliers and bi_eudr_supplier_readiness read it). The plot columns are null for a supplier whose live links reach no current plot. Kept by ddsync (warehouse/analyst-summaries.ts); see docs/analyst-summaries.md.';
comment on column summary_suppliers.supplier_id is 'The supplier''s business id (plot_suppliers.supplier_id).';
comment on column summary_suppliers.plots is 'Current plots reached through it (bi_suppliers.plots).';
comment on column summary_suppliers.plots_deletion_deferred is 'Of those, plots whose link has missing_since (bi_suppliers.plots_deletion_deferred).';
comment on column summary_suppliers.plots_shared is 'Of those, plots reached through another supplier too.';
comment on column summary_suppliers.plots_allocated is 'Plots, each divided by its number of suppliers.';
comment on column summary_suppliers.hectares is 'Hectares of the plots (plots.area_ha).';
comment on column summary_suppliers.hectares_allocated is 'Hectares, each plot''s divided by its number of suppliers.';
comment on column summary_suppliers.plot_country_codes is 'Distinct countries of the plots, sorted.';
comment on column summary_suppliers.commodities is 'Distinct commodities of the plots, sorted; null when none has one.';
comment on column summary_suppliers.flagged_plots is 'Flagged plots (bi_current_plots.flagged).';
comment on column summary_suppliers.flagged_hectares is 'Their hectares.';
comment on column summary_suppliers.plots_risk_high is 'Plots with risk level high (normalised).';
comment on column summary_suppliers.plots_risk_medium is 'Plots with risk level medium.';
comment on column summary_suppliers.plots_risk_low is 'Plots with risk level low.';
comment on column summary_suppliers.plots_risk_none is 'Plots with risk level none.';
comment on column summary_suppliers.plots_risk_not_assessed is 'Plots without a risk level.';
comment on column summary_suppliers.plots_risk_other is 'Plots with another risk level.';
comment on column summary_suppliers.plots_status_new is 'Plots with risk assessment status new.';
comment on column summary_suppliers.plots_status_under_review is 'Plots with risk assessment status under_review.';
comment on column summary_suppliers.plots_status_in_risk_mitigation is 'Plots with risk assessment status in_risk_mitigation.';
comment on column summary_suppliers.plots_status_eudr_compliant is 'Plots with risk assessment status eudr_compliant.';
comment on column summary_suppliers.plots_status_eudr_non_compliant is 'Plots with risk assessment status eudr_non_compliant.';
comment on column summary_suppliers.plots_status_other is 'Plots with no risk assessment status or another one.';
comment on column summary_suppliers.plots_analysis_succeeded is 'Plots whose most recent analysis succeeded.';
comment on column summary_suppliers.plots_analysis_in_progress is 'Plots whose most recent analysis is pending, not_started or started.';
comment on column summary_suppliers.plots_analysis_failed is 'Plots whose most recent analysis failed.';
comment on column summary_suppliers.plots_not_analysed is 'Plots without any analysis.';
comment on column summary_suppliers.plots_analysis_other is 'Plots whose most recent analysis has no status or another one.';
comment on column summary_suppliers.plots_with_precision is 'Plots with a PRECISION analysis.';
comment on column summary_suppliers.max_risk_of_deforestation is 'Highest risk of deforestation of the plots'' most recent analyses.';
comment on column summary_suppliers.deforested_area_m2 is 'Deforested area (m²) of the plots'' most recent analyses, added up.';
comment on column summary_suppliers.last_analysed_at is 'Latest analysis time among the plots'' most recent analyses.';
comment on column summary_suppliers.invalid_geometries is 'Plots whose polygon is flagged invalid.';
comment on column summary_suppliers.plots_ready is 'Plots ready for a due-diligence statement (bi_eudr_plot_readiness.ready).';
comment on column summary_suppliers.readiness_hectares is 'Hectares of the plots as bi_eudr_plot_readiness counts them (a point plot''s reported area).';
comment on column summary_suppliers.hectares_ready is 'Of those, the hectares of the ready plots.';
comment on column summary_suppliers.top_reasons is 'The 5 most frequent blocking codes of the plots as a JSON array of {code, plots}; null when none.';

create table summary_supplier_countries (
  supplier_id text not null,
  country_key text not null,
  plots bigint not null,
  primary key (supplier_id, country_key)
);
comment on table summary_supplier_countries is 'One row per supplier and country of production of its current plots: how many plots, as of the end of the last refresh. The views join the level in force today (bi_country_risk) to it, so a new benchmarking act applies without a refresh. Kept by ddsync (warehouse/analyst-summaries.ts).';
comment on column summary_supplier_countries.supplier_id is 'The supplier''s business id (plot_suppliers.supplier_id).';
comment on column summary_supplier_countries.country_key is 'The plots'' country_code, trimmed and upper case as bi_country_risk is joined; empty for plots without a country.';
comment on column summary_supplier_countries.plots is 'Current plots of the supplier in that country.';

create table summary_risk_cells (
  supplier_business_id text,
  commodity text,
  country_code text,
  own_group boolean not null,
  all_own boolean not null,
  plots bigint not null,
  hectares double precision not null,
  flagged_plots bigint not null,
  plots_allocated double precision not null,
  hectares_allocated double precision not null
);
create unique index summary_risk_cells_key on summary_risk_cells (supplier_business_id, commodity, country_code, own_group) nulls not distinct;
comment on table summary_risk_cells is 'One row per supplier, commodity and plot country of the current plots (a row of bi_risk_overview), as of the end of the last refresh. Kept by ddsync (warehouse/analyst-summaries.ts).';
comment on column summary_risk_cells.supplier_business_id is 'The direct supplier; null for plots reached through none.';
comment on column summary_risk_cells.commodity is 'One commodity of the plots; null for plots without commodities.';
comment on column summary_risk_cells.country_code is 'Country of the plots, as sent.';
comment on column summary_risk_cells.own_group is 'true for the row of own plots reached through no supplier (kept apart from other plots without a supplier).';
comment on column summary_risk_cells.all_own is 'Every plot of the row is an own plot (bi_risk_overview names such a row without supplier (own plots)).';
comment on column summary_risk_cells.plots is 'Distinct plots in the row.';
comment on column summary_risk_cells.hectares is 'Their hectares.';
comment on column summary_risk_cells.flagged_plots is 'Of those, the flagged ones.';
comment on column summary_risk_cells.plots_allocated is 'Plots, each divided among its rows.';
comment on column summary_risk_cells.hectares_allocated is 'Hectares divided the same way.';

create table summary_totals (
  plots bigint not null,
  hectares double precision not null,
  plots_without_area bigint not null,
  own_plots bigint not null,
  supplier_plots bigint not null,
  shared_plots bigint not null,
  flagged_plots bigint not null,
  flagged_hectares double precision not null,
  invalid_geometries bigint not null
);
create unique index summary_totals_one_row on summary_totals ((true));
comment on table summary_totals is 'One row: the current plots'' totals as of the end of the last refresh (bi_warehouse_totals reads it). Kept by ddsync (warehouse/analyst-summaries.ts).';
comment on column summary_totals.plots is 'Current plots.';
comment on column summary_totals.hectares is 'Their hectares.';
comment on column summary_totals.plots_without_area is 'Current plots without an area.';
comment on column summary_totals.own_plots is 'Own plots.';
comment on column summary_totals.supplier_plots is 'Plots reached through at least one supplier.';
comment on column summary_totals.shared_plots is 'Plots reached through two suppliers or more.';
comment on column summary_totals.flagged_plots is 'Flagged plots.';
comment on column summary_totals.flagged_hectares is 'Their hectares.';
comment on column summary_totals.invalid_geometries is 'Plots whose polygon is flagged invalid.';

create table summary_refreshes (
  refreshed_at timestamptz not null,
  run_id uuid,
  rows_written bigint not null,
  seconds double precision not null
);
create unique index summary_refreshes_one_row on summary_refreshes ((true));
comment on table summary_refreshes is 'One row: when the summary tables (summary_*) were last made to agree with the plots, after which refresh, and what it cost. A refresh that changed no plot, link, analysis or finding, after one that left the summaries agreeing, skips them.';
comment on column summary_refreshes.refreshed_at is 'When the summaries were last made to agree with the plots (the transaction''s time).';
comment on column summary_refreshes.run_id is 'The refresh (sync_runs.id) at whose end they were; null when the migrator did it.';
comment on column summary_refreshes.rows_written is 'Summary rows inserted or deleted then (0 when nothing they sum had changed).';
comment on column summary_refreshes.seconds is 'How long computing and writing them took.';
