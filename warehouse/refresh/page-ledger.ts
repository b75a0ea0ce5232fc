import { sql } from 'kysely';
import { mergeReplayCounts, type TableCounts } from './counts.ts';
import type { Warehouse } from '../database.ts';

/**
 * The record a page leaves in sync_pages: which ids it saw (for the sweep), how many records the
 * service sent, what was written, and the requests it took. Keyed by (run, scope, entity, page), so a
 * replayed page overwrites its own record; request counters add up across attempts.
 */
export interface PageRecord {
  runId: string;
  scope: string;
  entity: 'plots' | 'businesses' | 'business_connections' | 'business_invitations';
  page: number;
  ids: readonly string[];
  received: number;
  counts: TableCounts;
  requests: RequestCounts;
  /** Hash of the page's text (supplier pages): a verification read compares its own with it. */
  contentHash?: string | undefined;
}

export interface RequestCounts {
  requests: number;
  retries: number;
  rateLimited: number;
}

export async function recordPage(db: Warehouse, r: PageRecord): Promise<void> {
  await sql`
    insert into sync_pages (run_id, scope, entity, page, ids, received, counts, requests, retries, rate_limited, content_hash)
    values (${r.runId}::uuid, ${r.scope}, ${r.entity}, ${r.page}, ${r.ids}::text[], ${r.received}, ${JSON.stringify(r.counts)}::jsonb,
            ${r.requests.requests}, ${r.requests.retries}, ${r.requests.rateLimited}, ${r.contentHash ?? null})
    on conflict (run_id, scope, entity, page) do update set ids = excluded.ids, received = excluded.received, counts = excluded.counts, reused = false,
      content_hash = excluded.content_hash,
      requests = sync_pages.requests + excluded.requests, retries = sync_pages.retries + excluded.retries,
      rate_limited = sync_pages.rate_limited + excluded.rate_limited, written_at = now()`.execute(db);
}

/** Which page record: (run, scope, entity, page). */
export type PageKey = Pick<PageRecord, 'runId' | 'scope' | 'entity' | 'page'>;

/**
 * The page's record as a replay finds it, locked for the transaction (so two attempts of one page
 * take turns), if an earlier attempt committed one. Call it before the page's writes.
 */
export async function lockPageRecord(trx: Warehouse, key: PageKey): Promise<{ counts: TableCounts } | undefined> {
  const before = await sql<{ counts: TableCounts }>`
      select counts from sync_pages
      where run_id = ${key.runId}::uuid and scope = ${key.scope} and entity = ${key.entity} and page = ${key.page}
      for update`.execute(trx);
  return before.rows[0];
}

/**
 * What a page's record says it wrote: this attempt's counts, or, when an earlier attempt committed
 * (its completion lost: a killed worker, a timed-out activity), the first attempt's counts plus what
 * this one changed. A run's summary then reads the same whoever ran its pages, and however often.
 */
export function recordedCounts(before: { counts: TableCounts } | undefined, counts: TableCounts): TableCounts {
  return before === undefined ? counts : mergeReplayCounts(before.counts, counts);
}
