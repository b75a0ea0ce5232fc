import { afterEach, describe, expect, it } from 'vitest';
import { ApplicationFailure } from '@temporalio/common';
import { createUpstreamClient } from '../../../upstream/client.ts';
import type { UpstreamClientOptions } from '../../../upstream/client-core.ts';
import { CredentialsRefusedError, UnauthorizedError } from '../../../upstream/errors.ts';
import { toActivityFailure } from '../../../activities/failures.ts';
import {
  fakeJwt,
  json,
  recordingSleep,
  startServer,
  tokenRoute,
  type LocalServer,
  type RecordedRequest,
} from './local-server.ts';

/** The 401 policy of the client (upstream/token-rejections.ts) against a local server. */

const servers: LocalServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

const TX = { activityType: 'IMPORT', countryOfActivity: 'DE', customId: 'key-1' } as const;

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/**
 * A server that issues fakeJwt(1), fakeJwt(2), ... and answers a call with the bearer of token n only
 * when `accepts(n)` (401 otherwise); `gate` may hold a call before it is answered.
 */
async function setup(
  accepts: (n: number) => boolean,
  extra: Partial<UpstreamClientOptions> = {},
  gate?: (req: RecordedRequest, token: number) => Promise<void>,
) {
  let issued = 0;
  const tokenOf = (authorization: string | undefined) =>
    Array.from({ length: issued }, (_, i) => i + 1).find((n) => authorization === `Bearer ${fakeJwt(n)}`) ?? 0;
  const server = await startServer(async (req, res) => {
    if (tokenRoute(req, res, () => fakeJwt(++issued))) return;
    const token = tokenOf(req.headers.authorization);
    if (gate) await gate(req, token);
    if (!accepts(token)) return json(res, 401, { statusCode: 401, message: 'Unauthorized' });
    if (req.method === 'POST')
      return json(res, 201, { id: '7f1c0a3e-0000-4000-8000-000000000001', status: 'DRAFT', customId: 'key-1' });
    json(res, 200, []);
  });
  servers.push(server);
  const { sleep, delays } = recordingSleep();
  const client = createUpstreamClient({
    baseUrl: server.url,
    clientId: 'cid',
    clientSecret: 'secret-xyz',
    sleep,
    random: () => 0.5,
    retryBaseMs: 100,
    ...extra,
  });
  const calls = () => server.requests.filter((r) => !r.path.endsWith('/token'));
  return { client, delays, calls, tokenOf, issued: () => issued };
}

describe('a 401 on an ordinary endpoint', () => {
  it('with the newest token: refreshes and repeats, also a POST, as long as fresh tokens come (backing off after the first)', async () => {
    // Tokens 1 to 4 are refused (revoked early), the fifth is accepted.
    const { client, delays, calls, issued } = await setup((n) => n >= 5);
    const created = await client.createTransaction(TX);
    expect(created.id).toBe('7f1c0a3e-0000-4000-8000-000000000001');
    expect(calls().map((c) => c.method)).toEqual(['POST', 'POST', 'POST', 'POST', 'POST']);
    expect(issued()).toBe(5);
    // The first repeat at once; then half (random 0.5) of ceilings 100, 200, 400.
    expect(delays).toEqual([50, 100, 200]);
    expect(client.stats).toMatchObject({ unauthorizedRetries: 4, tokenRefreshes: 5, retries: 0 });
  });

  it('with a token older than the newest: repeated at once with the newest, which may be refused in turn', async () => {
    // Two calls meet token 1. B's 401 is held until A has refreshed (token 2) and succeeded with it:
    // B's token is then stale, and B goes on with token 2, which the service then refuses too.
    const aDone = deferred();
    let t2Uses = 0;
    const { client, delays, calls, tokenOf, issued } = await setup(
      (n) => n === 3 || (n === 2 && ++t2Uses === 1),
      {},
      async (req, token) => {
        if (token === 1 && req.path.endsWith('/buyers')) await aDone.promise;
      },
    );
    const a = client.listSuppliers().then((r) => (aDone.resolve(), r));
    const b = client.listBuyers();
    expect(await Promise.all([a, b])).toEqual([[], []]);
    const buyers = calls()
      .filter((c) => c.path.endsWith('/buyers'))
      .map((c) => tokenOf(c.headers.authorization));
    const suppliers = calls()
      .filter((c) => c.path.endsWith('/suppliers'))
      .map((c) => tokenOf(c.headers.authorization));
    expect(suppliers).toEqual([1, 2]);
    expect(buyers).toEqual([1, 2, 3]);
    // One refresh for the two 401s with token 1 (A's), one for B's 401 with token 2; no backoff for a stale token.
    expect(issued()).toBe(3);
    expect(delays).toEqual([]);
    expect(client.stats.unauthorizedRetries).toBe(3);
  });

  it('with a token the service accepted before (revoked early): replaced at once, not counted as a refusal', async () => {
    // Token 1 serves one call and is then revoked; token 2 is refused once (never accepted); token 3 works.
    const uses = new Map<number, number>();
    const { client, delays, calls, tokenOf } = await setup(
      (n) => {
        uses.set(n, (uses.get(n) ?? 0) + 1);
        return (n === 1 && uses.get(1) === 1) || n === 3;
      },
      { maxTokenRejections: 1 },
    );
    expect(await client.listSuppliers()).toEqual([]);
    expect(await client.listBuyers()).toEqual([]);
    expect(calls().map((c) => tokenOf(c.headers.authorization))).toEqual([1, 1, 2, 3]);
    expect(delays).toEqual([]);
  });

  it('met by many calls at once: one refresh for all of them', async () => {
    // The 20 calls with token 1 are answered (401) only once all of them arrived.
    const arrived: Array<() => void> = [];
    const all = deferred();
    const { client, issued } = await setup(
      (n) => n === 2,
      { concurrency: 20 },
      async (_req, token) => {
        if (token !== 1) return;
        await new Promise<void>((release) => {
          arrived.push(release);
          if (arrived.length === 20) all.resolve();
        });
      },
    );
    const results = Array.from({ length: 20 }, () => client.listSuppliers());
    await all.promise;
    for (const release of arrived) release();
    expect(await Promise.all(results)).toEqual(Array(20).fill([]));
    expect(issued()).toBe(2);
    expect(client.stats).toMatchObject({ tokenRefreshes: 2, unauthorizedRetries: 20 });
  });

  it('refused with every fresh token: gives up after maxTokenRejections with a retryable UnauthorizedError, not a loop', async () => {
    const { client, delays, calls, issued } = await setup(() => false, { maxTokenRejections: 3 });
    const error = await client.listSuppliers().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnauthorizedError);
    expect((error as UnauthorizedError).retryable).toBe(true);
    expect((error as Error).message).toContain('retried later');
    // Three 401s each followed by a refresh, the fourth ends the call; the client's 5xx loop does not repeat it.
    expect(calls()).toHaveLength(4);
    expect(issued()).toBe(4);
    expect(delays).toHaveLength(2);
    // For Temporal: retried by the activity's policy, not a final failure.
    const failure = toActivityFailure(error);
    expect(failure instanceof ApplicationFailure && failure.nonRetryable).toBe(false);
  });
});

describe('a 401 on a call sent once', () => {
  it('refreshes the token and throws a retryable UnauthorizedError without a second send; the next call carries the fresh token', async () => {
    const { client, calls, tokenOf, issued } = await setup((n) => n >= 2);
    const error = await client.createTransaction(TX, { once: true }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnauthorizedError);
    expect((error as UnauthorizedError).retryable).toBe(true);
    expect(calls()).toHaveLength(1);
    expect(issued()).toBe(2);
    expect((await client.createTransaction(TX, { once: true })).customId).toBe('key-1');
    expect(calls().map((c) => tokenOf(c.headers.authorization))).toEqual([1, 2]);
    expect(client.stats).toMatchObject({ unauthorizedRetries: 0, retries: 0 });
  });
});

describe('a refused token exchange', () => {
  it.each([401, 400, 403])(
    '%i at the token endpoint is a final CredentialsRefusedError, and no later call asks again',
    async (status) => {
      const server = await startServer((req, res) => {
        if (req.path.endsWith('/token'))
          return json(res, status, { statusCode: status, message: 'Invalid client credentials' });
        json(res, 200, []);
      });
      servers.push(server);
      const client = createUpstreamClient({
        baseUrl: server.url,
        clientId: 'cid',
        clientSecret: 'wrong-secret-1',
        sleep: recordingSleep().sleep,
      });
      const first = await client.listSuppliers().catch((e: unknown) => e);
      expect(first).toBeInstanceOf(CredentialsRefusedError);
      expect((first as CredentialsRefusedError).retryable).toBe(false);
      expect((first as Error).message).toBe(
        `POST /auth/machine-to-machine-clients/token: ${status} client credentials refused: Invalid client credentials`,
      );
      expect(await client.createTransaction(TX).catch((e: unknown) => e)).toBe(first);
      expect(server.requests.map((r) => r.path)).toEqual(['/auth/machine-to-machine-clients/token']);
      const failure = toActivityFailure(first);
      expect(failure).toBeInstanceOf(ApplicationFailure);
      expect((failure as ApplicationFailure).nonRetryable).toBe(true);
      expect((failure as ApplicationFailure).type).toBe('CredentialsRefusedError');
    },
  );

  it('an unavailable token endpoint is not a refusal: the next call asks again', async () => {
    let tokenRequests = 0;
    const server = await startServer((req, res) => {
      if (req.path.endsWith('/token') && ++tokenRequests === 1)
        return json(res, 503, { statusCode: 503, message: 'down' });
      if (tokenRoute(req, res, () => fakeJwt(1))) return;
      json(res, 200, []);
    });
    servers.push(server);
    const client = createUpstreamClient({
      baseUrl: server.url,
      clientId: 'cid',
      clientSecret: 'secret-xyz',
      sleep: recordingSleep().sleep,
      maxAttempts: 1,
    });
    const error = await client.listSuppliers().catch((e: unknown) => e);
    expect(error).not.toBeInstanceOf(CredentialsRefusedError);
    expect((error as { retryable: boolean }).retryable).toBe(true);
    expect(await client.listSuppliers()).toEqual([]);
  });
});
