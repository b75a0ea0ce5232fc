-- A truncate of a table the summaries add up fires none of the triggers of 0029 (they fire on insert,
-- update and delete), so no plot would be noted. It forgets the facts instead: the next making reads
-- every plot again (warehouse/analyst-summaries.ts), and until then nothing is noted.
create function summary_forget_facts() returns trigger
language plpgsql
as $$
begin
  truncate summary_plot_facts;
  return null;
end
$$;
comment on function summary_forget_facts() is 'Empties summary_plot_facts when plots, plot_suppliers, analyses or eudr_findings is truncated, so that the summaries are next made from every plot (warehouse/analyst-summaries.ts).';

create trigger summary_forget_facts after truncate on plots
  for each statement execute function summary_forget_facts();
create trigger summary_forget_facts after truncate on plot_suppliers
  for each statement execute function summary_forget_facts();
create trigger summary_forget_facts after truncate on analyses
  for each statement execute function summary_forget_facts();
create trigger summary_forget_facts after truncate on eudr_findings
  for each statement execute function summary_forget_facts();
