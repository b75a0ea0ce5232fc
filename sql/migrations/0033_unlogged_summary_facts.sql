-- summary_plot_facts (0029) is ddsync's own bookkeeping, read by no view: what the summary tables
-- counted of each plot. Each making that reads every plot (a first load, migrations, a quarter of the
-- plots touched, on demand) truncates and fills it again, and as a logged table that wrote its rows and
-- its index to the WAL: about 10 MB per making at 20,000 plots (400 MB or so at 1,000,000), and a
-- sixth of the making's Postgres CPU (docs/analyst-summaries.md, "What it costs the refresh").
--
-- Unlogged, a crash (or a standby promoted) leaves it empty; an empty table is a state the making
-- already handles (0029, 0030): while it is empty the triggers note nothing and the next making reads
-- every plot, so the summaries still agree with the plots after it. The summary tables the views read
-- stay logged.
alter table summary_plot_facts set unlogged;
comment on table summary_plot_facts is 'One row per current plot as the summary tables last counted it: what they need of it (the expressions of bi_current_plots and bi_eudr_plot_readiness, its live links and blocking codes). Not for analysts: kept by ddsync (warehouse/analyst-summaries.ts) so that a refresh makes again only the summary rows of the plots it changed, knowing where each plot was counted before. Unlogged (0033): empty after a crash, like before summaries are first made from plots (then the next making reads every plot).';
