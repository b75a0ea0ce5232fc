import { hash } from 'node:crypto';
import { sql } from 'kysely';
import { jsonRecordset, type RecordsetColumns } from './json-recordset.ts';
import type { ColumnValues } from './rows.ts';
import type { Warehouse } from '../database.ts';

/**
 * A record the service sent that could not be stored as it was: left out of its page (`skipped`,
 * e.g. a plot without an id), stored with one value set to null (`nulled`, e.g. a date that is
 * not a date), or stored with a value Postgres cannot hold changed (`replaced`: each NUL and lone
 * surrogate as U+FFFD, the value as sent kept in `sent`). Recorded in sync_issues with the field and
 * the rule; never fails the page.
 */
export interface RecordIssue {
  entity: string;
  recordId: string | null;
  /** Where the record was, e.g. "page 3 #17". */
  location: string;
  field: string;
  rule: string;
  action: 'skipped' | 'nulled' | 'replaced';
  /** For `replaced`: the value as sent, as JSON text (domain/unstorable-text.ts). */
  sent?: string | undefined;
}

type IssueRow = ColumnValues<
  'sync_issues',
  'entity' | 'record_id' | 'location' | 'field' | 'rule' | 'action' | 'sent_value'
>;
const ISSUE_COLUMNS: RecordsetColumns<IssueRow> = {
  entity: 'text',
  record_id: 'text',
  location: 'text',
  field: 'text',
  rule: 'text',
  action: 'text',
  sent_value: 'text',
};

/**
 * `field` is part of the unique index sync_issues_once, and a btree index entry holds at most about
 * 2,700 bytes: a path through a long hostile key (a 5,000-character customData key with a NUL) would
 * fail its page's write on every retry. A longer path keeps its start and ends with a hash of the
 * whole, so two long paths stay apart; a replaced key's full text is in `sent_value`.
 */
const MAX_FIELD_CHARS = 600; // UTF-16 units: at most 1,800 bytes of UTF-8

export function indexableField(field: string): string {
  if (field.length <= MAX_FIELD_CHARS) return field;
  const digest = hash('sha1', field, 'hex').slice(0, 16);
  // Cut between the halves of a surrogate pair would leave a lone one.
  let head = field.slice(0, MAX_FIELD_CHARS - 60);
  if (/[\ud800-\udbff]$/.test(head)) head = head.slice(0, -1);
  return `${head}… (${field.length} characters, sha1 ${digest})`;
}

export async function recordIssues(
  db: Warehouse,
  runId: string,
  scope: string,
  issues: readonly RecordIssue[],
): Promise<void> {
  if (issues.length === 0) return;
  const rows = issues.map(
    (i): IssueRow => ({
      entity: i.entity,
      record_id: i.recordId,
      location: i.location,
      field: indexableField(i.field),
      rule: i.rule,
      action: i.action,
      sent_value: i.sent ?? null,
    }),
  );
  const columns = sql.raw(Object.keys(ISSUE_COLUMNS).join(', '));
  await sql`
    insert into sync_issues (run_id, scope, ${columns})
    select ${runId}::uuid, ${scope}, ${columns}
    from ${jsonRecordset(rows, ISSUE_COLUMNS)}
    on conflict do nothing`.execute(db);
}
