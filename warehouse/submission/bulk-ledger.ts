import { sql } from 'kysely';
import type { ComponentInput, CreateTransactionInput, Transaction } from '../../schema/upstream.ts';
import type { Row, Warehouse } from '../database.ts';
import * as serviceFacts from '../../schema/upstream/service-facts.ts';
import { jsonRecordset, type RecordsetColumns } from '../refresh/json-recordset.ts';
import type { ColumnValues } from '../refresh/rows.ts';
import {
  recordComponents,
  recordComponentsOf,
  stateOf,
  storedAnswer,
  type RequestToSend,
  type StatusSource,
} from './transaction-ledger.ts';

/**
 * The transaction ledger read and written a chunk at a time, for the batch workflow (submitBatch):
 * the same facts as transaction-ledger.ts records one key at a time (and the same rules: a state
 * ddsync decided is not overwritten, each status is recorded once), in a few statements per chunk,
 * plus when each transaction is read next (`next_poll_at`), computed here from the ledger's times.
 */

/** A create claimed for a key: the attempt the claim counted (transaction_requests.create_attempts). */
type ClaimRow = ColumnValues<'transaction_requests', 'key' | 'create_attempts'>;
const CLAIM_COLUMNS: RecordsetColumns<ClaimRow> = { key: 'text', create_attempts: 'int4' };

/** What a sighting writes of a transaction, with whether its status is final and how it was seen. */
type SightingRow = ColumnValues<
  'transactions',
  'key' | 'id' | 'status' | 'state' | 'reference_number' | 'verification_number' | 'error_reason' | 'replaced_values'
> & { final: boolean; seen_at: string | null } & ColumnValues<'transaction_status_events', 'source'>;
const SIGHTING_COLUMNS: RecordsetColumns<SightingRow> = {
  key: 'text',
  id: 'text',
  status: 'text',
  state: 'text',
  reference_number: 'text',
  verification_number: 'text',
  error_reason: 'text',
  replaced_values: 'jsonb',
  final: 'boolean',
  seen_at: 'timestamptz',
  source: 'text',
};

type StatusEventRow = ColumnValues<'transaction_status_events', 'transaction_key' | 'status' | 'source'>;
const STATUS_EVENT_COLUMNS: RecordsetColumns<StatusEventRow> = {
  transaction_key: 'text',
  status: 'text',
  source: 'text',
};

/** A key's failure or end, with its message (transactions.last_error). */
type KeyErrorRow = ColumnValues<'transactions', 'key' | 'last_error'>;
const KEY_ERROR_COLUMNS: RecordsetColumns<KeyErrorRow> = { key: 'text', last_error: 'text' };

/** The waits of following, as the batch workflow passes them (TransactionTiming without the settle time). */
export interface FollowTiming {
  firstPollMs: number;
  maxPollMs: number;
  euWaitMs: number;
  deadlineMs: number;
}

/** Marks the batch as followed in bulk (webhook events wake it) and says where its lines end. */
export async function openBulkBatch(db: Warehouse, batchId: string): Promise<{ lastLine: number; accepted: number }> {
  await sql`update submission_batches set followed_in_bulk = true where id = ${batchId}::uuid and not followed_in_bulk`.execute(
    db,
  );
  // Submitted under an earlier version (a batch run again after its workflow was terminated): read at once.
  await sql`
    update transactions set next_poll_at = now()
    where batch_id = ${batchId}::uuid and state = 'submitted' and id is not null and next_poll_at is null`.execute(db);
  const { rows } = await sql<{ last_line: number | null; accepted: number }>`
    select max(line)::int as last_line, count(*)::int as accepted from transaction_requests
    where batch_id = ${batchId}::uuid and status = 'accepted'`.execute(db);
  return { lastLine: rows[0]?.last_line ?? 0, accepted: rows[0]?.accepted ?? 0 };
}

/**
 * Counts one more create attempt for every key of lines (afterLine, throughLine] that is not sent yet
 * (pending, or created and not submitted), before any request: the bulk beginCreateAttempt. A key
 * already submitted or ended is not returned: the ledger is the record of what was sent.
 */
export async function beginCreateAttempts(
  db: Warehouse,
  batchId: string,
  afterLine: number,
  throughLine: number,
): Promise<Array<RequestToSend & { attempt: number }>> {
  const { rows } = await sql<
    Pick<Row<'transaction_requests'>, 'line' | 'create_attempts'> &
      Pick<Row<'transactions'>, 'id'> & { key: string; payload: CreateTransactionInput; since_sent_ms: number | null }
  >`
    with todo as (
      select r.id from transaction_requests r join transactions t on t.key = r.key
      where r.batch_id = ${batchId}::uuid and r.status = 'accepted' and r.line > ${afterLine} and r.line <= ${throughLine}
        and t.state in ('pending', 'created')
    ), attempt as (
      update transaction_requests r set create_attempts = r.create_attempts + 1
      from todo where r.id = todo.id
      returning r.key, r.line, r.payload, r.create_attempts, r.create_sent_at
    )
    select a.key, a.line, a.payload, a.create_attempts, t.id,
           (extract(epoch from clock_timestamp() - a.create_sent_at) * 1000)::float8 as since_sent_ms
    from attempt a join transactions t on t.key = a.key
    order by a.line`.execute(db);
  return rows.map((r) => ({
    key: r.key,
    line: r.line,
    body: r.payload,
    attempt: r.create_attempts,
    earlierAttempts: r.create_attempts - 1,
    transactionId: r.id,
    sinceCreateSentMs: r.since_sent_ms,
  }));
}

/**
 * Just before their creates are sent: each key is claimed for sending only if no later attempt began
 * since this one (`attempt` is still the key's create_attempts), so two attempts that overlap (a worker
 * thought dead that is still running) never both send. Returns the claims made (key and attempt: two
 * attempts of one key may ask in one call), each with when the create before it was sent (for
 * withdrawCreateSent).
 */
export async function noteCreatesSent(
  db: Warehouse,
  claims: ReadonlyArray<{ key: string; attempt: number }>,
): Promise<Array<{ key: string; attempt: number; previous: Date | null }>> {
  if (claims.length === 0) return [];
  const { rows } = await sql<{ key: string; attempt: number; previous: Date | null }>`
    update transaction_requests r set create_sent_at = clock_timestamp()
    from (
      select q.id, q.create_sent_at as previous from transaction_requests q
      join ${jsonRecordset(
        claims.map((c): ClaimRow => ({ key: c.key, create_attempts: c.attempt })),
        CLAIM_COLUMNS,
        'c',
      )}
        on q.key = c.key and q.status = 'accepted' and q.create_attempts = c.create_attempts
      -- The keys as an array too: the planner then sees how few there are and probes the key index,
      -- where a recordset (always guessed at 100 rows) against a table not yet analyzed scanned it whole.
      where q.key = any(${claims.map((c) => c.key)}::text[])
      for update of q
    ) before
    where r.id = before.id
    returning r.key, r.create_attempts as attempt, before.previous`.execute(db);
  return rows;
}

export interface Sighting {
  key: string;
  transaction: Transaction;
  source: StatusSource;
  /**
   * When the service gave this answer (a create's or a submit's), when it was before the record: a
   * chunk records its keys together at its end, and a key's submit time (submitted_at, its first read
   * `firstPollMs` after it, its deadline) is its own, not the chunk's end. Never later than the record.
   */
  at?: Date;
}

function errorReasonOf(t: Transaction): string | null {
  const value = (t as unknown as Record<string, unknown>)[serviceFacts.TRANSACTION_ERROR_REASON_FIELD];
  return typeof value === 'string' && value !== '' ? value : null;
}

/**
 * Records what the service said of many transactions in one statement (recordTransaction's rules),
 * and when each is read next: a submitted one `firstPollMs` after it was submitted (its own submit's
 * time, `at`, not the record's); after a read, the
 * backoff (firstPollMs doubling per read, at most maxPollMs), never sooner than `euWaitMs` after it was
 * first seen SUBMITTED, never later than its deadline. A webhook's wake-up older than the read is cleared.
 */
export async function recordSightings(
  db: Warehouse,
  sightings: readonly Sighting[],
  timing: FollowTiming,
  readStartedAt?: Date,
): Promise<void> {
  if (sightings.length === 0) return;
  // Every status seen is an event; the row takes the last sighting of each key (create, then submit).
  const events = sightings.map(
    ({ key, transaction: t, source }): StatusEventRow => ({ transaction_key: key, status: t.status, source }),
  );
  const last = new Map(sightings.map((s) => [s.key, s]));
  const rows = [...last.values()].map(
    ({ key, transaction: t, source, at }): SightingRow => ({
      key,
      id: t.id,
      status: t.status,
      state: stateOf(t.status),
      reference_number: t.referenceNumber ?? null,
      verification_number: t.verificationNumber ?? null,
      error_reason: errorReasonOf(t),
      // jsonRecordset stores what Postgres cannot hold as U+FFFD; what it so replaced is kept by field.
      replaced_values: storedAnswer(t).replaced,
      final: serviceFacts.FINAL_TRANSACTION_STATUSES.has(t.status),
      seen_at: at?.toISOString() ?? null,
      source,
    }),
  );
  const read = readStartedAt ?? new Date();
  await sql`
    with r as (
      select *, least(coalesce(seen_at, now()), now()) as at from ${jsonRecordset(rows, SIGHTING_COLUMNS)}
    ), seen as (
      insert into transaction_status_events (transaction_key, status, source)
      select transaction_key, status, source from ${jsonRecordset(events, STATUS_EVENT_COLUMNS, 'e')}
      on conflict (transaction_key, status) do nothing
    )
    update transactions t set
      id = r.id, status = r.status,
      state = case when t.state in ('failed', 'timed_out', 'cancelled') then t.state else r.state end,
      reference_number = coalesce(r.reference_number, t.reference_number),
      verification_number = coalesce(r.verification_number, t.verification_number),
      error_reason = coalesce(r.error_reason, t.error_reason),
      replaced_values = case when r.replaced_values is null then t.replaced_values
        else coalesce(t.replaced_values, '{}') || r.replaced_values end,
      created_at = coalesce(t.created_at, r.at),
      submitted_at = case when r.status <> 'DRAFT' then coalesce(t.submitted_at, r.at) else t.submitted_at end,
      validated_at = case when r.final then coalesce(t.validated_at, now()) else t.validated_at end,
      last_polled_at = case when r.source in ('poll', 'webhook') then now() else t.last_polled_at end,
      polls = case when r.source in ('poll', 'webhook') then t.polls + 1 else t.polls end,
      woken_at = case when r.source in ('poll', 'webhook') and t.woken_at <= ${read} then null else t.woken_at end,
      next_poll_at = case
        when r.final then null
        -- A webhook woke it while it was being read: read again at once (what was read may predate it).
        when r.source in ('poll', 'webhook') and t.woken_at > ${read} then now()
        when r.source in ('create', 'submit') then
          case when r.status = 'DRAFT' then null
               else coalesce(t.next_poll_at, r.at + ${timing.firstPollMs} * interval '1 millisecond') end
        else least(
          coalesce(t.submitted_at, now()) + ${timing.deadlineMs} * interval '1 millisecond',
          greatest(
            now() + least(${timing.firstPollMs}::float8 * power(2, least(t.polls + 1, 40)), ${timing.maxPollMs}::float8) * interval '1 millisecond',
            coalesce(
              (select e.seen_at from transaction_status_events e where e.transaction_key = t.key and e.status = 'SUBMITTED'),
              case when r.status = 'SUBMITTED' then now() end
            ) + ${timing.euWaitMs} * interval '1 millisecond'))
      end,
      updated_at = now()
    from r where t.key = r.key and t.key = any(${rows.map((r) => r.key)}::text[])
      -- No transaction goes back to DRAFT: a create's answer recorded after its submit (an attempt
      -- thought dead, racing its retry) is stale, and would leave a submitted one never read again.
      and not (r.status = 'DRAFT' and t.status is not null and t.status <> 'DRAFT')`.execute(db);
}

/**
 * Records sightings (and components) in bulk; when the statement fails (one row a trigger or a
 * constraint refuses), key by key, so one bad row holds back only itself. Returns the keys that could
 * not be recorded, with why.
 */
export async function recordSightingsOrEach(
  db: Warehouse,
  sightings: readonly Sighting[],
  components: ReadonlyArray<{ key: string; components: readonly ComponentInput[] }>,
  timing: FollowTiming,
  readStartedAt?: Date,
): Promise<Map<string, unknown>> {
  const failed = new Map<string, unknown>();
  try {
    await db.transaction().execute(async (trx) => {
      await recordSightings(trx, sightings, timing, readStartedAt);
      await recordComponentsOf(trx, components);
    });
    return failed;
  } catch {
    // Key by key below: the failure is recorded on the keys it belongs to.
  }
  const componentsOf = new Map(components.map((c) => [c.key, c.components]));
  const keys = [...new Set([...sightings.map((s) => s.key), ...components.map((c) => c.key)])];
  for (const key of keys) {
    try {
      await db.transaction().execute(async (trx) => {
        await recordSightings(
          trx,
          sightings.filter((s) => s.key === key),
          timing,
          readStartedAt,
        );
        await recordComponents(trx, key, componentsOf.get(key) ?? []);
      });
    } catch (error) {
      failed.set(key, error);
    }
  }
  return failed;
}

/** Transactions of the batch past their deadline without a final status: ended as timed_out. */
export async function endTimedOut(db: Warehouse, batchId: string, deadlineMs: number): Promise<number> {
  const result = await sql`
    update transactions set state = 'timed_out',
      last_error = 'no final status within ' || round(${deadlineMs}::numeric / 60000) || ' minutes (last: ' || coalesce(status, 'none') || ')',
      failed_attempts = 0, last_failed_at = null, next_poll_at = null, updated_at = now()
    where batch_id = ${batchId}::uuid and state in ('created', 'submitted') and next_poll_at is not null
      and submitted_at + ${deadlineMs} * interval '1 millisecond' <= now()`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

/** Transactions of the batch due for a read (oldest due first), whether a webhook woke each, and when they were picked (database time). */
export async function dueTransactions(
  db: Warehouse,
  batchId: string,
  limit: number,
): Promise<Array<{ key: string; id: string; woken: boolean; readAt: Date }>> {
  const { rows } = await sql<Pick<Row<'transactions'>, 'key'> & { id: string; woken: boolean; readAt: Date }>`
    select key, id, woken_at is not null as woken, clock_timestamp() as "readAt" from transactions
    where batch_id = ${batchId}::uuid and state in ('created', 'submitted') and id is not null
      and next_poll_at <= clock_timestamp()
    order by next_poll_at limit ${limit}`.execute(db);
  return rows;
}

/** Transactions of the batch per state (a read of all of them: at 100,000 about a tenth of a second). */
export async function batchStates(db: Warehouse, batchId: string): Promise<Record<string, number>> {
  const { rows } = await sql<{ state: string; n: number }>`
    select state, count(*)::int as n from transactions where batch_id = ${batchId}::uuid group by state`.execute(db);
  return Object.fromEntries(rows.map((r) => [r.state, r.n]));
}

/**
 * How long until the batch's next transaction is due (0 when one is), null when none waits for a read.
 * From the index of due transactions (submitted ones) and the few created ones: not a read of the batch.
 */
export async function nextDueInMs(db: Warehouse, batchId: string): Promise<number | null> {
  const { rows } = await sql<{ next_due_ms: number | null }>`
    select (extract(epoch from least(
      (select min(next_poll_at) from transactions where batch_id = ${batchId}::uuid and state = 'submitted'),
      (select min(next_poll_at) from transactions where batch_id = ${batchId}::uuid and state = 'created')
    ) - clock_timestamp()) * 1000)::float8 as next_due_ms`.execute(db);
  const next = rows[0]?.next_due_ms ?? null;
  return next === null ? null : Math.max(0, Math.ceil(next));
}

/**
 * A `transaction.updated` webhook for a transaction of a batch followed in bulk: it is due now, woken
 * by the webhook. Returns the batch to wake, or undefined when the transaction is not followed in bulk
 * (a batch of an earlier version: its transaction's own workflow is signalled) or not known.
 */
export async function wakeTransaction(
  db: Warehouse,
  transactionId: string,
): Promise<{ key: string; batchId: string; inBulk: boolean } | undefined> {
  const { rows } = await sql<{ key: string; batch_id: string; in_bulk: boolean }>`
    with t as (
      select t.key, t.batch_id, b.followed_in_bulk from transactions t join submission_batches b on b.id = t.batch_id
      where t.id = ${transactionId}
    ), woken as (
      update transactions x set woken_at = now(), next_poll_at = least(x.next_poll_at, now())
      from t where x.key = t.key and t.followed_in_bulk and x.state in ('created', 'submitted') and x.next_poll_at is not null
    )
    select key, batch_id::text as batch_id, followed_in_bulk as in_bulk from t`.execute(db);
  const r = rows[0];
  return r ? { key: r.key, batchId: r.batch_id, inBulk: r.in_bulk } : undefined;
}

/**
 * Keys of the batch not submitted when it was cancelled, with what an earlier attempt may have
 * created: those with an id, or whose create was attempted (it may have reached the service).
 */
export async function unsubmittedOf(
  db: Warehouse,
  batchId: string,
): Promise<Array<{ key: string; id: string | null; attempted: boolean }>> {
  const { rows } = await sql<Pick<Row<'transactions'>, 'key' | 'id'> & { attempted: boolean }>`
    select t.key, t.id, r.create_attempts > 0 as attempted
    from transactions t join transaction_requests r on r.key = t.key and r.status = 'accepted'
    where t.batch_id = ${batchId}::uuid and t.state in ('pending', 'created') and (t.id is not null or r.create_attempts > 0)`.execute(
    db,
  );
  return rows;
}

/** Cancelled: nothing more is sent; keys not submitted end cancelled; the batch says so (it ends once the rest are followed). */
export async function cancelUnsent(db: Warehouse, batchId: string): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const result = await sql`
      update transactions set state = 'cancelled', next_poll_at = null, failed_attempts = 0, last_failed_at = null,
        last_error = case when id is null then 'batch cancelled before this shipment was sent' else 'cancelled before it was submitted' end,
        updated_at = now()
      where batch_id = ${batchId}::uuid and state in ('pending', 'created')`.execute(trx);
    await sql`update submission_batches set status = 'cancelled' where id = ${batchId}::uuid`.execute(trx);
    return Number(result.numAffectedRows ?? 0);
  });
}

/** States a failure is no longer recorded on: ddsync or the service decided them. */
const ENDS = ['failed', 'timed_out', 'cancelled', 'available', 'error', 'withdrawn'];

/**
 * A failed step of each key (its message already short and scrubbed): counted in a row, with when;
 * returns the failed attempts in a row of each key recorded. A read that failed is due again after
 * `retryInMs` (when given), so one failing transaction does not hold the others' reads.
 */
export async function recordKeyFailures(
  db: Warehouse,
  failures: ReadonlyArray<{ key: string; message: string }>,
  retryInMs?: number,
): Promise<Map<string, number>> {
  if (failures.length === 0) return new Map();
  const { rows } = await sql<Pick<Row<'transactions'>, 'key'> & { n: number }>`
    update transactions t set last_error = f.last_error, failed_attempts = t.failed_attempts + 1, last_failed_at = now(),
      next_poll_at = case when ${retryInMs ?? null}::float8 is not null and t.next_poll_at is not null
        then now() + least(${retryInMs ?? 0}::float8 * power(2, least(t.failed_attempts, 12)), 300000) * interval '1 millisecond'
        else t.next_poll_at end
    from ${jsonRecordset(
      failures.map((f): KeyErrorRow => ({ key: f.key, last_error: f.message })),
      KEY_ERROR_COLUMNS,
      'f',
    )}
    where t.key = f.key and t.key = any(${failures.map((f) => f.key)}::text[]) and t.state <> all(${ENDS}::text[])
    returning t.key, t.failed_attempts as n`.execute(db);
  return new Map(rows.map((r) => [r.key, r.n]));
}

/** The steps of these keys succeeded: what earlier attempts recorded is cleared (writes nothing when there is none). */
export async function clearKeyFailures(db: Warehouse, keys: readonly string[]): Promise<void> {
  if (keys.length === 0) return;
  await sql`
    update transactions set last_error = case when state in ('failed', 'timed_out', 'cancelled') then last_error end,
      failed_attempts = 0, last_failed_at = null
    where key = any(${keys}::text[]) and failed_attempts > 0`.execute(db);
}

/** Refused by the service (or ddsync's credentials): these keys end failed, with why. */
export async function endFailed(db: Warehouse, ends: ReadonlyArray<{ key: string; message: string }>): Promise<void> {
  if (ends.length === 0) return;
  await sql`
    update transactions t set state = 'failed', last_error = f.last_error, failed_attempts = 0, last_failed_at = null,
      next_poll_at = null, updated_at = now()
    from ${jsonRecordset(
      ends.map((e): KeyErrorRow => ({ key: e.key, last_error: e.message })),
      KEY_ERROR_COLUMNS,
      'f',
    )}
    where t.key = f.key and t.key = any(${ends.map((e) => e.key)}::text[]) and t.state not in ('available', 'error', 'withdrawn')`.execute(
    db,
  );
}
