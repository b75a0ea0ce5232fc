import { sql } from 'kysely';
import type { Webhook, WebhookAttempt, WebhookStats } from '../../schema/upstream.ts';
import type { Row, Warehouse } from '../database.ts';
import { jsonRecordset, type RecordsetColumns } from '../refresh/json-recordset.ts';
import type { ColumnValues } from '../refresh/rows.ts';
import { managedName } from '../../schema/desired-webhooks.ts';
import { oldestFirst } from '../../schema/upstream/order.ts';
import {
  findUnstorable,
  findUnstorableFields,
  replacementsByField,
  storableText,
  type Replacement,
} from '../../domain/unstorable-text.ts';
import { storable } from '../refresh/json-recordset.ts';

/** webhooks, webhook_attempts, webhook_stats and webhook_events in the warehouse. Idempotent writes. */

const RESPONSE_KEPT = 2_000;

type WebhookRow = ColumnValues<
  'webhooks',
  | 'id'
  | 'name'
  | 'managed'
  | 'url'
  | 'description'
  | 'events'
  | 'is_active'
  | 'created_at'
  | 'updated_at'
  | 'replaced_values'
>;
const WEBHOOK_COLUMNS: RecordsetColumns<WebhookRow> = {
  id: 'text',
  name: 'text',
  managed: 'boolean',
  url: 'text',
  description: 'text',
  events: 'text[]',
  is_active: 'boolean',
  created_at: 'timestamptz',
  updated_at: 'timestamptz',
  replaced_values: 'jsonb',
};

type WebhookNameRow = ColumnValues<'webhooks', 'id' | 'name'>;
const WEBHOOK_NAME_COLUMNS: RecordsetColumns<WebhookNameRow> = { id: 'text', name: 'text' };

type AttemptRow = ColumnValues<
  'webhook_attempts',
  | 'id'
  | 'webhook_id'
  | 'msg_id'
  | 'url'
  | 'status'
  | 'response_status_code'
  | 'response'
  | 'attempted_at'
  | 'event_type'
  | 'replaced_values'
>;
const ATTEMPT_COLUMNS: RecordsetColumns<AttemptRow> = {
  id: 'text',
  webhook_id: 'text',
  msg_id: 'text',
  url: 'text',
  status: 'text',
  response_status_code: 'int4',
  response: 'text',
  attempted_at: 'timestamptz',
  event_type: 'text',
  replaced_values: 'jsonb',
};

/**
 * What of `record`'s members `fields` the warehouse stores with U+FFFD for a NUL or a lone surrogate
 * (jsonRecordset replaces them), by field, as the JSON of a `replaced_values` column; null when none.
 */
function replacedOf(record: unknown, fields: readonly string[]): string | null {
  const found: Replacement[] = [];
  findUnstorableFields(record as Record<string, unknown>, fields, '', found);
  return replacementsByField(found);
}

/**
 * The service's webhooks as listed now; those it no longer lists are marked deleted. A managed name
 * belongs to one live row (a unique index): of two webhooks carrying the same marker, the oldest
 * keeps the name (as reconciling keeps it); a name that moved to another webhook (recreated, or
 * deleted at the service and created again) is freed from the old row first.
 */
export async function recordWebhooks(db: Warehouse, hooks: readonly Webhook[]): Promise<void> {
  const holder = new Map<string, Webhook>();
  for (const w of [...hooks].sort(oldestFirst)) {
    const name = managedName(w.description);
    if (name !== null && !holder.has(name)) holder.set(name, w);
  }
  const rows = hooks.map((w): WebhookRow => {
    const marked = managedName(w.description);
    // A second webhook with the same marker is ddsync's too, but nameless until reconciling deletes it.
    const name = marked !== null && holder.get(marked) === w ? marked : null;
    return {
      id: w.id,
      name,
      managed: marked !== null,
      url: w.url,
      description: w.description,
      events: w.events ?? [],
      is_active: w.isActive,
      created_at: w.createdAt ?? null,
      updated_at: w.updatedAt ?? null,
      replaced_values: replacedOf(w, ['id', 'url', 'description', 'events']),
    };
  });
  const named = rows.filter((r) => r.name !== null).map((r): WebhookNameRow => ({ id: r.id, name: r.name }));
  await db.transaction().execute(async (trx) => {
    await sql`update webhooks set deleted_at = now() where deleted_at is null and not (id = any(${hooks.map((w) => w.id)}::text[]))`.execute(
      trx,
    );
    if (named.length > 0) {
      await sql`
        update webhooks w set name = null, changed_at = now()
        from ${jsonRecordset(named, WEBHOOK_NAME_COLUMNS)}
        where w.deleted_at is null and w.name = r.name and w.id <> r.id`.execute(trx);
    }
    if (rows.length > 0) {
      await sql`
        insert into webhooks (id, name, managed, url, description, events, is_active, created_at, updated_at, replaced_values)
        select id, name, managed, url, description, events, is_active, created_at, updated_at, replaced_values
        from ${jsonRecordset(rows, WEBHOOK_COLUMNS)}
        on conflict (id) do update set name = excluded.name, managed = excluded.managed, url = excluded.url, description = excluded.description,
          events = excluded.events, is_active = excluded.is_active, created_at = excluded.created_at, updated_at = excluded.updated_at,
          replaced_values = excluded.replaced_values, changed_at = now(), deleted_at = null
        -- Compared as sent: replaced_values holds what a replacement changed, so one changed only there is a change.
        where (webhooks.name, webhooks.managed, webhooks.url, webhooks.description, webhooks.events, webhooks.is_active, webhooks.deleted_at, webhooks.replaced_values)
          is distinct from (excluded.name, excluded.managed, excluded.url, excluded.description, excluded.events, excluded.is_active, null, excluded.replaced_values)`.execute(
        trx,
      );
    }
  });
}

/** Each attempt once; returns how many were new. */
export async function recordAttempts(
  db: Warehouse,
  webhookId: string,
  attempts: readonly WebhookAttempt[],
): Promise<number> {
  if (attempts.length === 0) return 0;
  const rows = attempts.map(
    (a): AttemptRow => ({
      id: a.id,
      webhook_id: webhookId,
      msg_id: a.msgId ?? null,
      url: a.url ?? null,
      status: a.status ?? null,
      response_status_code: typeof a.responseStatusCode === 'number' ? a.responseStatusCode : null,
      response: typeof a.response === 'string' ? a.response.slice(0, RESPONSE_KEPT) : null,
      attempted_at: a.timestamp ?? null,
      event_type: a.msg?.eventType ?? null,
      // The response as kept (its first RESPONSE_KEPT characters), like every other field.
      replaced_values: replacedOf(
        { ...a, response: typeof a.response === 'string' ? a.response.slice(0, RESPONSE_KEPT) : null },
        ['id', 'msgId', 'url', 'status', 'response'],
      ),
    }),
  );
  const result = await sql`
    insert into webhook_attempts (id, webhook_id, msg_id, url, status, response_status_code, response, attempted_at, event_type, replaced_values)
    select id, webhook_id, msg_id, url, status, response_status_code, response, attempted_at, event_type, replaced_values
    from ${jsonRecordset(rows, ATTEMPT_COLUMNS)}
    on conflict (id) do nothing`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

export async function recordStats(db: Warehouse, webhookId: string, stats: WebhookStats): Promise<void> {
  await sql`
    insert into webhook_stats (webhook_id, successful_messages, failed_messages)
    values (${webhookId}, ${stats.successfulMessages}, ${stats.failedMessages}) on conflict do nothing`.execute(db);
}

/** The service id of the managed webhook `name`, as last seen. */
export async function managedWebhookId(db: Warehouse, name: string): Promise<string | undefined> {
  const { rows } = await sql<
    Pick<Row<'webhooks'>, 'id'>
  >`select id from webhooks where name = ${name} and managed and deleted_at is null`.execute(db);
  return rows[0]?.id;
}

export interface IncomingEvent {
  msgId: string;
  webhookName: string;
  eventType: string | null;
  payload: unknown;
  sentAt: Date | null;
  transactionId: string | null;
}

/**
 * Stores a message once: true the first time; a retry of the same message only counts a delivery.
 * Text Postgres cannot hold (a NUL, a lone surrogate: in the payload, keys included, or in the
 * message's id, type or transaction id) is stored as U+FFFD and kept by path in `replaced_values`
 * with the value as sent, instead of failing the message on every delivery.
 */
export async function storeEvent(db: Warehouse, e: IncomingEvent): Promise<boolean> {
  const found: Replacement[] = [];
  findUnstorableFields(
    e as unknown as Record<string, unknown>,
    ['msgId', 'webhookName', 'eventType', 'transactionId'],
    '',
    found,
  );
  findUnstorable(e.payload, 'payload', found);
  const text = (value: string | null) => (value === null ? null : storableText(value));
  const { rows } = await sql<{ first: boolean }>`
    insert into webhook_events (msg_id, webhook_name, event_type, payload, sent_at, transaction_id, replaced_values)
    values (${storableText(e.msgId)}, ${storableText(e.webhookName)}, ${text(e.eventType)}, ${storable(JSON.stringify(e.payload))}::jsonb,
      ${e.sentAt}, ${text(e.transactionId)}, ${replacementsByField(found)}::jsonb)
    on conflict (msg_id) do update set deliveries = webhook_events.deliveries + 1, last_received_at = now()
    returning (xmax = 0) as first`.execute(db);
  return rows[0]?.first ?? false;
}

export async function markHandled(
  db: Warehouse,
  msgId: string,
  handling: string,
  error: string | null = null,
): Promise<void> {
  await sql`update webhook_events set handling = ${handling}, handling_error = ${error === null ? null : storableText(error)}, handled_at = now() where msg_id = ${msgId}`.execute(
    db,
  );
}

export async function pendingEvents(
  db: Warehouse,
  limit = 500,
): Promise<Array<{ msg_id: string; event_type: string | null; transaction_id: string | null; payload: unknown }>> {
  const { rows } = await sql<
    Pick<Row<'webhook_events'>, 'msg_id' | 'event_type' | 'transaction_id'> & { payload: unknown }
  >`
    select msg_id, event_type, transaction_id, payload from webhook_events
    where handling = 'pending' and (next_dispatch_at is null or next_dispatch_at <= now())
    order by received_at limit ${limit}`.execute(db);
  return rows;
}

/** Dispatch tries before an event is marked failed, and the longest wait between two. */
export const DISPATCH_MAX_ATTEMPTS = 20;
const DISPATCH_MAX_WAIT_S = 3_600;

/** A dispatch that failed: tried again after 30 s, doubling up to an hour; failed after the last try. */
export async function noteDispatchFailure(db: Warehouse, msgId: string, error: string): Promise<void> {
  await sql`
    update webhook_events set
      dispatch_attempts = dispatch_attempts + 1,
      next_dispatch_at = now() + least(30 * power(2, dispatch_attempts), ${DISPATCH_MAX_WAIT_S}) * interval '1 second',
      handling = case when dispatch_attempts + 1 >= ${DISPATCH_MAX_ATTEMPTS} then 'failed' else handling end,
      handled_at = case when dispatch_attempts + 1 >= ${DISPATCH_MAX_ATTEMPTS} then now() else handled_at end,
      handling_error = ${storableText(error.slice(0, 1_000))}
    where msg_id = ${msgId} and handling = 'pending'`.execute(db);
}

/** The request key (customId) ddsync gave the transaction the service calls `transactionId`. */
export async function transactionKeyOf(db: Warehouse, transactionId: string): Promise<string | undefined> {
  const { rows } = await sql<
    Pick<Row<'transactions'>, 'key'>
  >`select key from transactions where id = ${transactionId}`.execute(db);
  return rows[0]?.key;
}
