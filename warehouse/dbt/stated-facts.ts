import {
  KNOWN_ANALYSIS_STATUSES,
  KNOWN_RISK_ASSESSMENT_STATUSES,
  KNOWN_RISK_LEVELS,
  KNOWN_TRANSACTION_STATUSES,
} from '../../schema/upstream/service-facts.ts';

// What is true of the warehouse but stated by no constraint, each with why it holds: the keys of the
// views (a view has no constraints), the references the column comments name but no foreign key
// declares, and the known values of the statuses the views normalise. No I/O. The dbt package turns
// them into tests; test/integration/dbt-package.test.ts checks that each names columns the warehouse
// has, and test/postgis/dbt.test.ts that each holds on a refreshed warehouse (dbt test).

export interface ViewKey {
  view: string;
  /** Unique together (one column: `unique` on it; several: `unique` on the row of them). */
  columns: string[];
  /** Of those, the ones never null. */
  notNull: string[];
  why: string;
}

export const VIEW_KEYS: readonly ViewKey[] = [
  {
    view: 'bi_current_plots',
    columns: ['plot_id'],
    notNull: ['plot_id'],
    why: 'one row per plot not soft-deleted (plots.id); it joins only one row per plot (aggregates grouped by plot, analyses by their id)',
  },
  {
    view: 'bi_eudr_plot_readiness',
    columns: ['plot_id'],
    notNull: ['plot_id'],
    why: 'one row per plot not soft-deleted (plots.id), joined to aggregates grouped by plot',
  },
  {
    view: 'bi_suppliers',
    columns: ['supplier_business_id'],
    notNull: ['supplier_business_id'],
    why: 'distinct on the partner business of the live supplier connections (the oldest connection when two)',
  },
  {
    view: 'bi_eudr_supplier_readiness',
    columns: ['supplier_business_id'],
    notNull: ['supplier_business_id'],
    why: 'a union (which removes duplicates) of the partners of live supplier connections and the suppliers of live links, both not null, joined to aggregates grouped by supplier',
  },
  {
    view: 'bi_sync_health',
    columns: ['run_id'],
    notNull: ['run_id'],
    why: 'one row per sync_runs row (its id), joined to aggregates grouped by run',
  },
  {
    view: 'bi_webhook_health',
    columns: ['webhook_id'],
    notNull: ['webhook_id'],
    why: 'one row per webhook not soft-deleted (webhooks.id), joined to one row of stats and one aggregate of attempts',
  },
  {
    view: 'sync_last_seen',
    columns: ['scope'],
    notNull: ['scope'],
    why: 'grouped by scope (sync_run_scopes.scope, not null)',
  },
  {
    view: 'bi_transaction_pipeline',
    columns: ['batch_id', 'state', 'status_raw'],
    notNull: ['batch_id', 'state'],
    why: 'grouped by the transactions’ batch, state and status as sent (status_raw)',
  },
  {
    view: 'bi_transaction_errors',
    columns: ['state', 'reason'],
    notNull: ['state', 'reason'],
    why: 'grouped by state and reason (a coalesce ending in a constant, so never null)',
  },
  {
    view: 'bi_transaction_latency',
    columns: ['batch_id'],
    notNull: [],
    why: 'grouped by rollup (batch_id): one row per batch, and the overall row whose batch_id is null (unique leaves nulls out)',
  },
];

export interface StatedReference {
  /** `table.column` */
  from: string;
  /** `table.column`, a key of that table. */
  to: string;
  why: string;
}

const WITH_THE_PLOT =
  'written in the same transaction as its plot, and plots are never deleted (a plot that goes is soft-deleted)';
const ANALYSIS_OF_THE_PLOT =
  'the analyses a plot names are stored from the same record in the same transaction, and analyses are never deleted';
const RUN_THAT_WROTE_IT =
  'the refresh that wrote it, recorded in sync_runs before it writes anything; runs are never deleted';
const LISTED_WEBHOOK =
  'recorded for a webhook just listed and recorded; webhooks are never deleted (soft-deleted when gone)';

/**
 * References each column's comment names, `(plots.id)`, that no foreign key declares: the refresh writes
 * these rows with the rows they name, and a foreign key would lock the named row at every write.
 * Left out on purpose: webhook_events.transaction_id (a message may name a transaction ddsync did not
 * submit) and sync_issues.record_id (its table depends on `entity`).
 */
export const STATED_REFERENCES: readonly StatedReference[] = [
  { from: 'analyses.plot_id', to: 'plots.id', why: WITH_THE_PLOT },
  { from: 'eudr_findings.plot_id', to: 'plots.id', why: WITH_THE_PLOT },
  { from: 'eudr_findings.run_id', to: 'sync_runs.id', why: RUN_THAT_WROTE_IT },
  { from: 'plot_history.plot_id', to: 'plots.id', why: WITH_THE_PLOT },
  { from: 'plot_history.most_recent_analysis_id', to: 'analyses.id', why: ANALYSIS_OF_THE_PLOT },
  { from: 'plot_history.euforobs_analysis_id', to: 'analyses.id', why: ANALYSIS_OF_THE_PLOT },
  { from: 'plot_history.precision_analysis_id', to: 'analyses.id', why: ANALYSIS_OF_THE_PLOT },
  { from: 'plot_history.run_id', to: 'sync_runs.id', why: RUN_THAT_WROTE_IT },
  { from: 'plot_species.plot_id', to: 'plots.id', why: WITH_THE_PLOT },
  { from: 'plot_suppliers.plot_id', to: 'plots.id', why: WITH_THE_PLOT },
  { from: 'plots.most_recent_analysis_id', to: 'analyses.id', why: ANALYSIS_OF_THE_PLOT },
  { from: 'plots.euforobs_analysis_id', to: 'analyses.id', why: ANALYSIS_OF_THE_PLOT },
  { from: 'plots.precision_analysis_id', to: 'analyses.id', why: ANALYSIS_OF_THE_PLOT },
  { from: 'spatial_state.overlaps_run_id', to: 'sync_runs.id', why: RUN_THAT_WROTE_IT },
  { from: 'webhook_attempts.webhook_id', to: 'webhooks.id', why: LISTED_WEBHOOK },
  { from: 'webhook_stats.webhook_id', to: 'webhooks.id', why: LISTED_WEBHOOK },
];

export interface OpenVocabulary {
  /** `view.column` of each column that holds normalise_status() of the service's value. */
  columns: string[];
  /** The values known today, as the service sends them (schema/upstream/service-facts.ts). */
  values: readonly string[];
}

/**
 * The statuses the views normalise (docs/warehouse.md, "Status values"). The vocabularies are open: a
 * value the service adds is kept, normalised, never dropped, so a value outside the known ones is news
 * to look at, not an error in the warehouse: its test warns.
 */
export const OPEN_VOCABULARIES: readonly OpenVocabulary[] = [
  {
    columns: [
      'bi_current_plots.risk_assessment_status',
      'bi_plot_changes.risk_assessment_status',
      'bi_plot_changes.risk_assessment_status_before',
    ],
    values: KNOWN_RISK_ASSESSMENT_STATUSES,
  },
  {
    columns: ['bi_current_plots.risk_level', 'bi_plot_changes.risk_level', 'bi_plot_changes.risk_level_before'],
    values: KNOWN_RISK_LEVELS,
  },
  {
    columns: [
      'bi_current_plots.most_recent_analysis_status',
      'bi_current_plots.euforobs_status',
      'bi_current_plots.precision_status',
    ],
    values: KNOWN_ANALYSIS_STATUSES,
  },
  { columns: ['bi_transaction_pipeline.status'], values: KNOWN_TRANSACTION_STATUSES },
];

/** Every value the catalog reader is asked to normalise with the warehouse's own normalise_status(). */
export function openVocabularyValues(): string[] {
  return [...new Set(OPEN_VOCABULARIES.flatMap((v) => v.values))].sort();
}
