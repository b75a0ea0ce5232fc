import { sql } from 'kysely';
import type { Row, Warehouse } from '../database.ts';

/**
 * What the end of a supplier's scan reads and records for its verification
 * (activities/refresh/scan-verification.ts decides): the pages the scan left in sync_pages, the live
 * links it did not see, and the outcome on the supplier's part of the run, where the sweep reads it.
 */

export type VerifyStatus = 'not_needed' | 'stable' | 'unstable';

export interface VerificationOutcome {
  /** Live links of the supplier the scan did not see. */
  missing: number;
  status: VerifyStatus;
  pages: number;
  /** Of the missing, those the verification read found (they had slid across a page boundary). */
  found: string[];
}

/** A page as the scan read it (from sync_pages). */
export interface ScannedPage {
  hash: string | null;
  received: number;
  /** The same text as at the last complete read: not parsed. */
  reused: boolean;
}

/** The supplier's plot pages of the run, by page number (without their ids). */
export async function scannedPages(db: Warehouse, runId: string, scope: string): Promise<Map<number, ScannedPage>> {
  const { rows } = await sql<Pick<Row<'sync_pages'>, 'page' | 'content_hash' | 'received' | 'reused'>>`
    select page, content_hash, received, reused from sync_pages
    where run_id = ${runId}::uuid and scope = ${scope} and entity = 'plots'`.execute(db);
  return new Map(rows.map((r) => [r.page, { hash: r.content_hash, received: r.received, reused: r.reused }]));
}

/** The ids each of the supplier's plot pages of the run held, by page number. */
export async function scannedPageIds(db: Warehouse, runId: string, scope: string): Promise<Map<number, string[]>> {
  const { rows } = await sql<Pick<Row<'sync_pages'>, 'page' | 'ids'>>`
    select page, ids from sync_pages where run_id = ${runId}::uuid and scope = ${scope} and entity = 'plots'`.execute(
    db,
  );
  return new Map(rows.map((r) => [r.page, r.ids]));
}

/** How many live links of the supplier are marked missing (by an earlier refresh). */
export async function markedMissingLinks(db: Warehouse, supplierId: string): Promise<number> {
  const marked = await sql<{ n: number }>`
    select count(*)::int as n from plot_suppliers where supplier_id = ${supplierId} and missing_since is not null and deleted_at is null`.execute(
    db,
  );
  return marked.rows[0]?.n ?? 0;
}

/**
 * Live links of the supplier that no page of the run's scan held, each with whether it was written
 * before the run began (`settled`) or since (by another refresh running meanwhile).
 */
export async function unseenLinks(
  db: Warehouse,
  runId: string,
  supplierId: string,
): Promise<Array<{ plot_id: string; settled: boolean }>> {
  // EXCEPT is set arithmetic (hashed or sorted), whatever the planner believes of tables just filled:
  // an anti-join planned on a fresh table's missing statistics cost about a second per supplier.
  const { rows } = await sql<Pick<Row<'plot_suppliers'>, 'plot_id'> & { settled: boolean }>`
    with unseen as (
      select plot_id from plot_suppliers where supplier_id = ${supplierId} and deleted_at is null
      except
      select u.id from sync_pages p cross join lateral unnest(p.ids) as u(id)
      where p.run_id = ${runId}::uuid and p.scope = ${supplierId} and p.entity = 'plots'
    )
    select l.plot_id, l.changed_at < (select started_at from sync_runs where id = ${runId}::uuid) as settled
    from unseen join plot_suppliers l on l.plot_id = unseen.plot_id and l.supplier_id = ${supplierId}`.execute(db);
  return rows;
}

/** Records the outcome on the supplier's part of the run, where the sweep reads it. */
export async function recordVerification(
  db: Warehouse,
  runId: string,
  supplierId: string,
  o: VerificationOutcome,
  requests: number,
): Promise<void> {
  await sql`
    update sync_run_scopes set missing = ${o.missing}, verify_status = ${o.status}, verify_pages = ${o.pages},
      verify_requests = ${requests}, verify_seen = ${o.found}::text[]
    where run_id = ${runId}::uuid and scope = ${supplierId}`.execute(db);
}
