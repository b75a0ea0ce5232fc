-- A making that read a few touched plots counted again every plot of their suppliers and cells (and
-- every plot for the totals): 0.6 s for one plot at 100,000 plots, ten times that at 1,000,000. The
-- totals, the rows of summary_supplier_countries and those of summary_risk_cells are now moved by exact
-- deltas instead: what summary_plot_facts says each touched plot counted before is taken away, what it
-- counts now is added (warehouse/analyst-summaries.ts, docs/analyst-summaries.md).
--
-- A sum of float8 moved by deltas drifts (x + d - d need not be x) and depends on the order of its
-- terms, so each one the views read is kept beside it as numeric, which adds and subtracts exactly in
-- any order: the float8 column is that exact sum cast, made the same way by a making from every plot
-- and by one from deltas. bool_and (all_own) cannot be moved by a delta: the plots that are not own
-- are counted instead. Filled by the migrator's making from every plot, which runs after migrations.
alter table summary_totals
  add column hectares_exact numeric not null default 0,
  add column flagged_hectares_exact numeric not null default 0;
comment on column summary_totals.hectares_exact is 'hectares as an exact sum (of each plot''s area as numeric), moved by deltas; hectares is it cast to float8.';
comment on column summary_totals.flagged_hectares_exact is 'flagged_hectares as an exact sum, moved by deltas; flagged_hectares is it cast to float8.';

alter table summary_risk_cells
  add column not_own_plots bigint not null default 0,
  add column hectares_exact numeric not null default 0,
  add column plots_allocated_exact numeric not null default 0,
  add column hectares_allocated_exact numeric not null default 0;
comment on column summary_risk_cells.not_own_plots is 'Plots of the cell that are not own: all_own is not_own_plots = 0 (a count moves by deltas, a bool_and does not).';
comment on column summary_risk_cells.hectares_exact is 'hectares as an exact sum, moved by deltas; hectares is it cast to float8.';
comment on column summary_risk_cells.plots_allocated_exact is 'plots_allocated as an exact sum, moved by deltas; plots_allocated is it cast to float8.';
comment on column summary_risk_cells.hectares_allocated_exact is 'hectares_allocated as an exact sum, moved by deltas; hectares_allocated is it cast to float8.';

-- summary_suppliers the same way: its counts and exact sums moved by deltas; what is not a sum (the
-- distinct countries and commodities, the top five reasons) made from counts per value, which deltas
-- move (summary_supplier_values); the maxima moved unless the plot holding one is taken away, then
-- counted again for that supplier only.
alter table summary_suppliers
  add column plots_allocated_exact numeric,
  add column hectares_exact numeric,
  add column hectares_allocated_exact numeric,
  add column flagged_hectares_exact numeric,
  add column deforested_area_m2_exact numeric,
  add column readiness_hectares_exact numeric,
  add column hectares_ready_exact numeric;
comment on column summary_suppliers.plots_allocated_exact is 'plots_allocated as an exact sum, moved by deltas; plots_allocated is it cast to float8.';
comment on column summary_suppliers.hectares_exact is 'hectares as an exact sum, moved by deltas; hectares is it cast to float8.';
comment on column summary_suppliers.hectares_allocated_exact is 'hectares_allocated as an exact sum, moved by deltas; hectares_allocated is it cast to float8.';
comment on column summary_suppliers.flagged_hectares_exact is 'flagged_hectares as an exact sum, moved by deltas; flagged_hectares is it cast to float8.';
comment on column summary_suppliers.deforested_area_m2_exact is 'deforested_area_m2 as an exact sum, moved by deltas; deforested_area_m2 is it cast to float8.';
comment on column summary_suppliers.readiness_hectares_exact is 'readiness_hectares as an exact sum, moved by deltas; readiness_hectares is it cast to float8.';
comment on column summary_suppliers.hectares_ready_exact is 'hectares_ready as an exact sum, moved by deltas; hectares_ready is it cast to float8.';

create table summary_supplier_values (
  supplier_id text not null,
  kind text not null check (kind in ('country', 'commodity', 'reason')),
  value text,
  plots bigint not null
);
create unique index summary_supplier_values_key on summary_supplier_values (supplier_id, kind, value) nulls not distinct;
comment on table summary_supplier_values is 'Not for analysts: per supplier, how many of its live links to current plots have each country code (country), list each commodity (commodity, once per place in the list) or give each reason of the top reasons (reason: a blocking code, or not_checked), as the summary tables last counted them. Kept by ddsync (warehouse/analyst-summaries.ts) so that summary_suppliers'' plot_country_codes, commodities and top_reasons move by deltas; a value is there while its count is above 0.';
comment on column summary_supplier_values.supplier_id is 'The supplier (businesses.id).';
comment on column summary_supplier_values.kind is 'country, commodity or reason.';
comment on column summary_supplier_values.value is 'The country code as sent, the commodity (null when listed null) or the reason code.';
comment on column summary_supplier_values.plots is 'How many times it is counted: links for a country, places in the lists for a commodity or a reason.';
