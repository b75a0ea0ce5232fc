import { sql } from 'kysely';
import type { ComponentInput, CreateTransactionInput, Transaction } from '../../schema/upstream.ts';
import type { Row, Warehouse } from '../database.ts';
import { ENDED_STATES } from './batch-report.ts';
import * as serviceFacts from '../../schema/upstream/service-facts.ts';
import { jsonRecordset, type RecordsetColumns } from '../refresh/json-recordset.ts';
import type { ColumnValues } from '../refresh/rows.ts';
import {
  findUnstorableFields,
  replacementsByField,
  storableText,
  type Replacement,
} from '../../domain/unstorable-text.ts';

/**
 * transactions, transaction_components and transaction_status_events: what ddsync knows of each
 * accepted shipment at the service. Every write is idempotent (activities retry) and a status is
 * recorded once, with when and how it was first seen.
 */

export type StatusSource = 'create' | 'submit' | 'poll' | 'webhook';
/** ddsync's view of a transaction (transactions.state). */
export type TransactionState =
  | 'pending'
  | 'created'
  | 'submitted'
  | 'available'
  | 'error'
  | 'withdrawn'
  | 'failed'
  | 'timed_out'
  | 'cancelled';

export interface RequestToSend {
  key: string;
  line: number;
  body: CreateTransactionInput;
  /** How many times creating it was attempted before this attempt. */
  earlierAttempts: number;
  /** The service's id, when an earlier attempt recorded it. */
  transactionId: string | null;
  /** Milliseconds since the last create was sent (database time), when one was. */
  sinceCreateSentMs: number | null;
}

/**
 * The next accepted rows of a batch after `afterLine`, in file order (only keys and lines); with
 * `onlyPending`, only those whose transaction is pending (not started, or to be started again).
 */
export async function requestsAfter(
  db: Warehouse,
  batchId: string,
  afterLine: number,
  limit: number,
  onlyPending = false,
): Promise<Array<{ key: string; line: number }>> {
  const { rows } = await sql<Pick<Row<'transaction_requests'>, 'line'> & { key: string }>`
    select r.key, r.line from transaction_requests r
    where r.batch_id = ${batchId}::uuid and r.status = 'accepted' and r.line > ${afterLine}
      and (not ${onlyPending} or exists (select 1 from transactions t where t.key = r.key and t.state = 'pending'))
    order by r.line limit ${limit}`.execute(db);
  return rows;
}

/**
 * Counts one more attempt to create the transaction before the request is sent: a later attempt
 * then knows an earlier one may have reached the service (its response lost, or the worker gone).
 */
export async function beginCreateAttempt(db: Warehouse, key: string): Promise<RequestToSend> {
  const { rows } = await sql<
    Pick<Row<'transaction_requests'>, 'line' | 'create_attempts'> &
      Pick<Row<'transactions'>, 'id'> & { payload: CreateTransactionInput; since_sent_ms: number | null }
  >`
    with attempt as (
      update transaction_requests set create_attempts = create_attempts + 1
      where key = ${key} and status = 'accepted'
      returning line, payload, create_attempts, create_sent_at
    )
    select a.line, a.payload, a.create_attempts, t.id,
           (extract(epoch from clock_timestamp() - a.create_sent_at) * 1000)::float8 as since_sent_ms
    from attempt a left join transactions t on t.key = ${key}`.execute(db);
  const r = rows[0];
  if (!r) throw new Error(`no accepted request with key ${JSON.stringify(key)}`);
  return {
    key,
    line: r.line,
    body: r.payload,
    earlierAttempts: r.create_attempts - 1,
    transactionId: r.id,
    sinceCreateSentMs: r.since_sent_ms,
  };
}

/**
 * Just before the create is sent (each send of it): from now on it may exist at the service. Claimed
 * only while `attempt` is still the key's create_attempts (no later attempt began: that one sends, if
 * anything). Returns when the create before it was sent (null if none), for withdrawCreateSent, or
 * undefined when the claim is refused.
 */
export async function noteCreateSent(
  db: Warehouse,
  key: string,
  attempt: number,
): Promise<{ previous: Date | null } | undefined> {
  const { rows } = await sql<{ previous: Date | null }>`
    update transaction_requests r set create_sent_at = clock_timestamp()
    from (
      select id, create_sent_at as previous from transaction_requests
      where key = ${key} and status = 'accepted' and create_attempts = ${attempt}
      for update
    ) before
    where r.id = before.id
    returning before.previous`.execute(db);
  return rows[0] ? { previous: rows[0].previous } : undefined;
}

/**
 * The create was refused, so it was not applied: the settle time runs again from the create before
 * it (`previous`, from noteCreateSent), and the next attempt need not wait for this one. Only while
 * `attempt` is still the key's: a later attempt may have claimed (and sent) since, and its claim stays.
 */
export async function withdrawCreateSent(
  db: Warehouse,
  key: string,
  previous: Date | null,
  attempt: number,
): Promise<void> {
  await sql`
    update transaction_requests set create_sent_at = ${previous}
    where key = ${key} and status = 'accepted' and create_attempts = ${attempt}`.execute(db);
}

const FINAL_STATES: Readonly<Record<string, TransactionState>> = {
  AVAILABLE: 'available',
  ERROR: 'error',
  WITHDRAWN: 'withdrawn',
};

/** The state a status of the service puts a transaction in. */
export function stateOf(status: string): TransactionState {
  if (FINAL_STATES[status]) return FINAL_STATES[status]!;
  return status === 'DRAFT' ? 'created' : 'submitted';
}

function errorReasonOf(t: Transaction): string | null {
  const value = (t as unknown as Record<string, unknown>)[serviceFacts.TRANSACTION_ERROR_REASON_FIELD];
  return typeof value === 'string' && value !== '' ? value : null;
}

/**
 * Records what the service says of a transaction: its id, status, numbers and reason; the first
 * sighting of each status; the creation and validation times. A state ddsync decided (failed,
 * timed out, cancelled) is not overwritten by a later read, and a DRAFT seen after a later status
 * (a stale create answer) does not set the transaction back to created.
 */
export async function recordTransaction(
  db: Warehouse,
  key: string,
  t: Transaction,
  source: StatusSource,
): Promise<void> {
  const state = stateOf(t.status);
  const final = serviceFacts.FINAL_TRANSACTION_STATUSES.has(t.status);
  const { stored, replaced } = storedAnswer(t);
  await db.transaction().execute(async (trx) => {
    await sql`
      update transactions set
        id = ${stored.id}, status = ${stored.status},
        state = case when state in ('failed', 'timed_out', 'cancelled') then state else ${state} end,
        reference_number = coalesce(${stored.referenceNumber}, reference_number),
        verification_number = coalesce(${stored.verificationNumber}, verification_number),
        error_reason = coalesce(${stored.errorReason}, error_reason),
        replaced_values = case when ${replaced}::jsonb is null then replaced_values
          else coalesce(replaced_values, '{}') || ${replaced}::jsonb end,
        created_at = coalesce(created_at, now()),
        submitted_at = case when ${stored.status} not in ('DRAFT') then coalesce(submitted_at, now()) else submitted_at end,
        validated_at = case when ${final} then coalesce(validated_at, now()) else validated_at end,
        last_polled_at = case when ${source} in ('poll', 'webhook') then now() else last_polled_at end,
        updated_at = now()
      where key = ${key}
        -- No transaction goes back to DRAFT (as recordSightings): a create's answer recorded after the
        -- submit (an attempt thought dead, racing its retry) is stale; the status events keep it.
        and not (${stored.status} = 'DRAFT' and status is not null and status <> 'DRAFT')`.execute(trx);
    await sql`
      insert into transaction_status_events (transaction_key, status, source) values (${key}, ${stored.status}, ${source})
      on conflict (transaction_key, status) do nothing`.execute(trx);
  });
}

/**
 * What the warehouse keeps of the service's answer about a transaction, each text as stored (U+FFFD
 * for a NUL or a lone surrogate, domain/unstorable-text.ts), and what was so replaced, by field, as
 * the JSON kept in transactions.replaced_values (null when nothing was).
 */
export function storedAnswer(t: Transaction): {
  stored: {
    id: string;
    status: string;
    referenceNumber: string | null;
    verificationNumber: string | null;
    errorReason: string | null;
  };
  replaced: string | null;
} {
  const sent = {
    id: t.id,
    status: t.status,
    referenceNumber: t.referenceNumber ?? null,
    verificationNumber: t.verificationNumber ?? null,
    errorReason: errorReasonOf(t),
  };
  const found: Replacement[] = [];
  findUnstorableFields(sent, Object.keys(sent), '', found);
  if (found.length === 0) return { stored: sent, replaced: null };
  const stored = { ...sent };
  for (const key of Object.keys(stored) as Array<keyof typeof stored>) {
    const value = stored[key];
    if (value !== null) (stored as Record<string, string | null>)[key] = storableText(value);
  }
  return { stored, replaced: replacementsByField(found) };
}

/** The components as sent, once per transaction. */
export async function recordComponents(
  db: Warehouse,
  key: string,
  components: readonly ComponentInput[],
): Promise<void> {
  await recordComponentsOf(db, [{ key, components }]);
}

type ComponentRow = ColumnValues<
  'transaction_components',
  | 'transaction_key'
  | 'position'
  | 'kind'
  | 'hsn'
  | 'quantity'
  | 'unit'
  | 'description'
  | 'supplier_business_ids'
  | 'plot_ids'
  | 'dds_references'
>;
const COMPONENT_COLUMNS: RecordsetColumns<ComponentRow> = {
  transaction_key: 'text',
  position: 'int2',
  kind: 'text',
  hsn: 'text',
  quantity: 'float8',
  unit: 'text',
  description: 'text',
  supplier_business_ids: 'text[]',
  plot_ids: 'text[]',
  dds_references: 'jsonb',
};

/** The components as sent, for many transactions at once (once per transaction). */
export async function recordComponentsOf(
  db: Warehouse,
  entries: ReadonlyArray<{ key: string; components: readonly ComponentInput[] }>,
): Promise<void> {
  const rows = entries.flatMap(({ key, components }) =>
    components.map((c, position): ComponentRow => {
      const refs = 'ddsReferences' in c ? c.ddsReferences : undefined;
      const supplier = c as { supplierBusinessId?: string; supplierBusinessIds?: string[]; plotIds?: string[] };
      return {
        transaction_key: key,
        position,
        kind: refs ? 'dds_reference' : 'supplier',
        hsn: c.hsn,
        quantity: c.quantity,
        unit: c.unit,
        description: c.description ?? null,
        supplier_business_ids:
          supplier.supplierBusinessIds ?? (supplier.supplierBusinessId ? [supplier.supplierBusinessId] : null),
        plot_ids: supplier.plotIds ?? null,
        dds_references: refs ? JSON.stringify(refs) : null,
      };
    }),
  );
  if (rows.length === 0) return;
  await sql`
    insert into transaction_components (transaction_key, position, kind, hsn, quantity, unit, description, supplier_business_ids, plot_ids, dds_references)
    select transaction_key, position, kind, hsn, quantity, unit, description, supplier_business_ids, plot_ids, dds_references
    from ${jsonRecordset(rows, COMPONENT_COLUMNS)}
    on conflict (transaction_key, position) do nothing`.execute(db);
}

/** A state ddsync decides on its own: the service refused (failed), no final status in time, cancelled. */
export async function recordEnd(
  db: Warehouse,
  key: string,
  state: 'failed' | 'timed_out' | 'cancelled',
  error: string | null,
): Promise<void> {
  // Nothing of it is retried any more (step-failures.ts): last_error now says why it ended.
  await sql`
    update transactions set state = ${state}, last_error = coalesce(${error === null ? null : storableText(error)}, last_error), failed_attempts = 0, last_failed_at = null, updated_at = now()
    where key = ${key} and state not in ('available', 'error', 'withdrawn')`.execute(db);
}

export async function transactionIdOf(db: Warehouse, key: string): Promise<string | null> {
  const { rows } = await sql<Pick<Row<'transactions'>, 'id'>>`select id from transactions where key = ${key}`.execute(
    db,
  );
  return rows[0]?.id ?? null;
}

/** Requests of a batch that were never started (the batch was cancelled): they will not be sent. */
export async function cancelUnstarted(db: Warehouse, batchId: string): Promise<number> {
  const result = await sql`
    update transactions set state = 'cancelled', last_error = 'batch cancelled before this shipment was sent', updated_at = now()
    where batch_id = ${batchId}::uuid and state = 'pending' and id is null`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

export async function closeBatch(db: Warehouse, batchId: string, status: 'done' | 'cancelled'): Promise<void> {
  await sql`update submission_batches set status = ${status}, finished_at = coalesce(finished_at, now()) where id = ${batchId}::uuid`.execute(
    db,
  );
}

/** What the bulk submission needs to know of its batch, read from the warehouse (the source of truth). */
export interface BatchStanding {
  /** Started (line ≤ cursor) and not yet submitted: they hold a slot. */
  holding: string[];
  /** Per ddsync state, over the started transactions. */
  states: Record<string, number>;
  /** Started transactions that ended (available, error, withdrawn, failed, timed_out, cancelled). */
  ended: number;
  started: number;
}

/** Counted in the database (a batch of 100,000 is read every few seconds for days), in one query with the few keys holding a slot. */
export async function batchStanding(db: Warehouse, batchId: string, cursor: number): Promise<BatchStanding> {
  const { rows } = await sql<{ state: string; n: number; holding: string[] | null }>`
    select t.state, count(*)::int as n, array_agg(t.key order by r.line) filter (where t.state in ('pending', 'created')) as holding
    from transactions t join transaction_requests r on r.key = t.key and r.status = 'accepted'
    where t.batch_id = ${batchId}::uuid and r.line <= ${cursor}
    group by t.state`.execute(db);
  const states: Record<string, number> = {};
  const holding: string[] = [];
  let ended = 0;
  let started = 0;
  for (const r of rows) {
    states[r.state] = r.n;
    started += r.n;
    if ((ENDED_STATES as readonly string[]).includes(r.state)) ended += r.n;
    if (r.holding) holding.push(...r.holding);
  }
  return { holding, states, ended, started };
}
