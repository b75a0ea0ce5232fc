import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { Warehouse } from '../../warehouse/database.ts';
import { refreshFingerprint } from '../../test/support/warehouse-fingerprint.ts';

/**
 * What a refresh left in a warehouse, as one short digest: the fingerprint of every mirrored table and
 * of the run's ledger (test/support/warehouse-fingerprint.ts), and the run's issues. Two runs of the
 * benchmark with the same data (say with the production heap flags and with a huge heap) stored the
 * same warehouse when their digests are equal. Printed with the plots' count, to be read at a glance.
 */
export async function warehouseDigest(db: Warehouse, runId: string): Promise<string> {
  const fingerprint = await refreshFingerprint(db, runId);
  const { rows } = await sql<{ issue: string }>`
    select concat_ws('|', scope, entity, record_id, location, field, rule, action) as issue
    from sync_issues where run_id = ${runId}::uuid`.execute(db);
  const issues = rows.map((r) => r.issue).sort();
  const digest = createHash('sha256').update(JSON.stringify({ fingerprint, issues })).digest('hex').slice(0, 16);
  const plots = fingerprint.tables['plots']?.split(':')[0] ?? '?';
  return `${digest} (${plots} plots, ${issues.length} issues)`;
}
