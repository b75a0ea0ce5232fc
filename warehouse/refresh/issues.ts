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
      field: i.field,
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
