import { sql } from 'kysely';
import type { Row, Warehouse } from '../database.ts';

// What `ddsync status` reads from the warehouse: the view bi_sync_status (sql/migrations/0020), who it
// read as, and ddsync's webhooks as last pulled from the service (for drift against DDSYNC_WEBHOOKS).
// Queries only, in one read-only transaction; the judging is elsewhere (cli/status/judge.ts).

export type SyncStatusLevel = 'ok' | 'warning' | 'critical';

/** One row of bi_sync_status. */
export interface SyncStatusRow {
  check: string;
  /** As the view judged it, with the default thresholds. */
  viewLevel: SyncStatusLevel;
  since: Date | null;
  ageSeconds: number | null;
  items: number;
  failing: number;
  failuresInARow: number | null;
  oldest: string | null;
  message: string;
}

/** A webhook of ddsync's (managed) as the last pull from the service recorded it. */
export interface RecordedWebhook {
  id: string;
  url: string;
  description: string | null;
  events: string[];
  isActive: boolean;
  createdAt: string | null;
}

export interface WarehouseStatus {
  /** The role the statements ran as (current_user). */
  role: string;
  /** Whether that role is in ddsync_reader, the read-only role for BI tools. */
  inReaderRole: boolean;
  rows: SyncStatusRow[];
  webhooks: RecordedWebhook[];
  /** Seconds since the attempts and stats of ddsync's webhooks were last pulled; null if never. */
  webhooksPulledAgoSeconds: number | null;
}

/** A status read never waits long on a lock or a slow plan: it says it could not read instead. */
const STATEMENT_TIMEOUT_MS = 30_000;

const LEVELS: ReadonlySet<string> = new Set(['ok', 'warning', 'critical']);

/**
 * Reads the status in one read-only transaction, so that whatever role `db` connects as, this writes
 * nothing (the BI role could not anyway; DATABASE_URL's could).
 */
export async function readWarehouseStatus(db: Warehouse): Promise<WarehouseStatus> {
  return db
    .transaction()
    .setAccessMode('read only')
    .execute(async (trx) => {
      await sql`select set_config('statement_timeout', ${String(STATEMENT_TIMEOUT_MS)}, true)`.execute(trx);
      const who = await sql<{ role: string; in_reader_role: boolean }>`
        select current_user as role,
               -- A superuser is a member of every role: that says nothing about reading as BI tools do.
               coalesce((select not r.rolsuper and pg_has_role(current_user, 'ddsync_reader', 'member')
                         from pg_roles r
                         where r.rolname = current_user and exists (select 1 from pg_roles where rolname = 'ddsync_reader')),
                        false) as in_reader_role`.execute(trx);
      const rows = await trx.selectFrom('bi_sync_status').selectAll().execute();
      const hooks = await sql<
        Pick<Row<'webhooks'>, 'id' | 'url' | 'description' | 'events' | 'is_active' | 'created_at'>
      >`
        select id, url, description, events, is_active, created_at from webhooks
        where managed and deleted_at is null order by created_at nulls last, id`.execute(trx);
      const pulled = await sql<{ seconds: number | null }>`
        select floor(extract(epoch from now() - max(s.taken_at)))::bigint as seconds
        from webhook_stats s join webhooks w on w.id = s.webhook_id
        where w.managed and w.deleted_at is null`.execute(trx);
      return {
        role: who.rows[0]!.role,
        inReaderRole: who.rows[0]!.in_reader_role,
        rows: rows.map((r) => ({
          check: r.check_name ?? '(unnamed)',
          viewLevel: LEVELS.has(r.level ?? '') ? (r.level as SyncStatusLevel) : 'critical',
          since: r.since,
          ageSeconds: r.age_seconds,
          items: r.items ?? 0,
          failing: r.failing ?? 0,
          failuresInARow: r.failures_in_a_row,
          oldest: r.oldest_item,
          message: r.message ?? '',
        })),
        webhooks: hooks.rows.map((h) => ({
          id: h.id,
          url: h.url,
          description: h.description,
          events: h.events,
          // The service's default: a webhook it lists without the flag is active.
          isActive: h.is_active ?? true,
          createdAt: h.created_at?.toISOString() ?? null,
        })),
        webhooksPulledAgoSeconds: pulled.rows[0]?.seconds ?? null,
      };
    });
}
