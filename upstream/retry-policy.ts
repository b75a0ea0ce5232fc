import { NOT_APPLIED_STATUSES, PATHS, RETRY_ANY_METHOD_STATUSES } from '../schema/upstream/service-facts.ts';
import { NetworkError, RequestValidationError, ServerError, UpstreamError } from './errors.ts';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * Whether repeating the request is harmless when its outcome is unknown. POST creates things
 * (transactions, webhooks, invitations, components) and there is no idempotency key anywhere,
 * so a POST is repeated after a lost response only when the caller says so (`repeatable`).
 */
export function isRepeatable(method: HttpMethod, override?: boolean): boolean {
  return override ?? method !== 'POST';
}

/**
 * Whether the client retries this error by itself. 429 and 503 mean "not processed", so every
 * method is retried; other 5xx (501 excepted) and network errors only when the request is repeatable.
 */
export function shouldRetry(error: unknown, repeatable: boolean): boolean {
  if (!(error instanceof UpstreamError) || !error.retryable) return false;
  // A request that never reached the service (connection refused) is safe to repeat whatever the method.
  if (error instanceof NetworkError) return repeatable || !error.outcomeUnknown;
  if (error.status !== undefined && RETRY_ANY_METHOD_STATUSES.has(error.status)) return true;
  if (error instanceof ServerError) return repeatable;
  return false;
}

const TOKEN_ENDPOINT = `POST ${PATHS.token}`;

/**
 * Whether a failed call certainly left nothing at the service: it was answered with a refusal
 * (NOT_APPLIED_STATUSES), never reached the service, or failed before it was sent (its body refused
 * by the client, no token to be had). The client repeats a POST only after failures of these kinds
 * (shouldRetry), so the error a call ends with speaks for all its attempts.
 */
export function provesNotApplied(error: unknown): boolean {
  if (!(error instanceof UpstreamError)) return false;
  if (error instanceof RequestValidationError || error.endpoint === TOKEN_ENDPOINT) return true;
  if (error instanceof NetworkError) return !error.outcomeUnknown;
  return error.status !== undefined && NOT_APPLIED_STATUSES.has(error.status);
}
