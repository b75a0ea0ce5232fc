import { decodeUtf8 } from './utf8.ts';
import type { Logger } from 'pino';
import { NetworkError, UpstreamError, RateLimitedError, ServerError } from './errors.ts';
import { errorForStatus, serviceMessagesFrom } from './error-mapping.ts';
import { parseRetryAfter, type RetryAfterBounds } from './retry-after.ts';
import type { HttpMethod } from './retry-policy.ts';
import type { Redactor } from './redact.ts';
import { count, type ClientStats } from './stats.ts';
import type { UpstreamObserver } from './observer.ts';

/**
 * One HTTP exchange: fetch with a timeout, status → typed error, body read inside the timeout.
 * No retries, no auth decisions here (see retry.ts and client-core.ts). Nothing secret is logged:
 * the log line names method, path template, path, status, duration and attempt only.
 */

export interface HttpRequest {
  method: HttpMethod;
  /** `METHOD /path/{template}`: the stable name used in errors, logs and stats. */
  endpoint: string;
  url: URL;
  headers: Record<string, string>;
  body?: string;
}

export interface BodyReader<T> {
  /** Streaming readers return at headers; the timeout then no longer applies to the body. */
  streaming?: boolean;
  read(res: Response): Promise<T>;
}

export interface TransportDeps {
  fetch: typeof fetch;
  redactor: Redactor;
  now: () => number;
  timeoutMs: number;
  retryAfterBounds: RetryAfterBounds;
  logger?: Logger | undefined;
  stats: ReadonlyArray<ClientStats | undefined>;
  observer?: UpstreamObserver | undefined;
}

class RequestTimeout extends Error {}

/** Codes that mean the request never reached the service: repeating it cannot duplicate work. */
const NOT_SENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
]);

function failureCode(e: unknown): string | undefined {
  const cause = (e as { cause?: { code?: unknown } } | undefined)?.cause;
  const code = cause?.code ?? (e as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}

export async function sendOnce<T>(
  req: HttpRequest,
  reader: BodyReader<T>,
  deps: TransportDeps,
  attempt: number,
  signal?: AbortSignal,
): Promise<T> {
  signal?.throwIfAborted();
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new RequestTimeout()), deps.timeoutMs);
  const onCallerAbort = () => controller.abort(signal!.reason);
  signal?.addEventListener('abort', onCallerAbort, { once: true });
  const cleanup = () => {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onCallerAbort);
  };
  const started = deps.now();
  count(deps.stats, 'requests');

  // Turns a low-level failure into NetworkError; a caller's own abort passes through untouched.
  const networkError = (e: unknown, phase: 'request' | 'body', status?: number): unknown => {
    if (signal?.aborted) return signal.reason;
    if (e instanceof UpstreamError) return e;
    count(deps.stats, 'networkErrors');
    if (e instanceof BodyTooLarge)
      return new NetworkError(req.endpoint, e.message, { cause: e, outcomeUnknown: true, status });
    const timedOut = controller.signal.reason instanceof RequestTimeout;
    const code = failureCode(e);
    const reason = timedOut
      ? `no ${phase === 'body' ? 'complete body' : 'response'} within ${deps.timeoutMs} ms`
      : phase === 'body'
        ? `response body truncated or invalid (${deps.redactor.scrub(String((e as Error)?.message ?? e))})`
        : deps.redactor.scrub(code ?? String((e as Error)?.message ?? e));
    const outcomeUnknown = phase === 'body' || timedOut || !(code && NOT_SENT_CODES.has(code));
    return new NetworkError(req.endpoint, reason, { cause: e, outcomeUnknown, status });
  };

  let res: Response;
  try {
    res = await deps.fetch(req.url, {
      method: req.method,
      headers: req.headers,
      body: req.body,
      signal: controller.signal,
    });
  } catch (e) {
    cleanup();
    if (!signal?.aborted) deps.observer?.response(req.endpoint, 'network_error', (deps.now() - started) / 1000);
    deps.logger?.debug(
      {
        method: req.method,
        endpoint: req.endpoint,
        path: req.url.pathname,
        status: null,
        ms: deps.now() - started,
        attempt,
      },
      'upstream request failed',
    );
    throw networkError(e, 'request');
  }
  deps.logger?.debug(
    {
      method: req.method,
      endpoint: req.endpoint,
      path: req.url.pathname,
      status: res.status,
      ms: deps.now() - started,
      attempt,
    },
    'upstream request',
  );
  deps.observer?.response(req.endpoint, res.status, (deps.now() - started) / 1000);

  if (!res.ok) {
    let text = '';
    try {
      // An error's body serves only for the service's message: its first bytes, however long it is.
      text = new TextDecoder().decode(await bodyBytes(res, ERROR_BODY_KEPT_BYTES, 'keep'));
    } catch {
      // The status is what matters; a lost error body only loses the service's message.
    }
    cleanup();
    if (signal?.aborted) throw signal.reason;
    const retryAfterMs = parseRetryAfter(res.headers.get('retry-after'), deps.now(), deps.retryAfterBounds);
    const error = errorForStatus(
      req.endpoint,
      res.status,
      serviceMessagesFrom(text).map((m) => deps.redactor.scrub(m)),
      retryAfterMs,
    );
    if (error instanceof RateLimitedError) count(deps.stats, 'rateLimited');
    if (error instanceof ServerError || res.status >= 500) count(deps.stats, 'serverErrors');
    throw error;
  }

  if (reader.streaming) {
    // A streamed body has no overall deadline (it may be long), but it must keep moving.
    clearTimeout(timer);
    res = withIdleTimeout(res, deps.timeoutMs, () => controller.abort(new RequestTimeout()));
  }
  try {
    return await reader.read(res);
  } catch (e) {
    throw networkError(e, 'body', res.status);
  } finally {
    if (reader.streaming) clearTimeout(timer);
    else cleanup();
  }
}

/** Re-arms a timer on every chunk; when no chunk arrives for `ms`, `onIdle` aborts the request. */
function withIdleTimeout(res: Response, ms: number, onIdle: () => void): Response {
  if (!res.body) return res;
  let timer = setTimeout(onIdle, ms);
  timer.unref();
  const watchdog = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      clearTimeout(timer);
      timer = setTimeout(onIdle, ms);
      timer.unref();
      controller.enqueue(chunk);
    },
    flush() {
      clearTimeout(timer);
    },
  });
  return new Response(res.body.pipeThrough(watchdog), {
    status: res.status,
    statusText: res.statusText,
    headers: res.headers,
  });
}

/**
 * The most of a body read whole (JSON answers, text): the longest the contract has is the list of
 * suppliers, 1.5 KB each (15 MB for 10,000 suppliers), and 32 MB of JSON parses to about 70 MB, which
 * the production worker's heap holds beside its pages (infra/production.ts). A longer body (a service
 * or a proxy gone wrong, an endless stream) is cut there and its request fails, retryable like any
 * body that could not be read, rather than filling the heap until V8 ends the worker. Pages of plots
 * and the lists that embed plots are streamed and bounded otherwise (paging.ts, json-array-stream.ts).
 */
export const WHOLE_BODY_MAX_BYTES = 32 * 1024 * 1024;
/** Of an error's body, only this much is read (its message); the rest is discarded unread. */
export const ERROR_BODY_KEPT_BYTES = 64 * 1024;

/** A body cut at its bound (or a streamed answer whose kept part passed it: json-array-stream.ts). */
export class BodyTooLarge extends Error {
  override name = 'BodyTooLarge';
}

/**
 * A body's bytes, at most `max`: past them the body is cancelled (its connection closed) and either
 * what came is kept (`keep`) or the read fails with BodyTooLarge, naming the bound.
 */
async function bodyBytes(res: Response, max: number, past: 'keep' | 'fail'): Promise<Uint8Array> {
  if (!res.body) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let length = 0;
  const reader = res.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (length + value.byteLength > max) {
      await reader.cancel().catch(() => undefined);
      if (past === 'fail')
        throw new BodyTooLarge(
          `response body larger than ${max / 1024 / 1024} MB, more than ddsync reads whole (WHOLE_BODY_MAX_BYTES)`,
        );
      chunks.push(value.subarray(0, max - length));
      length = max;
      break;
    }
    chunks.push(value);
    length += value.byteLength;
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, length);
}

/** JSON body read whole, up to WHOLE_BODY_MAX_BYTES; a truncated, unparseable or longer body is a NetworkError. */
export const jsonBody: BodyReader<unknown> = {
  async read(res) {
    // Bytes that are not UTF-8 are refused (a NetworkError, asked again), never replaced: see utf8.ts.
    const text = decodeUtf8(await bodyBytes(res, WHOLE_BODY_MAX_BYTES, 'fail'));
    if (res.status === 204 || text.trim() === '') return undefined;
    return JSON.parse(text) as unknown;
  },
};

/** Body discarded (204 and acknowledgements): read to its end, a chunk at a time, none of it kept. */
export const noBody: BodyReader<void> = {
  async read(res) {
    if (res.body) for await (const _ of res.body);
  },
};

/** Plain text body (webhook secret may arrive as text), up to WHOLE_BODY_MAX_BYTES. */
export const textBody: BodyReader<{ text: string; contentType: string | null }> = {
  async read(res) {
    const text = new TextDecoder().decode(await bodyBytes(res, WHOLE_BODY_MAX_BYTES, 'fail'));
    return { text, contentType: res.headers.get('content-type') };
  },
};

/**
 * The body's length as it will be read, when the headers tell it: fetch decompresses a gzip or
 * deflate body on its own while Content-Length still counts the compressed bytes, so an encoded
 * body has no known length. A malformed header is no length either.
 */
export function decodedLength(headers: Headers): number | undefined {
  const encoding = headers.get('content-encoding')?.trim().toLowerCase();
  if (encoding && encoding !== 'identity') return undefined;
  const length = headers.get('content-length');
  if (length === null || !/^\d+$/.test(length.trim())) return undefined;
  return Number(length);
}

export interface StreamedBody {
  body: ReadableStream<Uint8Array>;
  contentType: string | null;
  contentLength: number | undefined;
}

/** Body handed over as a stream (PDFs, unbounded lists). */
export const streamBody: BodyReader<StreamedBody> = {
  streaming: true,
  async read(res) {
    if (!res.body) throw new Error('response has no body');
    return { body: res.body, contentType: res.headers.get('content-type'), contentLength: decodedLength(res.headers) };
  },
};
