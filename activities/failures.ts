import { ApplicationFailure } from '@temporalio/common';
import { UpstreamError } from '../upstream/errors.ts';

/**
 * How an activity's error reaches Temporal: the client's typed errors decide. A non-retryable one
 * (400, 403, 404, 409, 422, 501, credentials refused by the token endpoint, a response or request
 * that does not validate) fails the activity at once with the service's message; a retryable one
 * (429, 5xx, network, a 401: it refuses a token, not the credentials) is retried, no sooner than the
 * service asked when it sent a Retry-After. Anything else (database, programming errors) follows
 * the activity's retry policy.
 */
export function toActivityFailure(error: unknown): unknown {
  if (error instanceof ApplicationFailure || !(error instanceof UpstreamError)) return error;
  if (!error.retryable) return ApplicationFailure.create({ message: error.message, type: error.name, nonRetryable: true, details: [{ status: error.status ?? null, endpoint: error.endpoint }] });
  const retryAfterMs = (error as { retryAfterMs?: number }).retryAfterMs;
  if (retryAfterMs === undefined) return error;
  return ApplicationFailure.create({ message: error.message, type: error.name, nextRetryDelay: retryAfterMs });
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- activities of any signature
type AnyActivity = (...args: any[]) => Promise<unknown>;

/** Wraps every activity of a group so its errors are mapped by toActivityFailure. */
export function mapFailures<T extends Record<string, AnyActivity>>(activities: T): T {
  const wrapped: Record<string, AnyActivity> = {};
  for (const [name, fn] of Object.entries(activities)) {
    wrapped[name] = async (...args: unknown[]) => {
      try {
        return await fn(...args);
      } catch (error) {
        throw toActivityFailure(error);
      }
    };
  }
  return wrapped as T;
}
