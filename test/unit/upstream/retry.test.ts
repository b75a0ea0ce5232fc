import { afterEach, describe, expect, it } from 'vitest';
import { createUpstreamClient, type UpstreamClient } from '../../../upstream/client.ts';
import {
  BadRequestError,
  ConflictError,
  ForbiddenError,
  NetworkError,
  NotEntitledError,
  NotFoundError,
  NotImplementedError,
  RateLimitedError,
  ServerError,
  UnprocessableError,
  UpstreamError,
} from '../../../upstream/errors.ts';
import { provesNotApplied } from '../../../upstream/retry-policy.ts';
import { emptyStats } from '../../../upstream/stats.ts';
import {
  fakeJwt,
  json,
  recordingSleep,
  startServer,
  tokenRoute,
  type Handler,
  type LocalServer,
} from './local-server.ts';

const servers: LocalServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

const tx = { activityType: 'IMPORT', countryOfActivity: 'DE', customId: 'req-1' } as const;

/** A client against a local server whose resource routes answer with `answers` in turn. */
async function setup(answers: Handler[], extra: Partial<Parameters<typeof createUpstreamClient>[0]> = {}) {
  let i = 0;
  const server = await startServer((req, res) => {
    if (tokenRoute(req, res, () => fakeJwt(1))) return;
    const answer = answers[Math.min(i++, answers.length - 1)]!;
    return answer(req, res);
  });
  servers.push(server);
  const { sleep, delays } = recordingSleep();
  const client: UpstreamClient = createUpstreamClient({
    baseUrl: server.url,
    clientId: 'c',
    clientSecret: 'secret-xyz',
    sleep,
    random: () => 0.5,
    maxAttempts: 4,
    ...extra,
  });
  const calls = () => server.requests.filter((r) => !r.path.endsWith('/token'));
  return { client, delays, calls };
}

const ok: Handler = (_req, res) => json(res, 200, []);
const status =
  (s: number, headers: Record<string, string> = {}): Handler =>
  (_req, res) =>
    json(res, s, { statusCode: s, message: `status ${s}`, error: 'x' }, headers);
const reset: Handler = (_req, res) => res.socket?.destroy();

describe('retries', () => {
  it('honours Retry-After on 429 (via the injected sleep) and counts it', async () => {
    const { client, delays, calls } = await setup([status(429, { 'retry-after': '2' }), ok]);
    const runStats = emptyStats();
    expect(await client.listSuppliers({ stats: runStats })).toEqual([]);
    expect(delays).toEqual([2000]);
    expect(calls()).toHaveLength(2);
    expect(client.stats).toMatchObject({ rateLimited: 1, retries: 1 });
    expect(runStats).toMatchObject({ rateLimited: 1, retries: 1, requests: 2 });
  });

  it('uses jittered backoff when 429 has no Retry-After', async () => {
    const { client, delays } = await setup([status(429), status(429), ok], { retryBaseMs: 100 });
    await client.listSuppliers();
    expect(delays).toEqual([50, 100]); // random 0.5 of ceilings 100 and 200
  });

  it('retries 5xx and then succeeds', async () => {
    const { client, calls } = await setup([status(503), status(500), status(502), ok]);
    expect(await client.listSuppliers()).toEqual([]);
    expect(calls()).toHaveLength(4);
    expect(client.stats.serverErrors).toBe(3);
  });

  it('gives up after maxAttempts with a typed, retryable error', async () => {
    const { client, calls, delays } = await setup([status(502)], { maxAttempts: 3 });
    const err = await client.listSuppliers().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServerError);
    expect((err as ServerError).retryable).toBe(true);
    expect((err as ServerError).status).toBe(502);
    expect((err as ServerError).message).toBe('GET /business-connections/suppliers: 502 server error: status 502');
    expect(calls()).toHaveLength(3);
    expect(delays).toHaveLength(2);
  });

  it('a 429 that never ends becomes RateLimitedError carrying retryAfterMs', async () => {
    const { client } = await setup([status(429, { 'retry-after': '7' })], { maxAttempts: 2 });
    const err = (await client.listSuppliers().catch((e: unknown) => e)) as RateLimitedError;
    expect(err).toBeInstanceOf(RateLimitedError);
    expect(err.retryAfterMs).toBe(7000);
  });

  it.each([
    [400, BadRequestError],
    [403, ForbiddenError],
    [404, NotFoundError],
    [409, ConflictError],
    [422, UnprocessableError],
    [501, NotImplementedError],
  ] as const)('does not retry %i', async (code, type) => {
    const { client, calls, delays } = await setup([status(code), ok]);
    const err = await client.listSuppliers().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(type);
    expect((err as Error).name).toBe(type.name);
    expect(calls()).toHaveLength(1);
    expect(delays).toEqual([]);
  });

  it('reads {statusCode, message[], error} bodies and tolerates other bodies', async () => {
    const { client } = await setup([
      (_q, res) =>
        json(res, 400, { statusCode: 400, message: ['hsn must be digits', 'unit is invalid'], error: 'Bad Request' }),
    ]);
    const err = (await client.getTransaction('t1').catch((e: unknown) => e)) as BadRequestError;
    expect(err.serviceMessages).toEqual(['hsn must be digits', 'unit is invalid']);
    expect(err.endpoint).toBe('GET /transactions/{id}');
    expect(err.message).toBe('GET /transactions/{id}: 400 bad request: hsn must be digits; unit is invalid');
    const { client: c2 } = await setup([
      (_q, res) => {
        res.writeHead(404, { 'content-type': 'text/html' });
        res.end('<h1>Not here</h1>');
      },
    ]);
    const e2 = (await c2.getWebhook('w1').catch((e: unknown) => e)) as NotFoundError;
    expect(e2.serviceMessage).toBe('<h1>Not here</h1>');
  });

  it('403 on transaction endpoints means not entitled', async () => {
    const { client } = await setup([status(403)]);
    const err = await client.listTransactions().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotEntitledError);
    expect((err as Error).name).toBe('NotEntitledError');
  });

  it('retries a GET after a connection reset', async () => {
    const { client, calls } = await setup([reset, ok]);
    expect(await client.listSuppliers()).toEqual([]);
    expect(calls()).toHaveLength(2);
    expect(client.stats.networkErrors).toBe(1);
  });

  it('does NOT repeat POST /transactions after a lost response by default', async () => {
    const { client, calls } = await setup([reset, (_q, res) => json(res, 201, { id: 't', status: 'DRAFT' })]);
    const err = (await client.createTransaction(tx).catch((e: unknown) => e)) as NetworkError;
    expect(err).toBeInstanceOf(NetworkError);
    expect(err.retryable).toBe(true);
    expect(err.outcomeUnknown).toBe(true);
    expect(err.endpoint).toBe('POST /transactions');
    expect(calls()).toHaveLength(1);
  });

  it('repeats POST /transactions after a lost response when the caller opts in', async () => {
    const { client, calls } = await setup([
      reset,
      (_q, res) => json(res, 201, { id: 't', status: 'DRAFT', customId: 'req-1' }),
    ]);
    expect((await client.createTransaction(tx, { repeatable: true })).customId).toBe('req-1');
    expect(calls()).toHaveLength(2);
  });

  it('repeats POST on 429 and 503 (not processed) but not on 500', async () => {
    const created: Handler = (_q, res) => json(res, 201, { id: 't', status: 'DRAFT' });
    const a = await setup([status(429), status(503), created]);
    expect((await a.client.createTransaction(tx)).status).toBe('DRAFT');
    expect(a.calls()).toHaveLength(3);
    const b = await setup([status(500), created]);
    await expect(b.client.createTransaction(tx)).rejects.toBeInstanceOf(ServerError);
    expect(b.calls()).toHaveLength(1);
  });

  it('once: a create refused for now (429, 503, a refused connection) is thrown after one send, not repeated', async () => {
    const created: Handler = (_q, res) => json(res, 201, { id: 't', status: 'DRAFT' });
    for (const refusal of [status(429, { 'retry-after': '0' }), status(503)]) {
      const { client, calls, delays } = await setup([refusal, created]);
      const stats = emptyStats();
      const error = await client.createTransaction(tx, { once: true, stats }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(UpstreamError);
      expect(calls()).toHaveLength(1);
      expect(delays).toEqual([]);
      expect(stats.retries).toBe(0);
      // The next call is sent as usual.
      expect((await client.createTransaction(tx, { once: true })).status).toBe('DRAFT');
      expect(calls()).toHaveLength(2);
    }
  });

  it.each([
    [400, true],
    [401, true],
    [403, true],
    [409, true],
    [422, true],
    [429, true],
    [503, true],
    [500, false],
    [502, false],
    ['reset', false],
  ] as const)('a create that failed with %s proves it was not applied: %s', async (answer, notApplied) => {
    const { client } = await setup([answer === 'reset' ? reset : status(answer)], {
      maxAttempts: 2,
      maxTokenRejections: 1,
    });
    const error = await client.createTransaction(tx).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamError);
    expect(provesNotApplied(error)).toBe(notApplied);
  });

  it('times out a silent request and retries it', async () => {
    let first = true;
    const { client, calls } = await setup(
      [
        (_q, res) => {
          if (first) {
            first = false;
            return;
          } // never answers
          json(res, 200, []);
        },
      ],
      { timeoutMs: 100 },
    );
    expect(await client.listSuppliers()).toEqual([]);
    expect(calls()).toHaveLength(2);
    const { client: c2 } = await setup([() => undefined], { timeoutMs: 50, maxAttempts: 1 });
    const err = (await c2.listSuppliers().catch((e: unknown) => e)) as NetworkError;
    expect(err).toBeInstanceOf(NetworkError);
    expect(err.message).toBe('GET /business-connections/suppliers: network error: no response within 50 ms');
  });

  it('treats a truncated body and unparseable JSON as retryable network errors', async () => {
    const truncated: Handler = (_q, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
      res.write('[{"id": "c1"');
      setImmediate(() => res.socket?.destroy());
    };
    const a = await setup([truncated, (_q, res) => json(res, 200, [{ id: 'c1' }])]);
    expect(await a.client.listSuppliers()).toEqual([{ id: 'c1' }]);
    expect(a.calls()).toHaveLength(2);

    const garbage: Handler = (_q, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('[{"id": "c1"');
    };
    const b = await setup([garbage], { maxAttempts: 2 });
    const err = (await b.client.listSuppliers().catch((e: unknown) => e)) as NetworkError;
    expect(err).toBeInstanceOf(NetworkError);
    expect(err.message).toMatch(
      /^GET \/business-connections\/suppliers: network error: response body truncated or invalid/,
    );
    expect(b.calls()).toHaveLength(2);
  });

  it('rate control: never more requests in flight than `concurrency`', async () => {
    let inFlight = 0;
    let peak = 0;
    const slow: Handler = async (_q, res) => {
      inFlight++;
      peak = Math.max(peak, inFlight);
      await new Promise((r) => setImmediate(r));
      await new Promise((r) => setTimeout(r, 5));
      inFlight--;
      json(res, 200, []);
    };
    const { client, calls } = await setup([slow], { concurrency: 2 });
    await Promise.all(Array.from({ length: 8 }, () => client.listSuppliers()));
    expect(calls()).toHaveLength(8);
    expect(peak).toBeLessThanOrEqual(2);
    expect(peak).toBe(2);
  });
});
