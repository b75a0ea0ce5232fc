import type { ColumnType, Generated, Insertable, Selectable, Updateable } from 'kysely';

/**
 * The warehouse as Kysely sees it: one interface per table of sql/migrations. Keep in step with
 * the SQL (test/integration/migrations.test.ts compares the two).
 */

type Timestamp = ColumnType<Date, Date | string, Date | string>;
type DefaultTimestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type Json = ColumnType<unknown, string, string>;

export interface SyncRunsTable {
  id: string;
  kind: Generated<string>;
  workflow_id: string | null;
  status: Generated<RunStatus>;
  started_at: DefaultTimestamp;
  finished_at: Timestamp | null;
  suppliers_total: number | null;
  suppliers_done: Generated<number>;
  suppliers_failed: Generated<number>;
  plots_expected: number | null;
  pages: Generated<number>;
  plots_seen: Generated<number>;
  requests: Generated<number>;
  retries: Generated<number>;
  rate_limited: Generated<number>;
  error: string | null;
  deletions_confirmed: Generated<number>;
  deletions_deferred: Generated<number>;
  verify_pages: Generated<number>;
}

export type RunStatus = 'running' | 'succeeded' | 'partial' | 'failed';
export type ScopeStatus = 'pending' | 'running' | 'succeeded' | 'failed';
export type ScopeKind = 'supplier' | 'own_plots' | 'network' | 'invitations';

export interface SyncRunCountsTable {
  run_id: string;
  table_name: string;
  inserted: Generated<number>;
  updated: Generated<number>;
  unchanged: Generated<number>;
  deleted: Generated<number>;
}

export interface SyncRunScopesTable {
  run_id: string;
  scope: string;
  kind: ScopeKind;
  supplier_id: string | null;
  status: Generated<ScopeStatus>;
  started_at: Timestamp | null;
  finished_at: Timestamp | null;
  plots_expected: number | null;
  pages: Generated<number>;
  plots_seen: Generated<number>;
  requests: Generated<number>;
  retries: Generated<number>;
  rate_limited: Generated<number>;
  error: string | null;
  missing: Generated<number>;
  verify_status: 'not_needed' | 'stable' | 'unstable' | null;
  verify_pages: Generated<number>;
  verify_requests: Generated<number>;
  verify_seen: Generated<string[]>;
}

export interface SyncPagesTable {
  run_id: string;
  scope: string;
  entity: string;
  page: number;
  ids: string[];
  received: number;
  counts: ColumnType<Record<string, Record<string, number>>, string, string>;
  reused: Generated<boolean>;
  requests: Generated<number>;
  retries: Generated<number>;
  rate_limited: Generated<number>;
  written_at: DefaultTimestamp;
  content_hash: string | null;
}

export interface SourcePagesTable {
  scope: string;
  page: number;
  content_hash: string;
  ids: string[];
  received: number;
  read_at: DefaultTimestamp;
}

export interface SyncIssuesTable {
  run_id: string;
  scope: string;
  entity: string;
  record_id: string | null;
  location: string;
  field: string;
  rule: string;
  action: 'skipped' | 'nulled';
  seen_at: DefaultTimestamp;
}

interface Tracked {
  content_hash: string;
  first_seen_at: DefaultTimestamp;
  changed_at: DefaultTimestamp;
}

export interface BusinessesTable extends Tracked {
  id: string;
  name: string | null;
  email: string | null;
  username: string | null;
  address_street: string | null;
  address_zip: string | null;
  address_postcode: string | null;
  address_area: string | null;
  address_city: string | null;
  address_country_code: string | null;
  address_country: string | null;
  address_line1: string | null;
  address_line2: string | null;
  eori: string | null;
  vat: string | null;
  system_environment: string | null;
  initial_locale: string | null;
  units: string | null;
  created_at: Timestamp | null;
  updated_at: Timestamp | null;
  is_caller: Generated<boolean>;
  deleted_at: Timestamp | null;
}

export interface BusinessConnectionsTable extends Tracked {
  id: string;
  source_business_id: string;
  target_business_id: string;
  partner_business_id: string;
  role: 'supplier' | 'buyer';
  plots_count: number | null;
  plots_commodities: Generated<string[]>;
  custom_data: Json | null;
  created_at: Timestamp | null;
  updated_at: Timestamp | null;
  deleted_at: Timestamp | null;
}

export interface PlotsTable extends Tracked {
  id: string;
  owner_id: string | null;
  name: string | null;
  description: string | null;
  country_code: string | null;
  commodities: Generated<string[]>;
  surface_area_m2: number | null;
  area_ha: number | null;
  bbox_min_lon: number | null;
  bbox_min_lat: number | null;
  bbox_max_lon: number | null;
  bbox_max_lat: number | null;
  geometry: Json | null;
  geometry_valid: boolean;
  geometry_issue: string | null;
  risk_assessment_status: string | null;
  risk_level: string | null;
  production_date_start: ColumnType<Date, string, string> | null;
  production_date_end: ColumnType<Date, string, string> | null;
  filename: string | null;
  custom_data: Json | null;
  most_recent_analysis_id: string | null;
  euforobs_analysis_id: string | null;
  precision_analysis_id: string | null;
  is_own: Generated<boolean>;
  created_at: Timestamp | null;
  updated_at: Timestamp | null;
  history_hash: string;
  deleted_at: Timestamp | null;
}

export interface PlotSuppliersTable {
  plot_id: string;
  supplier_id: string;
  first_seen_at: DefaultTimestamp;
  changed_at: DefaultTimestamp;
  deleted_at: Timestamp | null;
  missing_since: Timestamp | null;
}

export interface PlotSpeciesTable {
  plot_id: string;
  position: number;
  scientific_name: string | null;
  common_name: string | null;
}

export interface AnalysesTable extends Tracked {
  id: string;
  plot_id: string;
  type: string | null;
  status: string | null;
  name: string | null;
  version: string | null;
  analysed_at: Timestamp | null;
  deforested_area_m2: number | null;
  deforested_geometry: Json | null;
  risk_of_deforestation: number | null;
  custom_data: Json | null;
  created_at: Timestamp | null;
  updated_at: Timestamp | null;
  is_most_recent: Generated<boolean>;
  is_most_recent_of_type: Generated<boolean>;
  deleted_at: Timestamp | null;
}

export interface PlotHistoryTable {
  plot_id: string;
  valid_from: Timestamp;
  valid_to: Timestamp | null;
  is_current: Generated<boolean>;
  risk_assessment_status: string | null;
  risk_level: string | null;
  geometry_hash: string | null;
  commodities: Generated<string[]>;
  most_recent_analysis_id: string | null;
  euforobs_analysis_id: string | null;
  precision_analysis_id: string | null;
  history_hash: string;
  run_id: string | null;
}

export interface BusinessInvitationsTable extends Tracked {
  id: string;
  status: string | null;
  email: string | null;
  sender_business_id: string | null;
  business_id: string | null;
  source_is_invitee: boolean | null;
  custom_data: Json | null;
  created_at: Timestamp | null;
  updated_at: Timestamp | null;
  deleted_at: Timestamp | null;
}

export interface SubmissionBatchesTable {
  id: string;
  source: string;
  created_at: DefaultTimestamp;
  rows: Generated<number>;
  accepted: Generated<number>;
  invalid: Generated<number>;
  duplicates: Generated<number>;
  workflow_id: string | null;
  status: Generated<'open' | 'done' | 'cancelled'>;
  finished_at: Timestamp | null;
  /** sql/migrations/0011_submission_step_failures.sql: a step of the batch being retried. */
  last_error: string | null;
  failed_attempts: Generated<number>;
  last_failed_at: Timestamp | null;
}

export interface TransactionRequestsTable {
  id: Generated<number>;
  batch_id: string;
  line: number;
  key: string | null;
  status: 'accepted' | 'invalid' | 'duplicate';
  payload: Json | null;
  errors: Json | null;
  earlier_batch_id: string | null;
  create_attempts: Generated<number>;
  created_at: DefaultTimestamp;
  /** sql/migrations/0007_create_sent_at.sql: when the last create that may have been applied was sent. */
  create_sent_at: Timestamp | null;
}

export interface TransactionsTable {
  key: string;
  batch_id: string;
  id: string | null;
  activity_type: string | null;
  country_of_activity: string | null;
  legal_entity_id: string | null;
  state: Generated<string>;
  status: string | null;
  reference_number: string | null;
  verification_number: string | null;
  error_reason: string | null;
  last_error: string | null;
  created_at: Timestamp | null;
  submitted_at: Timestamp | null;
  validated_at: Timestamp | null;
  last_polled_at: Timestamp | null;
  updated_at: DefaultTimestamp;
  /** sql/migrations/0011_submission_step_failures.sql: the current step's failed attempts in a row. */
  failed_attempts: Generated<number>;
  last_failed_at: Timestamp | null;
}

export interface TransactionComponentsTable {
  transaction_key: string;
  position: number;
  kind: 'supplier' | 'dds_reference';
  hsn: string;
  quantity: number;
  unit: string;
  description: string | null;
  supplier_business_ids: string[] | null;
  plot_ids: string[] | null;
  dds_references: Json | null;
}

export interface TransactionStatusEventsTable {
  transaction_key: string;
  status: string;
  seen_at: DefaultTimestamp;
  source: 'create' | 'submit' | 'poll' | 'webhook';
}

/** sql/migrations/0004_webhooks.sql: webhooks at the service, ddsync's and others'. */
export interface WebhooksTable {
  id: string;
  /** The DDSYNC_WEBHOOKS name of a webhook ddsync manages; null otherwise. */
  name: string | null;
  managed: Generated<boolean>;
  url: string;
  description: string | null;
  events: Generated<string[]>;
  is_active: boolean | null;
  created_at: Timestamp | null;
  updated_at: Timestamp | null;
  first_seen_at: DefaultTimestamp;
  changed_at: DefaultTimestamp;
  deleted_at: Timestamp | null;
}

export interface WebhookAttemptsTable {
  id: string;
  webhook_id: string;
  msg_id: string | null;
  url: string | null;
  status: string | null;
  response_status_code: number | null;
  /** At most 2,000 characters. */
  response: string | null;
  attempted_at: Timestamp | null;
  event_type: string | null;
  first_seen_at: DefaultTimestamp;
}

export interface WebhookStatsTable {
  webhook_id: string;
  taken_at: DefaultTimestamp;
  /** bigint: read as a string by pg. */
  successful_messages: ColumnType<string, number | string, number | string>;
  failed_messages: ColumnType<string, number | string, number | string>;
}

export type WebhookEventHandling = 'pending' | 'signalled' | 'no_transaction' | 'workflow_closed' | 'ignored' | 'failed';
export interface WebhookEventsTable {
  msg_id: string;
  webhook_name: string;
  event_type: string | null;
  payload: Json;
  sent_at: Timestamp | null;
  received_at: DefaultTimestamp;
  last_received_at: DefaultTimestamp;
  deliveries: Generated<number>;
  transaction_id: string | null;
  handling: Generated<WebhookEventHandling>;
  handling_error: string | null;
  handled_at: Timestamp | null;
  /** sql/migrations/0006_webhook_dispatch.sql */
  dispatch_attempts: Generated<number>;
  next_dispatch_at: Timestamp | null;
}

/** sql/migrations/0005_survey_pdfs.sql: the survey-response PDF archive queue. */
export type SurveyPdfState = 'queued' | 'waiting' | 'retrying' | 'archived' | 'gone';
export interface SurveyResponsePdfsTable {
  id: string;
  state: Generated<SurveyPdfState>;
  queued_at: DefaultTimestamp;
  /** Null once archived or gone. */
  next_attempt_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  /** The archive run holding the entry until next_attempt_at. */
  lease_owner: string | null;
  attempts: Generated<number>;
  last_attempt_at: Timestamp | null;
  size_bytes: number | null;
  sha256: string | null;
  storage_path: string | null;
  archived_at: Timestamp | null;
  last_status: number | null;
  last_error: string | null;
}

export interface Database {
  sync_runs: SyncRunsTable;
  sync_run_counts: SyncRunCountsTable;
  sync_run_scopes: SyncRunScopesTable;
  sync_pages: SyncPagesTable;
  sync_issues: SyncIssuesTable;
  source_pages: SourcePagesTable;
  businesses: BusinessesTable;
  business_connections: BusinessConnectionsTable;
  plots: PlotsTable;
  plot_suppliers: PlotSuppliersTable;
  plot_species: PlotSpeciesTable;
  analyses: AnalysesTable;
  plot_history: PlotHistoryTable;
  business_invitations: BusinessInvitationsTable;
  submission_batches: SubmissionBatchesTable;
  transaction_requests: TransactionRequestsTable;
  transactions: TransactionsTable;
  transaction_components: TransactionComponentsTable;
  transaction_status_events: TransactionStatusEventsTable;
  webhooks: WebhooksTable;
  webhook_attempts: WebhookAttemptsTable;
  webhook_stats: WebhookStatsTable;
  webhook_events: WebhookEventsTable;
  survey_response_pdfs: SurveyResponsePdfsTable;
}

export type SyncRun = Selectable<SyncRunsTable>;
export type NewSyncRun = Insertable<SyncRunsTable>;
export type SyncRunUpdate = Updateable<SyncRunsTable>;
export type PlotRow = Selectable<PlotsTable>;
