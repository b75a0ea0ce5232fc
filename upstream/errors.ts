/**
 * Typed errors of the upstream client. Temporal turns a thrown Error into an ApplicationFailure
 * whose `type` is the error's `name`, so every class sets a distinct, stable `name` that
 * workflows can list in `nonRetryableErrorTypes`. Messages carry the endpoint (method + path
 * template) and the service's message, never a token or secret.
 */

export interface UpstreamErrorDetails {
  /** HTTP status, absent when no response arrived (network) or the error is client-side. */
  status?: number | undefined;
  /** Method and path template, e.g. `GET /businesses/{businessId}/plots`. */
  endpoint: string;
  /** The service's message(s), from `{statusCode, message, error}` bodies (message may be an array). */
  serviceMessages?: readonly string[] | undefined;
  retryable: boolean;
  cause?: unknown;
}

export class UpstreamError extends Error {
  override name = 'UpstreamError';
  readonly status: number | undefined;
  readonly endpoint: string;
  readonly serviceMessages: readonly string[];
  readonly retryable: boolean;

  constructor(summary: string, details: UpstreamErrorDetails) {
    const service = details.serviceMessages?.length ? `: ${details.serviceMessages.join('; ')}` : '';
    super(
      `${details.endpoint}: ${summary}${service}`,
      details.cause === undefined ? undefined : { cause: details.cause },
    );
    this.status = details.status;
    this.endpoint = details.endpoint;
    this.serviceMessages = details.serviceMessages ?? [];
    this.retryable = details.retryable;
  }

  /** The service's message, joined; undefined when the body carried none. */
  get serviceMessage(): string | undefined {
    return this.serviceMessages.length ? this.serviceMessages.join('; ') : undefined;
  }
}

type HttpDetails = Omit<UpstreamErrorDetails, 'retryable'> & { status: number };

export class BadRequestError extends UpstreamError {
  override name = 'BadRequestError';
  constructor(d: HttpDetails) {
    super('400 bad request', { ...d, retryable: false });
  }
}
/**
 * 401 on an endpoint other than the token endpoint: the token was refused (expired or revoked early,
 * as the service may do at any time), not the credentials. Transient: the client repeats the call with
 * a fresh token (see token-rejections.ts); this error leaves the client only after that gave up, and
 * whoever owns the call retries it later.
 */
export class UnauthorizedError extends UpstreamError {
  override name = 'UnauthorizedError';
  constructor(d: HttpDetails, summary = '401 unauthorized (token refused)') {
    super(summary, { ...d, retryable: true });
  }
}
/**
 * The token endpoint refuses the client credentials (wrong, revoked, or not allowed). Final: nothing
 * this process sends can succeed until the credentials are corrected.
 */
export class CredentialsRefusedError extends UpstreamError {
  override name = 'CredentialsRefusedError';
  constructor(d: HttpDetails) {
    super(`${d.status} client credentials refused`, { ...d, retryable: false });
  }
}
export class ForbiddenError extends UpstreamError {
  override name = 'ForbiddenError';
  constructor(d: HttpDetails, summary = '403 forbidden') {
    super(summary, { ...d, retryable: false });
  }
}
/** 403 on transaction endpoints: the business is not entitled (canManageTransactions). */
export class NotEntitledError extends ForbiddenError {
  override name = 'NotEntitledError';
  constructor(d: HttpDetails) {
    super(d, '403 forbidden: the business is not entitled to this endpoint');
  }
}
export class NotFoundError extends UpstreamError {
  override name = 'NotFoundError';
  constructor(d: HttpDetails) {
    super('404 not found', { ...d, retryable: false });
  }
}
export class ConflictError extends UpstreamError {
  override name = 'ConflictError';
  constructor(d: HttpDetails) {
    super('409 conflict', { ...d, retryable: false });
  }
}
export class UnprocessableError extends UpstreamError {
  override name = 'UnprocessableError';
  constructor(d: HttpDetails) {
    super('422 unprocessable', { ...d, retryable: false });
  }
}
export class NotImplementedError extends UpstreamError {
  override name = 'NotImplementedError';
  constructor(d: HttpDetails) {
    super('501 not implemented on this environment', { ...d, retryable: false });
  }
}
export class RateLimitedError extends UpstreamError {
  override name = 'RateLimitedError';
  /** From Retry-After, when the service sent one; a hint for Temporal's nextRetryDelay. */
  readonly retryAfterMs: number | undefined;
  constructor(d: HttpDetails & { retryAfterMs?: number | undefined }) {
    super('429 rate limited', { ...d, retryable: true });
    this.retryAfterMs = d.retryAfterMs;
  }
}
export class ServerError extends UpstreamError {
  override name = 'ServerError';
  readonly retryAfterMs: number | undefined;
  constructor(d: HttpDetails & { retryAfterMs?: number | undefined }) {
    super(`${d.status} server error`, { ...d, retryable: true });
    this.retryAfterMs = d.retryAfterMs;
  }
}
/** Any other status (e.g. 405, 410, 413): not retried, surfaced with the service's message. */
export class UnexpectedStatusError extends UpstreamError {
  override name = 'UnexpectedStatusError';
  constructor(d: HttpDetails) {
    super(`unexpected status ${d.status}`, { ...d, retryable: false });
  }
}

/**
 * No usable response: connection reset, timeout, truncated or unparseable body. Retryable by
 * whoever owns the decision. `outcomeUnknown` is true when the request may have been processed
 * (e.g. a POST /transactions whose response was lost: recover by customId, do not create again).
 */
export class NetworkError extends UpstreamError {
  override name = 'NetworkError';
  readonly outcomeUnknown: boolean;
  constructor(
    endpoint: string,
    reason: string,
    opts: { cause?: unknown; outcomeUnknown?: boolean; status?: number } = {},
  ) {
    super(`network error: ${reason}`, { endpoint, status: opts.status, retryable: true, cause: opts.cause });
    this.outcomeUnknown = opts.outcomeUnknown ?? false;
  }
}

export interface ValidationIssue {
  /** Field path, e.g. `[12].geometry.coordinates` or `customData.colour`. */
  path: string;
  /** The rule broken, e.g. `expected array` or `at most 10 keys`. */
  message: string;
}

export function formatIssues(issues: readonly ValidationIssue[]): string {
  return issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join('; ');
}

/** A response that does not match the expected shape. Not retryable: the same bytes would fail again. */
export class ResponseValidationError extends UpstreamError {
  override name = 'ResponseValidationError';
  readonly issues: readonly ValidationIssue[];
  constructor(endpoint: string, issues: readonly ValidationIssue[], status?: number) {
    // Message: `GET /businesses/{businessId}/plots: [12].geometry.coordinates: expected array`.
    super(formatIssues(issues), { endpoint, status, retryable: false });
    this.issues = issues;
  }
}

/** Input refused before any request was sent. */
export class RequestValidationError extends UpstreamError {
  override name = 'RequestValidationError';
  readonly issues: readonly ValidationIssue[];
  constructor(endpoint: string, issues: readonly ValidationIssue[]) {
    super(`invalid request: ${formatIssues(issues)}`, { endpoint, retryable: false });
    this.issues = issues;
  }
}

/** Error types a Temporal retry policy should not retry (pass as nonRetryableErrorTypes). */
export const NON_RETRYABLE_ERROR_TYPES = [
  'BadRequestError',
  'CredentialsRefusedError',
  'ForbiddenError',
  'NotEntitledError',
  'NotFoundError',
  'ConflictError',
  'UnprocessableError',
  'NotImplementedError',
  'UnexpectedStatusError',
  'ResponseValidationError',
  'RequestValidationError',
] as const;
