-- The summary tables of 0028 were made again from every current plot at the end of each refresh that
-- changed anything (56 s at 1,000,000 plots, for one plot changed as for all). Now the plots a write
-- touches are noted as it commits (summary_changes, by statement triggers on the four tables the
-- summaries add up), what the summaries need of each plot is kept (summary_plot_facts), and the end of
-- a refresh makes again only the suppliers and cells those plots belong to, before and after
-- (warehouse/analyst-summaries.ts, docs/analyst-summaries.md).

create table summary_plot_facts (
  plot_id text primary key,
  is_own boolean not null,
  country_code text,
  country_key text not null,
  commodities text[],
  area_ha double precision,
  readiness_area_ha double precision,
  geometry_valid boolean,
  risk_level text,
  risk_assessment_status text,
  flagged boolean not null,
  most_recent_analysis_id text,
  most_recent_analysis_status text,
  most_recent_risk_of_deforestation double precision,
  most_recent_deforested_area_m2 double precision,
  most_recent_analysed_at timestamptz,
  has_precision boolean not null,
  checked boolean not null,
  ready boolean not null,
  supplier_ids text[] not null,
  missing_supplier_ids text[] not null,
  blocking_codes text[] not null
);
-- The plots reached through no supplier: the rows of bi_risk_overview without one are made from them.
create index summary_plot_facts_no_supplier on summary_plot_facts (plot_id) where supplier_ids = '{}';
comment on table summary_plot_facts is 'One row per current plot as the summary tables last counted it: what they need of it (the expressions of bi_current_plots and bi_eudr_plot_readiness, its live links and blocking codes). Not for analysts: kept by ddsync (warehouse/analyst-summaries.ts) so that a refresh makes again only the summary rows of the plots it changed, knowing where each plot was counted before. Empty until summaries are made from plots (then the next making reads every plot).';
comment on column summary_plot_facts.plot_id is 'The plot (plots.id).';
comment on column summary_plot_facts.is_own is 'plots.is_own.';
comment on column summary_plot_facts.country_code is 'plots.country_code as sent.';
comment on column summary_plot_facts.country_key is 'The country trimmed and upper case (as bi_country_risk is joined); empty without one.';
comment on column summary_plot_facts.commodities is 'plots.commodities.';
comment on column summary_plot_facts.area_ha is 'plots.area_ha.';
comment on column summary_plot_facts.readiness_area_ha is 'The area as bi_eudr_plot_readiness gives it (a point plot''s reported area).';
comment on column summary_plot_facts.geometry_valid is 'plots.geometry_valid.';
comment on column summary_plot_facts.risk_level is 'The risk level, normalised.';
comment on column summary_plot_facts.risk_assessment_status is 'The risk assessment status, normalised.';
comment on column summary_plot_facts.flagged is 'bi_current_plots.flagged.';
comment on column summary_plot_facts.most_recent_analysis_id is 'plots.most_recent_analysis_id.';
comment on column summary_plot_facts.most_recent_analysis_status is 'Its status, normalised.';
comment on column summary_plot_facts.most_recent_risk_of_deforestation is 'Its risk of deforestation.';
comment on column summary_plot_facts.most_recent_deforested_area_m2 is 'Its deforested area, m².';
comment on column summary_plot_facts.most_recent_analysed_at is 'When it was analysed.';
comment on column summary_plot_facts.has_precision is 'The plot has a PRECISION analysis.';
comment on column summary_plot_facts.checked is 'bi_eudr_plot_readiness.checked.';
comment on column summary_plot_facts.ready is 'bi_eudr_plot_readiness.ready.';
comment on column summary_plot_facts.supplier_ids is 'The suppliers of its live links, sorted; empty for a plot reached through none.';
comment on column summary_plot_facts.missing_supplier_ids is 'Of those, the suppliers whose link has missing_since.';
comment on column summary_plot_facts.blocking_codes is 'Codes of its current blocking findings, sorted.';

create table summary_changes (
  plot_id text not null
);
comment on table summary_changes is 'Not for analysts: a plot whose row, links, analyses or findings a committed write touched since the summary tables were last made (one row per statement and plot; repeats allowed). Written by triggers on plots, plot_suppliers, analyses and eudr_findings; emptied by ddsync when it makes the summaries again (warehouse/analyst-summaries.ts). Nothing is noted while summary_plot_facts is empty: the next making reads every plot.';
comment on column summary_changes.plot_id is 'The plot (plots.id).';

-- Once per statement, from its transition table: a page of 500 plots adds one insert of its ids. While
-- no plot is counted yet (a first load), nothing is noted: the making that ends it reads every plot. A
-- making that fills summary_plot_facts takes lock 7250029 alone before it reads, so a write that skipped
-- noting (holding the lock shared to its commit) is either in what it reads or notes after it.
create function summary_note_changes() returns trigger
language plpgsql
as $$
begin
  if not exists (select 1 from summary_plot_facts) then
    perform pg_advisory_xact_lock_shared(7250029);
    if not exists (select 1 from summary_plot_facts) then
      return null;
    end if;
  end if;
  if tg_table_name = 'plots' then
    insert into summary_changes (plot_id) select distinct c.id from changed c;
  else
    insert into summary_changes (plot_id) select distinct c.plot_id from changed c;
  end if;
  return null;
end
$$;
comment on function summary_note_changes() is 'Notes in summary_changes the plots a statement on plots, plot_suppliers, analyses or eudr_findings touched (warehouse/analyst-summaries.ts).';

-- Postgres allows a transition table on a trigger of one event only: three triggers per table.
create trigger summary_changes_insert after insert on plots referencing new table as changed
  for each statement execute function summary_note_changes();
create trigger summary_changes_update after update on plots referencing new table as changed
  for each statement execute function summary_note_changes();
create trigger summary_changes_delete after delete on plots referencing old table as changed
  for each statement execute function summary_note_changes();
create trigger summary_changes_insert after insert on plot_suppliers referencing new table as changed
  for each statement execute function summary_note_changes();
create trigger summary_changes_update after update on plot_suppliers referencing new table as changed
  for each statement execute function summary_note_changes();
create trigger summary_changes_delete after delete on plot_suppliers referencing old table as changed
  for each statement execute function summary_note_changes();
create trigger summary_changes_insert after insert on analyses referencing new table as changed
  for each statement execute function summary_note_changes();
create trigger summary_changes_update after update on analyses referencing new table as changed
  for each statement execute function summary_note_changes();
create trigger summary_changes_delete after delete on analyses referencing old table as changed
  for each statement execute function summary_note_changes();
create trigger summary_changes_insert after insert on eudr_findings referencing new table as changed
  for each statement execute function summary_note_changes();
create trigger summary_changes_update after update on eudr_findings referencing new table as changed
  for each statement execute function summary_note_changes();
create trigger summary_changes_delete after delete on eudr_findings referencing old table as changed
  for each statement execute function summary_note_changes();
