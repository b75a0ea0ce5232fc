// The HTTP front: routing and the body limit (Hono), authentication, fault injection, response writing.
import type http from 'node:http';
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { createAdaptorServer, type HttpBindings } from '@hono/node-server';
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response';
import { Hono, type Context } from 'hono';
import { bodyLimit } from '../platform/body-limit.ts';
import { decideFault, type FaultDecision } from './faults.ts';
import { HttpError } from './http-errors.ts';
import { interceptedAnswer, type ActiveRule } from './intercepts.ts';
import type { Reply, Route } from './router.ts';
import type { SimState } from './state.ts';

const MAX_BODY_BYTES = 10 * 1024 * 1024;
const TOKEN_PATH = '/auth/machine-to-machine-clients/token';
const JSON_TYPE = 'application/json; charset=utf-8';

type Env = { Bindings: HttpBindings; Variables: { raw: Buffer; decision: FaultDecision } };

function parseJson(raw: Buffer): unknown {
  if (raw.length === 0) return undefined;
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch (error) {
    throw new HttpError(400, `Invalid JSON body: ${(error as Error).message}`);
  }
}

/** The body as JSON for a rule's match; undefined when it is none (the route answers 400 itself). */
function safeJson(raw: Buffer): unknown {
  try {
    return parseJson(raw);
  } catch {
    return undefined;
  }
}

function errorReply(error: HttpError): Reply {
  return { status: error.statusCode, json: error.body(), headers: error.headers };
}

function bodyOf(reply: Reply): Buffer | undefined {
  if (reply.bytes) return reply.bytes;
  return reply.json === undefined ? undefined : Buffer.from(JSON.stringify(reply.json));
}

async function* encoded(chunks: Iterable<string> | AsyncIterable<string>): AsyncGenerator<Uint8Array> {
  for await (const chunk of chunks) yield Buffer.from(chunk);
}

function toResponse(reply: Reply): Response {
  if (reply.stream) {
    // ReadableStream.from pulls the next chunk only when the socket takes more, and cancelling it
    // (the client went away) ends the generator.
    const body = ReadableStream.from(encoded(reply.stream()));
    return new Response(body, {
      status: reply.status,
      headers: { 'content-type': reply.contentType ?? JSON_TYPE, ...reply.headers },
    });
  }
  const body = bodyOf(reply);
  const headers: Record<string, string> = { ...reply.headers };
  if (body) headers['content-type'] = reply.contentType ?? JSON_TYPE;
  return new Response(body ?? null, { status: reply.status, headers });
}

/** The connection is cut without an answer (written straight to the socket: no Response can say that). */
function reset(c: Context<Env>): Response {
  c.env.incoming.socket.destroy();
  return RESPONSE_ALREADY_SENT;
}

/**
 * The truncate fault, written to the raw response: the Content-Length of the whole body, half of
 * it (a stream: its first chunk), then the socket destroyed once that much is out.
 */
async function truncated(c: Context<Env>, reply: Reply): Promise<Response> {
  const res: ServerResponse = c.env.outgoing;
  const cut = (): void => void res.destroy();
  if (reply.stream) {
    res.writeHead(reply.status, { 'content-type': reply.contentType ?? JSON_TYPE, ...reply.headers });
    for await (const chunk of reply.stream()) {
      res.write(chunk, cut);
      return RESPONSE_ALREADY_SENT;
    }
    cut();
    return RESPONSE_ALREADY_SENT;
  }
  const body = bodyOf(reply);
  const headers: Record<string, string> = { ...reply.headers, 'content-length': String(body?.length ?? 0) };
  if (body) headers['content-type'] = reply.contentType ?? JSON_TYPE;
  res.writeHead(reply.status, headers);
  if (body && body.length > 1) res.write(body.subarray(0, Math.floor(body.length / 2)), cut);
  else res.end(body);
  return RESPONSE_ALREADY_SENT;
}

/** Applies the exclusive fault, if any; returns a reply to send instead, 'reset', or undefined. */
function faultReply(
  state: SimState,
  decision: FaultDecision,
  authenticated: boolean,
  authorization: string | undefined,
): Reply | 'reset' | undefined {
  switch (decision.kind) {
    case 'http500':
      return errorReply(new HttpError(500, 'Internal server error (simulated)'));
    case 'http503':
      return errorReply(new HttpError(503, 'Service unavailable (simulated)'));
    case 'http429': {
      const seconds = Math.round(state.settings.faults.retryAfterSeconds * state.opts.timeScale);
      return errorReply(new HttpError(429, 'Too Many Requests', { 'retry-after': String(seconds) }));
    }
    case 'http429NoRetryAfter':
      return errorReply(new HttpError(429, 'Too Many Requests'));
    case 'reset':
      return 'reset';
    case 'tokenExpiry':
      return authenticated && state.auth.expireEarly(authorization)
        ? errorReply(new HttpError(401, 'Unauthorized'))
        : undefined;
    default:
      return undefined;
  }
}

export function createHttpServer(state: SimState, routes: Route[]): http.Server {
  const app = new Hono<Env>({ strict: false });
  const isControl = (path: string): boolean => path.startsWith('/_sim/');

  // A declared length over the limit is refused unread, a chunked body once it passes it; the
  // connection closes after the answer (the rest of the body is never read).
  app.use(
    bodyLimit({
      maxSize: MAX_BODY_BYTES,
      onError: () => {
        throw new HttpError(413, 'Request body too large', { connection: 'close' });
      },
    }),
  );
  // Every request but control ones draws its fault (unknown paths too, so the sequence of decisions
  // depends on the request count only); only matched routes apply the exclusive kinds.
  app.use(async (c, next) => {
    c.set('raw', Buffer.from(await c.req.arrayBuffer()));
    let decision: FaultDecision = { latencyMs: 0, dropCreateResponse: false };
    if (!isControl(c.req.path))
      decision = decideFault(state.settings.faults, state.seed, state.requestCounter++, c.req.path === TOKEN_PATH);
    if (decision.latencyMs > 0) await state.timers.sleep(decision.latencyMs);
    c.set('decision', decision);
    await next();
  });

  for (const route of routes) {
    const names = route.path
      .split('/')
      .filter((s) => s.startsWith(':'))
      .map((s) => s.slice(1));
    app.on(route.method, route.path, async (c) => {
      const method = c.req.method;
      const path = c.req.path;
      const decision = c.get('decision');
      const authorization = c.req.header('authorization');
      // A control rule (intercepts.ts) takes the place of the drawn fault; control routes have neither.
      let rule: ActiveRule | undefined;
      if (!isControl(path)) {
        state.intercepts.count(route.method, route.path);
        rule = state.intercepts.take(method, path, route.path, () => safeJson(c.get('raw')));
      }
      const faulted = !isControl(path) && !rule;
      const injected = faulted ? faultReply(state, decision, !route.public, authorization) : undefined;
      if (injected === 'reset' || rule?.action === 'reset') return reset(c);
      let handledHold: (() => void) | undefined;
      if (rule?.action === 'holdRequest') {
        const hold = state.intercepts.hold();
        handledHold = hold.handled;
        if ((await hold.ended) === 'discard') {
          hold.handled();
          return reset(c);
        }
      }
      let reply: Reply;
      if (injected) reply = injected;
      else if (rule?.action === 'status') {
        const answer = interceptedAnswer(rule);
        reply = errorReply(new HttpError(answer.status, answer.message, answer.headers));
      } else {
        try {
          if (!route.public) {
            await state.auth.verify(authorization);
            if (!state.settings.entitlements.canAccessApi)
              throw new HttpError(403, 'The business is not entitled to API access');
          }
          const params = names.map((n) => c.req.param(n) ?? '');
          reply = await route.handler({
            method,
            path,
            query: new URL(c.req.url).searchParams,
            params,
            body: parseJson(c.get('raw')),
          });
        } catch (error) {
          if (error instanceof HttpError) reply = errorReply(error);
          else {
            state.opts.log(`simulator: ${method} ${path} failed: ${(error as Error).stack ?? String(error)}`);
            reply = errorReply(new HttpError(500, 'Internal server error'));
          }
        } finally {
          handledHold?.();
        }
      }
      if (rule?.action === 'holdResponse') {
        const hold = state.intercepts.hold();
        hold.handled();
        if ((await hold.ended) === 'discard') return reset(c);
      }
      if (rule?.action === 'dropResponse') return reset(c);
      // "Apply the write, drop the response": the transaction exists, the client never hears of it.
      if (
        faulted &&
        decision.dropCreateResponse &&
        route.method === 'POST' &&
        route.path === '/transactions' &&
        reply.status === 201
      )
        return reset(c);
      if (decision.kind === 'truncate' && faulted && path !== TOKEN_PATH) return truncated(c, reply);
      return toResponse(reply);
    });
  }

  app.notFound((c) => toResponse(errorReply(new HttpError(404, `Cannot ${c.req.method} ${c.req.path}`))));
  app.onError((error, c) => {
    if (error instanceof HttpError) return toResponse(errorReply(error));
    state.opts.log(`simulator: ${c.req.method} ${c.req.path} failed: ${String(error)}`);
    return toResponse(errorReply(new HttpError(500, 'Internal server error')));
  });

  // The globals stay Node's own: the simulator often shares its process with ddsync's fetch.
  const server = createAdaptorServer({ fetch: app.fetch, overrideGlobalObjects: false }) as http.Server;
  server.keepAliveTimeout = 5_000;
  const sockets = new Set<Socket>();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('close', () => {
    for (const s of sockets) s.destroy();
  });
  return server;
}
