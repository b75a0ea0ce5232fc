import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseFaults } from '../../simulator/index.ts';
import { startClient, tokenFor, type Client } from './helpers.ts';

/** Raw HTTP/1.1 exchange, so truncation and resets are visible exactly as sent. */
function rawGet(port: number, path: string, token: string): Promise<{ data: string; error?: string }> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nConnection: close\r\n\r\n`);
    });
    let data = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      data += chunk;
    });
    socket.on('error', (error) => resolve({ data, error: (error as NodeJS.ErrnoException).code ?? error.message }));
    socket.on('close', () => resolve({ data }));
  });
}

describe('fault injection', () => {
  let c: Client;
  beforeAll(async () => {
    c = await startClient({ timeScale: 0.001 });
  });
  afterAll(() => c.sim.close());
  const path = '/business-connections/suppliers';
  const only = (faults: Record<string, unknown>): void => {
    c.sim.control.setFaults(faults);
  };

  it('injects 500, 503 and 429 with and without Retry-After', async () => {
    only({ http500: 1 });
    expect((await c.get(path)).status).toBe(500);
    only({ http503: 1 });
    const unavailable = await c.get(path);
    expect(unavailable.status).toBe(503);
    expect(await unavailable.json()).toMatchObject({ statusCode: 503, error: 'Service Unavailable' });
    only({ http429: 1, retryAfterSeconds: 3000 });
    const limited = await c.get(path);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('3');
    only({ http429NoRetryAfter: 1 });
    const bare = await c.get(path);
    expect(bare.status).toBe(429);
    expect(bare.headers.get('retry-after')).toBeNull();
    only({});
    expect((await c.get(path)).status).toBe(200);
  });

  it('resets connections and truncates bodies', async () => {
    only({ reset: 1 });
    await expect(c.get(path)).rejects.toThrow();
    only({ truncate: 1 });
    const { data } = await rawGet(c.sim.port, path, c.token);
    const [head, body = ''] = data.split('\r\n\r\n');
    const declared = Number(/content-length: (\d+)/i.exec(head ?? '')?.[1]);
    expect(declared).toBeGreaterThan(0);
    expect(Buffer.byteLength(body, 'latin1')).toBeLessThan(declared);
    only({});
  });

  it('expires used tokens early, for good, but never a fresh token on its first use', async () => {
    const own = await startClient({ timeScale: 0.001 });
    try {
      expect((await own.get(path)).status).toBe(200); // the token is now in use
      own.sim.control.setFaults({ tokenExpiry: 1 });
      expect((await own.get(path)).status).toBe(401);
      own.sim.control.setFaults({});
      expect((await own.get(path)).status).toBe(401); // expired means expired
      // The token endpoint is exempt, and a fresh token survives its first use even now.
      own.sim.control.setFaults({ tokenExpiry: 1 });
      const fresh = await tokenFor(own.sim.url);
      expect((await fetch(`${own.sim.url}${path}`, { headers: { authorization: `Bearer ${fresh}` } })).status).toBe(
        200,
      );
      expect((await fetch(`${own.sim.url}${path}`, { headers: { authorization: `Bearer ${fresh}` } })).status).toBe(
        401,
      );
    } finally {
      await own.sim.close();
    }
  });

  it('adds latency', async () => {
    only({ latency: 1, latencyMs: [200_000, 200_000] });
    const started = performance.now();
    expect((await c.get(path)).status).toBe(200);
    // 200 s simulated at time scale 0.001 = 200 ms real: a lower bound only, never an upper one.
    expect(performance.now() - started).toBeGreaterThanOrEqual(190);
    only({});
  });

  it('applies POST /transactions and then drops the response', async () => {
    only({ dropCreateResponse: 1 });
    await expect(
      c.send('POST', '/transactions', { customId: 'lost-1', activityType: 'IMPORT', countryOfActivity: 'DE' }),
    ).rejects.toThrow();
    only({});
    expect(c.sim.control.transactionCountsByCustomId()['lost-1']).toBe(1);
    const listed = await c.json<Array<{ customId: string }>>('/transactions');
    expect(listed.filter((t) => t.customId === 'lost-1')).toHaveLength(1);
  });

  it('never faults /_sim/ control routes, and decides deterministically per seed', async () => {
    only({ http500: 1 });
    expect((await fetch(`${c.sim.url}/_sim/suppliers`)).status).toBe(200);
    only({});
    const run = async (): Promise<number[]> => {
      const sim = await startClient({ seed: 5, timeScale: 0 });
      sim.sim.control.setFaults('hostile');
      const statuses: number[] = [];
      for (let i = 0; i < 40; i++)
        statuses.push(
          await sim.get(path).then(
            (r) => r.status,
            () => -1,
          ),
        );
      await sim.sim.close();
      return statuses;
    };
    const [a, b] = [await run(), await run()];
    expect(a).toEqual(b);
    expect(a.some((s) => s !== 200)).toBe(true);
  });

  it('parses profiles and rejects bad JSON keys with a message naming the key', () => {
    expect(parseFaults('flaky').http500).toBeGreaterThan(0);
    expect(parseFaults('{"profile":"hostile","http500":0}').http503).toBeGreaterThan(0);
    expect(() => parseFaults('{"http600":0.1}')).toThrow(/http600/);
    expect(() => parseFaults('{"http500":2}')).toThrow(/http500 must be a probability/);
    expect(() => parseFaults('chaos')).toThrow(/none, flaky, hostile/);
  });
});
