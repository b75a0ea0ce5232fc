import PQueue from 'p-queue';
import type { Logger } from 'pino';
import { TokenManager, issuedTokenFrom } from './auth.ts';
import { CredentialsRefusedError, RequestValidationError, ResponseValidationError, UpstreamError } from './errors.ts';
import { Redactor } from './redact.ts';
import { withRetries } from './retry.ts';
import { isRepeatable, type HttpMethod } from './retry-policy.ts';
import { PATHS, TOKEN_REFUSAL_STATUSES } from '../schema/upstream/service-facts.ts';
import { realSleep, type Sleep } from './sleep.ts';
import { emptyStats, count, type ClientStats } from './stats.ts';
import type { UpstreamObserver } from './observer.ts';
import { withAcceptedToken } from './token-rejections.ts';
import { jsonBody, sendOnce, type BodyReader, type HttpRequest, type TransportDeps } from './transport.ts';

/**
 * The request pipeline every endpoint uses: path templating, bearer token (a 401 is repeated with a
 * fresh token: token-rejections.ts), rate control (p-queue: concurrency and requests per interval)
 * and the retry loop around each attempt. Backoff sleeps happen outside the queue, so a waiting
 * retry does not hold a slot.
 */

export interface UpstreamClientOptions {
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  logger?: Logger;
  /** Requests in flight in this process (default 8). */
  concurrency?: number;
  /** Requests started per `intervalMs` (default: unlimited). */
  intervalCap?: number;
  intervalMs?: number;
  /** Timeout of one attempt, response body included (default 30 s). */
  timeoutMs?: number;
  /** Attempts per call on 429, 5xx and network errors (default 6). */
  maxAttempts?: number;
  /** 401s with the newest token per call, each followed by a refresh, before a retryable UnauthorizedError (default 6). */
  maxTokenRejections?: number;
  /** Full-jitter backoff: first ceiling and cap (defaults 250 ms and 30 s). */
  retryBaseMs?: number;
  retryMaxMs?: number;
  /** Bounds applied to the service's Retry-After (defaults 100 ms and 60 s). */
  retryAfterFloorMs?: number;
  retryAfterCapMs?: number;
  userAgent?: string;
  fetch?: typeof fetch;
  sleep?: Sleep;
  now?: () => number;
  random?: () => number;
  /** Told of every response, retry and token (the process's metrics). */
  observer?: UpstreamObserver;
}

export interface CallOptions {
  signal?: AbortSignal;
  /** A caller-owned counter that receives this call's requests, retries and 429s too. */
  stats?: ClientStats;
  /**
   * Whether the request may be repeated when its outcome is unknown (5xx other than 503, lost
   * response). Default: every method but POST. 429 and 503 are always retried.
   */
  repeatable?: boolean;
  /**
   * Send the request once: no repeat after 429, 503, a connection that never reached the service or a
   * 401 (whose token is refreshed first, so the caller's next call carries a fresh one). The caller
   * decides whether and when to send again (a create sent again only under a new claim).
   */
  once?: boolean;
}

export interface RequestSpec {
  method: HttpMethod;
  template: string;
  params?: Record<string, string>;
  query?: URLSearchParams;
  body?: unknown;
  /** Default true; the token endpoint is the only anonymous one. */
  authenticated?: boolean;
  accept?: string;
}

export function endpointName(method: HttpMethod, template: string): string {
  return `${method} ${template}`;
}

export class UpstreamHttp {
  readonly stats: ClientStats = emptyStats();
  readonly auth: TokenManager;
  readonly #redactor = new Redactor();
  readonly #queue: PQueue;
  readonly #base: string;
  readonly #o: Required<
    Pick<
      UpstreamClientOptions,
      | 'timeoutMs'
      | 'maxAttempts'
      | 'maxTokenRejections'
      | 'retryBaseMs'
      | 'retryMaxMs'
      | 'retryAfterFloorMs'
      | 'retryAfterCapMs'
      | 'userAgent'
    >
  >;
  readonly #fetch: typeof fetch;
  readonly #sleep: Sleep;
  readonly #now: () => number;
  readonly #random: () => number;
  readonly #logger: Logger | undefined;
  readonly #observer: UpstreamObserver | undefined;

  constructor(options: UpstreamClientOptions) {
    const issues = [];
    if (!/^https?:\/\/[^\s]+$/i.test(options.baseUrl ?? ''))
      issues.push({ path: 'baseUrl', message: 'expected an http(s) URL' });
    if (!options.clientId) issues.push({ path: 'clientId', message: 'required' });
    if (!options.clientSecret) issues.push({ path: 'clientSecret', message: 'required' });
    if (issues.length) throw new RequestValidationError('createUpstreamClient', issues);
    this.#base = options.baseUrl.replace(/\/+$/, '');
    this.#o = {
      timeoutMs: options.timeoutMs ?? 30_000,
      maxAttempts: Math.max(1, options.maxAttempts ?? 6),
      maxTokenRejections: Math.max(1, options.maxTokenRejections ?? 6),
      retryBaseMs: options.retryBaseMs ?? 250,
      retryMaxMs: options.retryMaxMs ?? 30_000,
      retryAfterFloorMs: options.retryAfterFloorMs ?? 100,
      retryAfterCapMs: options.retryAfterCapMs ?? 60_000,
      userAgent: options.userAgent ?? 'ddsync/0.1',
    };
    this.#fetch = options.fetch ?? globalThis.fetch;
    this.#sleep = options.sleep ?? realSleep;
    this.#now = options.now ?? Date.now;
    this.#random = options.random ?? Math.random;
    this.#logger = options.logger;
    this.#observer = options.observer;
    this.#redactor.add(options.clientSecret);
    this.#queue = new PQueue({
      concurrency: options.concurrency ?? 8,
      ...(options.intervalCap ? { intervalCap: options.intervalCap, interval: options.intervalMs ?? 1000 } : {}),
    });
    const credentials = {
      client_id: options.clientId,
      client_secret: options.clientSecret,
      grant_type: 'client_credentials',
    };
    const tokenEndpoint = endpointName('POST', PATHS.token);
    this.auth = new TokenManager(
      async () => {
        // A token exchange is safe to repeat whatever the calling request's method: it has its own
        // short retry loop, so a POST that needs a token is not failed by one 500 at the token endpoint.
        let body: unknown;
        try {
          body = await withRetries(
            (attempt) =>
              this.#attempt(
                { method: 'POST', template: PATHS.token, body: credentials, authenticated: false },
                jsonBody,
                undefined,
                attempt,
                {},
              ),
            {
              endpoint: tokenEndpoint,
              repeatable: true,
              maxAttempts: Math.min(3, this.#o.maxAttempts),
              backoff: { baseMs: this.#o.retryBaseMs, maxMs: this.#o.retryMaxMs },
              sleep: this.#sleep,
              random: this.#random,
              stats: [this.stats],
              logger: this.#logger,
              observer: this.#observer,
            },
          );
        } catch (error) {
          if (
            !(error instanceof UpstreamError && error.status !== undefined && TOKEN_REFUSAL_STATUSES.has(error.status))
          )
            throw error;
          // Final: the TokenManager keeps it, so no later call of this process asks again.
          throw new CredentialsRefusedError({
            endpoint: tokenEndpoint,
            status: error.status,
            serviceMessages: error.serviceMessages,
          });
        }
        const issued = issuedTokenFrom(body);
        if ('problem' in issued)
          throw new ResponseValidationError(
            tokenEndpoint,
            [{ path: '', message: `unusable token response (${issued.problem})` }],
            200,
          );
        count([this.stats], 'tokenRefreshes');
        this.#observer?.tokenRefreshed();
        return issued;
      },
      this.#now,
      (token) => this.#redactor.add(token),
    );
  }

  /** Sends a request through rate control, auth and retries; returns what `reader` read. */
  async request<T>(
    spec: RequestSpec,
    reader: BodyReader<T> = jsonBody as BodyReader<T>,
    opts: CallOptions = {},
  ): Promise<T> {
    const endpoint = endpointName(spec.method, spec.template);
    const url = this.#url(spec, endpoint);
    const sinks = [this.stats, opts.stats];
    return withRetries(
      async (attempt) => {
        if (spec.authenticated === false) return this.#attempt(spec, reader, url, attempt, opts);
        return withAcceptedToken(this.auth, (token) => this.#attempt(spec, reader, url, attempt, opts, token), {
          maxRejections: this.#o.maxTokenRejections,
          backoff: { baseMs: this.#o.retryBaseMs, maxMs: this.#o.retryMaxMs },
          sleep: this.#sleep,
          random: this.#random,
          signal: opts.signal,
          once: opts.once === true,
          onRepeat: () => count(sinks, 'unauthorizedRetries'),
        });
      },
      {
        endpoint,
        repeatable: isRepeatable(spec.method, opts.repeatable),
        maxAttempts: opts.once ? 1 : this.#o.maxAttempts,
        backoff: { baseMs: this.#o.retryBaseMs, maxMs: this.#o.retryMaxMs },
        sleep: this.#sleep,
        random: this.#random,
        signal: opts.signal,
        stats: sinks,
        logger: this.#logger,
        observer: this.#observer,
      },
    );
  }

  /** Text with the client secret and issued tokens removed. */
  scrub(text: string): string {
    return this.#redactor.scrub(text);
  }

  /** Registers a secret the client learned (e.g. a webhook secret) so logs and errors never show it. */
  registerSecret(secret: string): void {
    this.#redactor.add(secret);
  }

  async #attempt<T>(
    spec: RequestSpec,
    reader: BodyReader<T>,
    url: URL | undefined,
    attempt: number,
    opts: CallOptions,
    token?: string,
  ): Promise<T> {
    const endpoint = endpointName(spec.method, spec.template);
    const headers: Record<string, string> = {
      accept: spec.accept ?? 'application/json',
      'user-agent': this.#o.userAgent,
    };
    if (token) headers['authorization'] = `Bearer ${token}`;
    if (spec.body !== undefined) headers['content-type'] = 'application/json';
    const req: HttpRequest = {
      method: spec.method,
      endpoint,
      url: url ?? this.#url(spec, endpoint),
      headers,
      ...(spec.body !== undefined ? { body: JSON.stringify(spec.body) } : {}),
    };
    const deps: TransportDeps = {
      fetch: this.#fetch,
      redactor: this.#redactor,
      now: this.#now,
      timeoutMs: this.#o.timeoutMs,
      logger: this.#logger,
      retryAfterBounds: { floorMs: this.#o.retryAfterFloorMs, capMs: this.#o.retryAfterCapMs },
      stats: [this.stats, opts.stats],
      observer: this.#observer,
    };
    return this.#queue.add(
      () => sendOnce(req, reader, deps, attempt, opts.signal),
      opts.signal ? { signal: opts.signal } : {},
    ) as Promise<T>;
  }

  #url(spec: RequestSpec, endpoint: string): URL {
    const path = spec.template.replace(/\{(\w+)\}/g, (_, name: string) => {
      const value = spec.params?.[name];
      if (typeof value !== 'string' || value === '')
        throw new RequestValidationError(endpoint, [{ path: name, message: 'required, a non-empty string' }]);
      return encodeURIComponent(value);
    });
    const query = spec.query?.toString();
    return new URL(`${this.#base}${path}${query ? `?${query}` : ''}`);
  }
}
