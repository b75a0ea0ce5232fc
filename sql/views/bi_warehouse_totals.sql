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

grant select on bi_warehouse_totals to ddsync_reader;
