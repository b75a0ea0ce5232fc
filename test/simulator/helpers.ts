// Shared helpers for simulator tests: start on port 0, authenticate, call over real HTTP.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startSimulator, type Simulator, type SimulatorOptions } from '../../simulator/index.ts';

export interface Client {
  sim: Simulator;
  token: string;
  get(path: string): Promise<Response>;
  send(method: string, path: string, body?: unknown): Promise<Response>;
  json<T = unknown>(path: string): Promise<T>;
}

export async function tokenFor(
  url: string,
  clientId = 'ddsync-demo',
  clientSecret = 'ddsync-demo-secret',
): Promise<string> {
  const res = await fetch(`${url}/auth/machine-to-machine-clients/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_id: clientId, client_secret: clientSecret, grant_type: 'client_credentials' }),
  });
  if (res.status !== 200) throw new Error(`token: ${res.status}`);
  return ((await res.json()) as { access_token: string }).access_token;
}

export async function startClient(options: SimulatorOptions = {}): Promise<Client> {
  const sim = await startSimulator({ port: 0, ...options });
  const token = await tokenFor(sim.url, options.clientId, options.clientSecret);
  const headers = { authorization: `Bearer ${token}` };
  const client: Client = {
    sim,
    token,
    get: (path) => fetch(`${sim.url}${path}`, { headers }),
    send: (method, path, body) =>
      fetch(`${sim.url}${path}`, {
        method,
        headers: { ...headers, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }),
    async json<T>(path: string): Promise<T> {
      const res = await client.get(path);
      if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${await res.text()}`);
      return (await res.json()) as T;
    },
  };
  return client;
}

export interface ReceivedHook {
  headers: http.IncomingHttpHeaders;
  body: string;
  path: string;
}

/**
 * A local webhook receiver; `respond` decides each status. `next(n)` resolves once n requests
 * have arrived (an event, not a sleep).
 */
export async function startReceiver(respond: (n: number) => number = () => 200): Promise<{
  port: number;
  received: ReceivedHook[];
  next(count: number): Promise<ReceivedHook[]>;
  close(): Promise<void>;
}> {
  const received: ReceivedHook[] = [];
  const waiters: Array<{ count: number; resolve: (r: ReceivedHook[]) => void }> = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => {
      body += c;
    });
    req.on('end', () => {
      received.push({ headers: req.headers, body, path: req.url ?? '' });
      res.writeHead(respond(received.length)).end('ok');
      for (const w of [...waiters]) {
        if (received.length >= w.count) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(received.slice(0, w.count));
        }
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    received,
    next: (count) =>
      new Promise((resolve) => {
        if (received.length >= count) resolve(received.slice(0, count));
        else waiters.push({ count, resolve });
      }),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Polls a condition on the event loop (no fixed sleeps): resolves when it holds, fails after a deadline. */
export async function until<T>(check: () => Promise<T | undefined> | T | undefined, timeoutMs = 5_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setImmediate(resolve));
  }
}
