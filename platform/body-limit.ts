import type { MiddlewareHandler } from 'hono';
import { bodyLimit as honoBodyLimit } from 'hono/body-limit';

/**
 * Hono's bodyLimit, usable under @hono/node-server with the process's own Request and Response
 * (`overrideGlobalObjects: false`, so starting a server changes nothing for ddsync's fetch in the same
 * process). bodyLimit refuses a declared Content-Length over the limit unread; any other body
 * (chunked, or none on a DELETE) it counts while buffering and then re-wraps with
 * `new Request(c.req.raw, …)`, which Node's Request refuses for the adapter's lightweight request
 * (the TypeError becomes a 500). Such a request is first handed over as a native Request on the
 * same stream.
 */
export function bodyLimit(options: Parameters<typeof honoBodyLimit>[0]): MiddlewareHandler {
  const limit = honoBodyLimit(options);
  return (c, next) => {
    const raw = c.req.raw;
    if (raw.body && (!raw.headers.has('content-length') || raw.headers.has('transfer-encoding'))) {
      c.req.raw = new Request(raw.url, {
        method: raw.method,
        headers: raw.headers,
        body: raw.body,
        signal: raw.signal,
        duplex: 'half',
      } as RequestInit);
    }
    return limit(c, next);
  };
}
