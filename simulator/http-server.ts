// The node:http front: routing, body parsing, authentication, fault injection, response writing.
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { decideFault, type FaultDecision } from './faults.ts';
import { HttpError } from './http-errors.ts';
import { compile, match, type Reply, type Route } from './router.ts';
import type { SimState } from './state.ts';

const MAX_BODY_BYTES = 10 * 1024 * 1024;
const TOKEN_PATH = '/auth/machine-to-machine-clients/token';

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) reject(new HttpError(413, 'Request body too large'));
      else chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function parseJson(raw: Buffer): unknown {
  if (raw.length === 0) return undefined;
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch (error) {
    throw new HttpError(400, `Invalid JSON body: ${(error as Error).message}`);
  }
}

function errorReply(error: HttpError): Reply {
  return { status: error.statusCode, json: error.body(), headers: error.headers };
}

/** Writes a reply; `truncate` sends a Content-Length larger than what is written, then destroys the socket. */
async function writeReply(res: ServerResponse, reply: Reply, truncate: boolean): Promise<void> {
  const headers: Record<string, string> = { ...reply.headers };
  if (reply.stream) {
    res.writeHead(reply.status, { 'content-type': reply.contentType ?? 'application/json; charset=utf-8', ...headers });
    let chunks = 0;
    await reply.stream(async (chunk) => {
      if (res.destroyed) return false;
      if (truncate && chunks++ > 0) {
        res.destroy();
        return false;
      }
      if (!res.write(chunk)) await new Promise<void>((resolve) => { res.once('drain', resolve); res.once('close', resolve); });
      return !res.destroyed;
    });
    if (!res.destroyed) res.end();
    return;
  }
  let body: Buffer | undefined;
  if (reply.bytes) body = reply.bytes;
  else if (reply.json !== undefined) body = Buffer.from(JSON.stringify(reply.json));
  if (body) headers['content-type'] = reply.contentType ?? 'application/json; charset=utf-8';
  headers['content-length'] = String(body?.length ?? 0);
  res.writeHead(reply.status, headers);
  if (truncate && body && body.length > 1) {
    res.write(body.subarray(0, Math.floor(body.length / 2)));
    // Let the partial body reach the client before the connection is cut.
    setImmediate(() => res.destroy());
    return;
  }
  res.end(body);
}

/** Applies the exclusive fault, if any; returns a reply to send instead, 'reset', or undefined. */
function faultReply(state: SimState, decision: FaultDecision, authenticated: boolean, authorization: string | undefined): Reply | 'reset' | undefined {
  switch (decision.kind) {
    case 'http500': return errorReply(new HttpError(500, 'Internal server error (simulated)'));
    case 'http503': return errorReply(new HttpError(503, 'Service unavailable (simulated)'));
    case 'http429': {
      const seconds = Math.round(state.settings.faults.retryAfterSeconds * state.opts.timeScale);
      return errorReply(new HttpError(429, 'Too Many Requests', { 'retry-after': String(seconds) }));
    }
    case 'http429NoRetryAfter': return errorReply(new HttpError(429, 'Too Many Requests'));
    case 'reset': return 'reset';
    case 'tokenExpiry': return authenticated && state.auth.expireEarly(authorization) ? errorReply(new HttpError(401, 'Unauthorized')) : undefined;
    default: return undefined;
  }
}

export function createHttpServer(state: SimState, routes: Route[]): http.Server {
  const compiled = compile(routes);
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://simulator');
    const method = req.method ?? 'GET';
    const raw = await readBody(req);
    const found = match(compiled, method, url.pathname);
    const isControl = url.pathname.startsWith('/_sim/');
    const isToken = url.pathname === TOKEN_PATH;
    let decision: FaultDecision = { latencyMs: 0, dropCreateResponse: false };
    if (!isControl) decision = decideFault(state.settings.faults, state.seed, state.requestCounter++, isToken);
    if (decision.latencyMs > 0) await state.timers.sleep(decision.latencyMs);
    const injected = found && !isControl ? faultReply(state, decision, !found.route.public, req.headers.authorization) : undefined;
    if (injected === 'reset') {
      req.socket.destroy();
      return;
    }
    let reply: Reply;
    if (injected) reply = injected;
    else if (!found) reply = errorReply(new HttpError(404, `Cannot ${method} ${url.pathname}`));
    else {
      try {
        if (!found.route.public) {
          await state.auth.verify(req.headers.authorization);
          if (!state.settings.entitlements.canAccessApi) throw new HttpError(403, 'The business is not entitled to API access');
        }
        reply = await found.route.handler({ req, method, path: url.pathname, query: url.searchParams, params: found.params, body: parseJson(raw) });
      } catch (error) {
        if (error instanceof HttpError) reply = errorReply(error);
        else {
          state.opts.log(`simulator: ${method} ${url.pathname} failed: ${(error as Error).stack ?? String(error)}`);
          reply = errorReply(new HttpError(500, 'Internal server error'));
        }
      }
    }
    // "Apply the write, drop the response": the transaction exists, the client never hears of it.
    if (decision.dropCreateResponse && method === 'POST' && url.pathname.replace(/\/$/, '') === '/transactions' && reply.status === 201) {
      req.socket.destroy();
      return;
    }
    await writeReply(res, reply, decision.kind === 'truncate' && !isControl && !isToken);
  };
  const server = http.createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (error instanceof HttpError && !res.headersSent) {
        void writeReply(res, errorReply(error), false);
        return;
      }
      state.opts.log(`simulator: request failed: ${String(error)}`);
      if (!res.headersSent) res.writeHead(500).end();
      else res.destroy();
    });
  });
  server.keepAliveTimeout = 5_000;
  const sockets = new Set<Socket>();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('close', () => { for (const s of sockets) s.destroy(); });
  return server;
}
