import { sql } from 'kysely';
import type { TableCounts } from './counts.ts';
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
