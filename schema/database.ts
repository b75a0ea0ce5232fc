import type { ColumnType } from 'kysely';
import type { DB } from './database.generated.ts';

/**
 * The warehouse as Kysely sees it: the tables and views kysely-codegen generated from the database
 * sql/migrations makes (schema/database.generated.ts: `npm run db:types` rewrites it, and
 * test/integration/table-types.test.ts fails when it is stale), with one overlay. The code imports
 * the warehouse's types from here, never from the generated file.
 *
 * The overlay narrows a text column to the values the code relies on. The generator sees only
 * `text`: the values are a CHECK in the SQL (test/integration/table-types.test.ts compares the two)
 * or, where marked, the values ddsync alone writes. NARROWED_COLUMNS names only columns the
 * generated types have, so a narrowed column renamed or dropped in SQL breaks here too.
 */

export type { JsonObject, JsonValue } from './database.generated.ts';

export const RUN_STATUSES = ['running', 'succeeded', 'partial', 'failed'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
export const SCOPE_STATUSES = ['pending', 'running', 'succeeded', 'failed'] as const;
export type ScopeStatus = (typeof SCOPE_STATUSES)[number];
export const SCOPE_KINDS = ['supplier', 'own_plots', 'network', 'invitations'] as const;
export type ScopeKind = (typeof SCOPE_KINDS)[number];
export const VERIFY_STATUSES = ['not_needed', 'stable', 'unstable'] as const;
export const ISSUE_ACTIONS = ['skipped', 'nulled', 'replaced'] as const;
export const CONNECTION_ROLES = ['supplier', 'buyer'] as const;
export const BATCH_STATUSES = ['open', 'done', 'cancelled'] as const;
export const REQUEST_STATUSES = ['accepted', 'invalid', 'duplicate'] as const;
export const COMPONENT_KINDS = ['supplier', 'dds_reference'] as const;
export const SURVEY_PDF_STATES = ['queued', 'waiting', 'retrying', 'archived', 'gone'] as const;
export type SurveyPdfState = (typeof SURVEY_PDF_STATES)[number];
/** No CHECK in the SQL: the values ddsync writes. */
export const STATUS_SOURCES = ['create', 'submit', 'poll', 'webhook'] as const;
/** No CHECK in the SQL: the values ddsync writes. */
export const WEBHOOK_EVENT_HANDLINGS = [
  'pending',
  'signalled',
  'no_transaction',
  'workflow_closed',
  'ignored',
  'failed',
] as const;
export type WebhookEventHandling = (typeof WEBHOOK_EVENT_HANDLINGS)[number];

type Of<Values extends readonly string[]> = Values[number];

/** `table.column` of every column the generated types know. */
type ColumnPath = { [T in keyof DB & string]: `${T}.${keyof DB[T] & string}` }[keyof DB & string];

/**
 * Every narrowed column with its values: the overlay is made from it, and the test compares it
 * with the SQL. `satisfies` refuses a column the generated types do not have.
 */
export const NARROWED_COLUMNS = {
  'sync_runs.status': RUN_STATUSES,
  'sync_run_scopes.status': SCOPE_STATUSES,
  'sync_run_scopes.kind': SCOPE_KINDS,
  'sync_run_scopes.verify_status': VERIFY_STATUSES,
  'sync_issues.action': ISSUE_ACTIONS,
  'business_connections.role': CONNECTION_ROLES,
  'submission_batches.status': BATCH_STATUSES,
  'transaction_requests.status': REQUEST_STATUSES,
  'transaction_components.kind': COMPONENT_KINDS,
  'survey_response_pdfs.state': SURVEY_PDF_STATES,
  'transaction_status_events.source': STATUS_SOURCES,
  'webhook_events.handling': WEBHOOK_EVENT_HANDLINGS,
} as const satisfies Partial<Record<ColumnPath, readonly string[]>>;
type Narrowings = typeof NARROWED_COLUMNS;

/** `text` becomes the values; null, undefined (optional on insert) and the ColumnType around it stay. */
type Swap<T, Values> = T extends string ? Values : T;
type NarrowColumn<Column, Values> =
  Column extends ColumnType<infer S, infer I, infer U>
    ? ColumnType<Swap<S, Values>, Swap<I, Values>, Swap<U, Values>>
    : Swap<Column, Values>;

export type Database = {
  [T in keyof DB]: {
    [C in keyof DB[T]]: `${T & string}.${C & string}` extends infer P extends keyof Narrowings
      ? NarrowColumn<DB[T][C], Of<Narrowings[P]>>
      : DB[T][C];
  };
};
