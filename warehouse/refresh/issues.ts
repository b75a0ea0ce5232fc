import { sql, type Kysely } from 'kysely';
import type { Database } from '../../schema/database.ts';
import { toJsonRecordset } from './json-recordset.ts';

/**
 * A record the service sent that could not be stored as it was: left out of its page (`skipped`,
 * e.g. a plot without an id) or stored with one value set to null (`nulled`, e.g. a date that is
 * not a date). Recorded in sync_issues with the field and the rule; never fails the page.
 */
export interface RecordIssue {
  entity: string;
  recordId: string | null;
  /** Where the record was, e.g. "page 3 #17". */
  location: string;
  field: string;
  rule: string;
  action: 'skipped' | 'nulled';
}

export async function recordIssues(db: Kysely<Database>, runId: string, scope: string, issues: readonly RecordIssue[]): Promise<void> {
  if (issues.length === 0) return;
  const rows = issues.map((i) => ({ entity: i.entity, record_id: i.recordId, location: i.location, field: i.field, rule: i.rule, action: i.action }));
  await sql`
    insert into sync_issues (run_id, scope, entity, record_id, location, field, rule, action)
    select ${runId}::uuid, ${scope}, entity, record_id, location, field, rule, action
    from json_to_recordset(${toJsonRecordset(rows)}::json) as r(entity text, record_id text, location text, field text, rule text, action text)
    on conflict do nothing`.execute(db);
}
