create view bi_warehouse_totals as
select
  p.plots,
  p.hectares,
  p.plots_without_area,
  p.own_plots,
  p.supplier_plots,
  p.shared_plots,
  p.flagged_plots,
  p.flagged_hectares,
  p.invalid_geometries,
  (select count(*) from bi_suppliers) as suppliers,
  (select sum(s.plots_announced) from bi_suppliers s) as plots_announced
-- The plots' totals as of the end of the last refresh (summary_totals, kept by
-- warehouse/analyst-summaries.ts: docs/analyst-summaries.md).
from summary_totals p;

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

grant select on bi_warehouse_totals to ddsync_reader;
