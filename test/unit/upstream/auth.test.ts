import { Writable } from 'node:stream';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { TokenManager, refreshMarginMs } from '../../../upstream/auth.ts';
import { createUpstreamClient } from '../../../upstream/client.ts';
import { BadRequestError, CredentialsRefusedError } from '../../../upstream/errors.ts';
import { fakeJwt, json, startServer, tokenRoute, type LocalServer } from './local-server.ts';

const SECRET = 'client-secret-value-42';

function deferred<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

describe('TokenManager', () => {
  it('shares one refresh among concurrent callers', async () => {
    let exchanges = 0;
    const pending = deferred<{ accessToken: string; expiresInS: number }>();
    const tm = new TokenManager(() => (exchanges++, pending.promise));
    const waiting = Array.from({ length: 25 }, () => tm.token());
    pending.resolve({ accessToken: 't1', expiresInS: 86_400 });
    expect(await Promise.all(waiting)).toEqual(Array(25).fill('t1'));
    expect(exchanges).toBe(1);
  });

  it('reuses the token until shortly before expiry, then refreshes', async () => {
    let now = 0;
    let n = 0;
    const tm = new TokenManager(
      async () => ({ accessToken: `t${++n}`, expiresInS: 100 }),
      () => now,
    );
    expect(await tm.token()).toBe('t1');
    now = 89_000; // 100 s lifetime, 10 s margin
    expect(await tm.token()).toBe('t1');
    now = 90_001;
    expect(await tm.token()).toBe('t2');
    expect(refreshMarginMs(86_400_000)).toBe(60_000);
    expect(refreshMarginMs(30_000)).toBe(3_000);
  });

  it('after a rejection, reuses a token another caller already refreshed', async () => {
    let n = 0;
    const tm = new TokenManager(async () => ({ accessToken: `t${++n}`, expiresInS: 86_400 }));
    expect(await tm.token()).toBe('t1');
    const [a, b] = await Promise.all([tm.refreshAfterRejection('t1'), tm.refreshAfterRejection('t1')]);
    expect([a, b]).toEqual(['t2', 't2']);
    expect(await tm.refreshAfterRejection('t1')).toBe('t2'); // stale rejection: no new exchange
    expect(n).toBe(2);
  });

  it('says what a 401 with a token means: stale (a newer one exists), revoked (accepted before) or refused (never accepted)', async () => {
    let n = 0;
    const tm = new TokenManager(async () => ({ accessToken: `t${++n}`, expiresInS: 86_400 }));
    expect(await tm.token()).toBe('t1');
    expect(tm.rejectionOf('t1')).toBe('refused');
    tm.noteAccepted('t1');
    expect(tm.rejectionOf('t1')).toBe('revoked');
    const refreshing = tm.refreshAfterRejection('t1');
    // Dropped, its replacement not issued yet: t1 is still the newest a caller can have met.
    expect(tm.rejectionOf('t1')).toBe('revoked');
    expect(await refreshing).toBe('t2');
    expect([tm.rejectionOf('t1'), tm.rejectionOf('t2')]).toEqual(['stale', 'refused']);
    tm.noteAccepted('t1'); // a late success with an old token says nothing of the newest
    expect(tm.rejectionOf('t2')).toBe('refused');
  });

  it('keeps a refusal of the credentials: later callers fail at once, without asking again, until invalidated', async () => {
    let n = 0;
    const refusal = new CredentialsRefusedError({
      endpoint: 'POST /token',
      status: 401,
      serviceMessages: ['Invalid client credentials'],
    });
    const tm = new TokenManager(async () => {
      n++;
      if (n === 1) throw refusal;
      return { accessToken: 'ok', expiresInS: 60 };
    });
    await expect(tm.token()).rejects.toBe(refusal);
    await expect(tm.token()).rejects.toBe(refusal);
    await expect(tm.refreshAfterRejection('old')).rejects.toBe(refusal);
    expect(n).toBe(1);
    tm.invalidate();
    expect(await tm.token()).toBe('ok');
  });

  it('retries the exchange on the next call after a failure, also when exchange throws synchronously', async () => {
    let n = 0;
    const tm = new TokenManager(() => {
      n++;
      if (n === 1) throw new Error('boom');
      return Promise.resolve({ accessToken: 'ok', expiresInS: 60 });
    });
    await expect(tm.token()).rejects.toThrow('boom');
    expect(await tm.token()).toBe('ok');
  });
});

describe('client authentication', () => {
  let server: LocalServer | undefined;
  afterEach(async () => server?.close());

  it('sends client credentials as JSON and the bearer token on calls; many calls share one token request', async () => {
    let issued = 0;
    server = await startServer((req, res) => {
      if (tokenRoute(req, res, () => fakeJwt(++issued))) return;
      json(res, 200, []);
    });
    const client = createUpstreamClient({ baseUrl: server.url, clientId: 'cid', clientSecret: SECRET });
    await Promise.all(Array.from({ length: 20 }, () => client.listSuppliers()));
    const tokenReqs = server.requests.filter((r) => r.path.endsWith('/token'));
    expect(tokenReqs).toHaveLength(1);
    expect(JSON.parse(tokenReqs[0]!.body)).toEqual({
      client_id: 'cid',
      client_secret: SECRET,
      grant_type: 'client_credentials',
    });
    expect(tokenReqs[0]!.headers['content-type']).toBe('application/json');
    const calls = server.requests.filter((r) => r.path === '/business-connections/suppliers');
    expect(calls).toHaveLength(20);
    expect(new Set(calls.map((c) => c.headers.authorization))).toEqual(new Set([`Bearer ${fakeJwt(1)}`]));
    expect(client.stats.tokenRefreshes).toBe(1);
  });

  it('on 401 refreshes the token once and repeats the call once', async () => {
    let issued = 0;
    server = await startServer((req, res) => {
      if (tokenRoute(req, res, () => fakeJwt(++issued))) return;
      if (req.headers.authorization === `Bearer ${fakeJwt(1)}`)
        return json(res, 401, { statusCode: 401, message: 'Unauthorized' });
      json(res, 200, [{ id: 'c1' }]);
    });
    const client = createUpstreamClient({ baseUrl: server.url, clientId: 'cid', clientSecret: SECRET });
    expect(await client.listSuppliers()).toEqual([{ id: 'c1' }]);
    expect(server.requests.map((r) => r.path)).toEqual([
      '/auth/machine-to-machine-clients/token',
      '/business-connections/suppliers',
      '/auth/machine-to-machine-clients/token',
      '/business-connections/suppliers',
    ]);
    expect(client.stats).toMatchObject({ tokenRefreshes: 2, unauthorizedRetries: 1, retries: 0 });
  });

  it('never puts the secret or the token in errors or log lines, even when the service echoes them', async () => {
    const lines: string[] = [];
    const logger = pino(
      { level: 'debug' },
      new Writable({
        write(chunk, _enc, cb) {
          lines.push(String(chunk));
          cb();
        },
      }),
    );
    const token = fakeJwt(1);
    server = await startServer((req, res) => {
      if (req.path.endsWith('/token')) {
        if (req.body.includes('wrong'))
          return json(res, 401, { statusCode: 401, message: `bad secret ${SECRET}wrong` });
        return tokenRoute(req, res, () => token);
      }
      json(res, 400, { statusCode: 400, message: [`token ${token} is odd`, `Bearer ${token}`], error: 'Bad Request' });
    });
    const bad = createUpstreamClient({ baseUrl: server.url, clientId: 'cid', clientSecret: `${SECRET}wrong`, logger });
    const e1 = (await bad.listSuppliers().catch((e: unknown) => e)) as Error;
    expect(e1).toBeInstanceOf(CredentialsRefusedError);
    expect(e1.message).toContain('POST /auth/machine-to-machine-clients/token');
    expect(e1.message).not.toContain(SECRET);

    const good = createUpstreamClient({ baseUrl: server.url, clientId: 'cid', clientSecret: SECRET, logger });
    const e2 = (await good.listSuppliers().catch((e: unknown) => e)) as BadRequestError;
    expect(e2).toBeInstanceOf(BadRequestError);
    expect(e2.serviceMessages).toHaveLength(2);
    for (const text of [e2.message, JSON.stringify(e2), String(e2.stack), ...e2.serviceMessages]) {
      expect(text).not.toContain(token);
      expect(text).not.toContain(SECRET);
    }
    expect(lines.length).toBeGreaterThan(0);
    const log = lines.join('');
    expect(log).toContain('/business-connections/suppliers');
    expect(log).not.toContain(token);
    expect(log).not.toContain(SECRET);
    expect(log.toLowerCase()).not.toContain('authorization');
  });
});
