import { ApplicationFailure } from '@temporalio/common';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
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
  if (!error.retryable)
    return ApplicationFailure.create({
      message: error.message,
      type: error.name,
      nonRetryable: true,
      details: [{ status: error.status ?? null, endpoint: error.endpoint }],
    });
  const retryAfterMs = (error as { retryAfterMs?: number }).retryAfterMs;
  if (retryAfterMs === undefined) return error;
  return ApplicationFailure.create({ message: error.message, type: error.name, nextRetryDelay: retryAfterMs });
}

/**
 * The worker's activity interceptor that maps every activity's error by toActivityFailure, local
 * activities included (infra/worker.ts registers it once, so no factory has to remember it).
 */
export const mapFailures: ActivityInterceptorsFactory = () => ({
  inbound: {
    async execute(input, next) {
      try {
        return await next(input);
      } catch (error) {
        throw toActivityFailure(error);
      }
    },
  },
});
