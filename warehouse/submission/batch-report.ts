import { sql } from 'kysely';
import type { Row, Warehouse } from '../database.ts';

/** Where a batch stands, from the warehouse: what `ddsync submit --wait` and `ddsync submissions` show. */
export interface BatchReport {
  batchId: string;
  source: string;
  status: string;
  createdAt: Date;
  finishedAt: Date | null;
  rows: number;
  accepted: number;
  invalid: number;
  duplicates: number;
  /** Transactions per ddsync state: pending, created, submitted, available, error, withdrawn, failed, timed_out, cancelled. */
  states: Record<string, number>;
  /** Transactions without a DDS reference, by outcome and reason (the first few). */
  problems: Array<{ state: string; reason: string; transactions: number; keys: string[] }>;
  /** Transactions whose current step keeps failing and is being retried, by error (the first few). */
  retrying: Array<{ reason: string; transactions: number; keys: string[]; attempts: number; lastFailedAt: Date }>;
  /** A step of the batch itself (reading it, starting transactions, closing it) being retried. */
  batchRetrying: { reason: string; attempts: number; lastFailedAt: Date } | null;
  /** The earlier batches its duplicate rows were submitted in, with how many rows each. */
  duplicateOf: Array<{ batchId: string; rows: number }>;
  /**
   * The readiness gate at intake: its policy (null before the gate existed), what it said of its data,
   * rows refused by it, and the transactions sent with its warnings by code (a few keys each).
   */
  readiness: {
    policy: string | null;
    note: string | null;
    refused: number;
    warned: number;
    warnings: Array<{ code: string; transactions: number; keys: string[]; example: string }>;
  };
}

export const ENDED_STATES = ['available', 'error', 'withdrawn', 'failed', 'timed_out', 'cancelled'] as const;

export async function batchReport(db: Warehouse, batchId: string): Promise<BatchReport | undefined> {
  const batch = await sql<
    Pick<
      Row<'submission_batches'>,
      | 'source'
      | 'created_at'
      | 'finished_at'
      | 'rows'
      | 'accepted'
      | 'invalid'
      | 'duplicates'
      | 'last_error'
      | 'failed_attempts'
      | 'last_failed_at'
      | 'readiness_policy'
      | 'readiness_note'
    > & { status: string }
  >`
    select source, status, created_at, finished_at, rows, accepted, invalid, duplicates, last_error, failed_attempts, last_failed_at,
           readiness_policy, readiness_note
    from submission_batches where id = ${batchId}::uuid`.execute(db);
  const b = batch.rows[0];
  if (!b) return undefined;
  const states = await sql<{
    state: string;
    n: number;
  }>`select state, count(*)::int as n from transactions where batch_id = ${batchId}::uuid group by state`.execute(db);
  const problems = await sql<{ state: string; reason: string; transactions: number; keys: string[] }>`
    select state, coalesce(error_reason, last_error, '(no reason given)') as reason, count(*)::int as transactions,
           (array_agg(key order by key))[1:5] as keys
    from transactions where batch_id = ${batchId}::uuid and state in ('error', 'failed', 'timed_out', 'withdrawn')
    group by 1, 2 order by 3 desc limit 10`.execute(db);
  const retrying = await sql<{
    reason: string;
    transactions: number;
    keys: string[];
    attempts: number;
    last_failed_at: Date;
  }>`
    select coalesce(last_error, '(no error recorded)') as reason, count(*)::int as transactions, (array_agg(key order by key))[1:5] as keys,
           max(failed_attempts)::int as attempts, max(last_failed_at) as last_failed_at
    from transactions where batch_id = ${batchId}::uuid and failed_attempts > 0 and state <> all(${ENDED_STATES}::text[])
    group by 1 order by 2 desc limit 10`.execute(db);
  const duplicateOf =
    b.duplicates === 0
      ? { rows: [] }
      : await sql<{ batchId: string; rows: number }>`
    select earlier_batch_id::text as "batchId", count(*)::int as rows from transaction_requests
    where batch_id = ${batchId}::uuid and status = 'duplicate' group by 1 order by 2 desc, 1`.execute(db);
  // Refusals of the gate are invalid rows whose rules it wrote (intake.ts prefixes them).
  const gate = await sql<{ refused: number; warned: number }>`
    select count(*) filter (where status = 'invalid' and exists (
             select 1 from jsonb_array_elements(errors) e where e->>'rule' like 'readiness gate: %'))::int as refused,
           count(*) filter (where status = 'accepted' and readiness_warnings is not null)::int as warned
    from transaction_requests where batch_id = ${batchId}::uuid`.execute(db);
  const warnings = await sql<{ code: string; transactions: number; keys: string[]; example: string }>`
    select w->>'code' as code, count(distinct r.key)::int as transactions, (array_agg(distinct r.key order by r.key))[1:5] as keys,
           min(w->>'rule') as example
    from transaction_requests r cross join jsonb_array_elements(r.readiness_warnings) w
    where r.batch_id = ${batchId}::uuid and r.status = 'accepted' and r.readiness_warnings is not null
    group by 1 order by 2 desc, 1 limit 10`.execute(db);
  return {
    batchId,
    source: b.source,
    status: b.status,
    createdAt: b.created_at,
    finishedAt: b.finished_at,
    rows: b.rows,
    accepted: b.accepted,
    invalid: b.invalid,
    duplicates: b.duplicates,
    states: Object.fromEntries(states.rows.map((r) => [r.state, r.n])),
    problems: problems.rows,
    retrying: retrying.rows.map((r) => ({
      reason: r.reason,
      transactions: r.transactions,
      keys: r.keys,
      attempts: r.attempts,
      lastFailedAt: r.last_failed_at,
    })),
    batchRetrying:
      b.failed_attempts > 0
        ? {
            reason: b.last_error ?? '(no error recorded)',
            attempts: b.failed_attempts,
            lastFailedAt: b.last_failed_at!,
          }
        : null,
    duplicateOf: duplicateOf.rows,
    readiness: {
      policy: b.readiness_policy,
      note: b.readiness_note,
      refused: gate.rows[0]?.refused ?? 0,
      warned: gate.rows[0]?.warned ?? 0,
      warnings: warnings.rows,
    },
  };
}

export async function recentBatches(
  db: Warehouse,
  limit = 20,
): Promise<Array<{ id: string; source: string; status: string; created_at: Date; accepted: number }>> {
  const { rows } = await sql<
    Pick<Row<'submission_batches'>, 'id' | 'source' | 'created_at' | 'accepted'> & { status: string }
  >`
    select id, source, status, created_at, accepted from submission_batches order by created_at desc limit ${limit}`.execute(
    db,
  );
  return rows;
}

/** Where the batch stands now (`open`, `done`, `cancelled`), or undefined for a batch the warehouse does not hold. */
export async function batchStatus(db: Warehouse, batchId: string): Promise<string | undefined> {
  const { rows } = await sql<{
    status: string;
  }>`select status from submission_batches where id = ${batchId}::uuid`.execute(db);
  return rows[0]?.status;
}

/** The batch's transactions the EU system accepted: their DDS reference and verification numbers, by key. */
export async function batchReferences(
  db: Warehouse,
  batchId: string,
): Promise<Array<{ key: string; referenceNumber: string; verificationNumber: string }>> {
  const { rows } = await sql<{ key: string; reference_number: string; verification_number: string }>`
    select key, reference_number, verification_number from transactions
    where batch_id = ${batchId}::uuid and state = 'available' order by key`.execute(db);
  return rows.map((r) => ({
    key: r.key,
    referenceNumber: r.reference_number,
    verificationNumber: r.verification_number,
  }));
}
