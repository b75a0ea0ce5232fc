import { CancelledFailure, Context } from '@temporalio/activity';
import { ApplicationFailure, ApplicationFailureCategory } from '@temporalio/common';
import type { Warehouse } from '../../warehouse/database.ts';
import { clearStepFailures, recordStepFailure, type StepSubject } from '../../warehouse/submission/step-failures.ts';
import { scrubSecrets } from '../../platform/secrets.ts';
import { toActivityFailure } from '../failures.ts';

/**
 * A step of a submission that fails is retried without end: a transaction must never be lost to a
 * bug or a broken database that a deploy fixes. So that such a failure does not show only in a
 * worker's log, every failed attempt is recorded on what the step works for, the transaction
 * (`input.key`) or else the batch (`input.batchId`): its error (secrets scrubbed, one short line),
 * the failed attempts in a row and when the last failed. A step that succeeds clears them.
 * The worker's log keeps attempts 1, 2, 4, 8, …: the others reach Temporal as benign failures, which
 * it logs at debug level, so a fault that lasts a day costs a dozen warnings, not hundreds.
 */

/** Longest error kept: enough for a database's or the service's message, not for a stack. */
const MAX_ERROR_LENGTH = 300;
/** A database that does not answer must not hold the failing step: the log still has the error. */
const RECORD_TIMEOUT_MS = 5_000;

/** One short line, without secrets: what the warehouse and `ddsync submissions status` show. */
export function stepError(step: string, error: unknown): string {
  const text = scrubSecrets(error instanceof Error ? error.message : String(error))
    .replace(/\s+/g, ' ')
    .trim();
  const line = `${step}: ${text || (error as Error)?.name || 'unknown error'}`;
  return line.length > MAX_ERROR_LENGTH ? `${line.slice(0, MAX_ERROR_LENGTH - 1)}…` : line;
}

function within<T>(work: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/** The type of a chunk's failure whose keys recorded their own failures (activities/submission/bulk.ts). */
export const RECORDED_ON_KEYS = 'TransactionsNotSentYet';

const isPowerOfTwo = (n: number) => n > 0 && (n & (n - 1)) === 0;

/** The same failure, logged by the worker at debug level; a refusal (not retried) stays as it is. */
function quietly(error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  if (error instanceof ApplicationFailure) {
    if (error.nonRetryable) return error;
    return ApplicationFailure.create({
      message: error.message,
      type: error.type ?? 'Error',
      details: error.details ?? [],
      ...(error.nextRetryDelay != null ? { nextRetryDelay: error.nextRetryDelay } : {}),
      ...(error.cause ? { cause: error.cause } : {}),
      category: ApplicationFailureCategory.BENIGN,
    });
  }
  return ApplicationFailure.create({
    message: error.message,
    type: error.name,
    cause: error,
    category: ApplicationFailureCategory.BENIGN,
  });
}

// biome-ignore lint/suspicious/noExplicitAny: activities of any signature
type AnyActivity = (...args: any[]) => Promise<unknown>;

/**
 * Wraps every activity of the group (see above); the first argument names the transaction or batch.
 * A wrapper of the submission factory rather than a worker interceptor: it is for steps that retry
 * without end and whose input names a transaction or batch, which no other activity has.
 */
export function trackStepFailures<T extends Record<string, AnyActivity>>(db: Warehouse, activities: T): T {
  const wrapped: Record<string, AnyActivity> = {};
  for (const [step, fn] of Object.entries(activities)) {
    wrapped[step] = async (...args: unknown[]) => {
      const subject = (args[0] ?? {}) as StepSubject;
      let result: unknown;
      try {
        result = await fn(...args);
      } catch (thrown) {
        // Recorded and quietened as Temporal will get it: the worker's interceptor maps it the same
        // way (mapping a mapped failure changes nothing), and a refusal must stay non-retryable.
        const error = toActivityFailure(thrown);
        const context = Context.current();
        if (error instanceof CancelledFailure || context.cancellationSignal.aborted) throw error;
        // A chunk whose keys failed has recorded each failure on its key: not one of the batch's own step.
        const onKeys = error instanceof ApplicationFailure && error.type === RECORDED_ON_KEYS;
        const attempts = onKeys
          ? undefined
          : await within(recordStepFailure(db, subject, stepError(step, error)), RECORD_TIMEOUT_MS).catch(
              () => undefined,
            );
        throw isPowerOfTwo(attempts ?? context.info.attempt) ? error : quietly(error);
      }
      await within(clearStepFailures(db, subject), RECORD_TIMEOUT_MS).catch(() => undefined);
      return result;
    };
  }
  return wrapped as T;
}
