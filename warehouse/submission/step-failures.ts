import { storableText } from '../../domain/unstorable-text.ts';
import { sql } from 'kysely';
import type { Warehouse } from '../database.ts';

/**
 * A failed attempt of a submission step, recorded on what the step works for: the transaction
 * (`key`) or else the batch (`batchId`). See activities/submission/step-failures.ts for when.
 */
export interface StepSubject {
  key?: string;
  batchId?: string;
}

/** States ddsync decided: their last_error says why the transaction ended and stays. */
const DECIDED_ENDS = ['failed', 'timed_out', 'cancelled'];
const SERVICE_ENDS = ['available', 'error', 'withdrawn'];

/**
 * Counts a failed attempt (its error, the failed attempts in a row, when the last failed); returns
 * the failed attempts in a row (undefined when nothing was recorded: no subject, or a transaction
 * that has ended).
 */
export async function recordStepFailure(
  db: Warehouse,
  subject: StepSubject,
  message: string,
): Promise<number | undefined> {
  if (subject.key !== undefined) {
    const { rows } = await sql<{ n: number }>`
      update transactions set last_error = ${storableText(message)}, failed_attempts = failed_attempts + 1, last_failed_at = now()
      where key = ${subject.key} and state <> all(${[...DECIDED_ENDS, ...SERVICE_ENDS]}::text[])
      returning failed_attempts as n`.execute(db);
    return rows[0]?.n;
  }
  if (subject.batchId === undefined) return undefined;
  const { rows } = await sql<{ n: number }>`
    update submission_batches set last_error = ${storableText(message)}, failed_attempts = failed_attempts + 1, last_failed_at = now()
    where id = ${subject.batchId}::uuid returning failed_attempts as n`.execute(db);
  return rows[0]?.n;
}

/** The step succeeded: what an earlier attempt recorded is cleared (writes nothing when there is none). */
export async function clearStepFailures(db: Warehouse, subject: StepSubject): Promise<void> {
  if (subject.key !== undefined) {
    await sql`
      update transactions set last_error = case when state = any(${DECIDED_ENDS}::text[]) then last_error end, failed_attempts = 0, last_failed_at = null
      where key = ${subject.key} and failed_attempts > 0`.execute(db);
  } else if (subject.batchId !== undefined) {
    await sql`update submission_batches set last_error = null, failed_attempts = 0, last_failed_at = null where id = ${subject.batchId}::uuid and failed_attempts > 0`.execute(
      db,
    );
  }
}
