import {
  BadRequestError,
  ConflictError,
  ForbiddenError,
  NotEntitledError,
  NotFoundError,
  NotImplementedError,
  RateLimitedError,
  ServerError,
  UnauthorizedError,
  UnexpectedStatusError,
  UnprocessableError,
  type UpstreamError,
} from './errors.ts';

/** Longest slice of a non-JSON error body kept as the "service message". */
const MAX_TEXT_MESSAGE = 300;

/**
 * The service's message from an error body. ASSUMED shape `{statusCode, message, error}` with
 * `message` a string or an array of strings; any other body is tolerated (text is truncated).
 */
export function serviceMessagesFrom(bodyText: string): string[] {
  const text = bodyText.trim();
  if (text === '') return [];
  try {
    const body: unknown = JSON.parse(text);
    if (body && typeof body === 'object' && !Array.isArray(body)) {
      const { message, error } = body as { message?: unknown; error?: unknown };
      if (typeof message === 'string') return [message];
      if (Array.isArray(message)) return message.map((m) => (typeof m === 'string' ? m : JSON.stringify(m)));
      if (typeof error === 'string') return [error];
    }
    if (typeof body === 'string') return [body.slice(0, MAX_TEXT_MESSAGE)];
    return [text.slice(0, MAX_TEXT_MESSAGE)];
  } catch {
    return [text.slice(0, MAX_TEXT_MESSAGE)];
  }
}

/** Endpoints where 403 means "not entitled" (contract: transaction endpoints). */
function isTransactionEndpoint(endpoint: string): boolean {
  return / \/(transactions|components)\b/.test(endpoint);
}

/** The typed error for a non-2xx status. `serviceMessages` must already be scrubbed of secrets. */
export function errorForStatus(
  endpoint: string,
  status: number,
  serviceMessages: string[],
  retryAfterMs?: number,
): UpstreamError {
  const d = { endpoint, status, serviceMessages };
  switch (status) {
    case 400:
      return new BadRequestError(d);
    case 401:
      return new UnauthorizedError(d);
    case 403:
      return isTransactionEndpoint(endpoint) ? new NotEntitledError(d) : new ForbiddenError(d);
    case 404:
      return new NotFoundError(d);
    case 409:
      return new ConflictError(d);
    case 422:
      return new UnprocessableError(d);
    case 429:
      return new RateLimitedError({ ...d, retryAfterMs });
    case 501:
      return new NotImplementedError(d);
    default:
      if (status >= 500) return new ServerError({ ...d, retryAfterMs });
      return new UnexpectedStatusError(d);
  }
}
