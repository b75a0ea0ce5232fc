import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { Warehouse } from '../../warehouse/database.ts';
import { refreshFingerprint } from '../../test/support/warehouse-fingerprint.ts';

/**
 * What a refresh left in a warehouse, as short digests: of every mirrored table, of the run's issues,
 * and of the run's ledger (test/support/warehouse-fingerprint.ts). Two runs of the benchmark with the
 * same data (say with the production heap flags and with a huge heap) stored the same warehouse when
 * their digests are equal. Printed with the plots' count, to be read at a glance.
 */
export async function warehouseDigest(db: Warehouse, runId: string): Promise<string> {
  const fingerprint = await refreshFingerprint(db, runId);
  const { rows } = await sql<{ issue: string }>`
    select concat_ws('|', scope, entity, record_id, location, field, rule, action) as issue
    from sync_issues where run_id = ${runId}::uuid`.execute(db);
  const issues = rows.map((r) => r.issue).sort();
  const hash = (value: unknown) => createHash('sha256').update(JSON.stringify(value)).digest('hex').slice(0, 12);
  const plots = fingerprint.tables['plots']?.split(':')[0] ?? '?';
  // Apart: the tables are what analysts read; the ledger (counts per table and part) may also say in
  // which order pages that share plots were written.
  return `tables ${hash(fingerprint.tables)}, issues ${hash(issues)}, ledger ${hash([fingerprint.runCounts, fingerprint.scopes])} (${plots} plots, ${issues.length} issues)`;
}
