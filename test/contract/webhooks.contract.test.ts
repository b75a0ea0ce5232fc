import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { pino } from 'pino';
import { Webhook as SvixWebhook } from 'svix';
import { startHarness, rejectionOf, type Harness } from './harness.ts';
import { recordingFetch } from './recording-fetch.ts';
import { BadRequestError, NotFoundError, RequestValidationError, type UpstreamClient } from '../../upstream/index.ts';
import type { WebhookAttempt } from '../../schema/upstream.ts';

interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A local webhook endpoint on a free port: 2xx on /hook, 500 on /fail. Each request resolves a waiter. */
async function startReceiver() {
  const received: Received[] = [];
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      const fail = req.url?.startsWith('/fail');
      res.writeHead(fail ? 500 : 200, { 'content-type': 'text/plain' });
      res.end(fail ? 'receiver broken' : 'ok');
      for (const w of [...waiters])
        if (received.length >= w.count) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve();
        }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    received,
    /** Resolves once `count` requests in total have arrived (the test timeout bounds the wait). */
    until: (count: number) =>
      new Promise<void>((resolve) => (received.length >= count ? resolve() : waiters.push({ count, resolve }))),
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** Polls the attempts of a webhook until `n` are recorded, bounded by count. */
async function attemptsUntil(api: UpstreamClient, id: string, n: number, maxPolls = 500): Promise<WebhookAttempt[]> {
  for (let i = 0; i < maxPolls; i++) {
    const attempts = await api.listWebhookAttempts(id);
    if (attempts.length >= n) return attempts;
    await new Promise((r) => setImmediate(r));
  }
  throw new Error(`webhook ${id}: fewer than ${n} attempts after ${maxPolls} polls`);
}

describe('contract: webhooks', () => {
  let h: Harness;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  const logLines: string[] = [];
  let logged: UpstreamClient;

  beforeAll(async () => {
    receiver = await startReceiver();
    h = await startHarness({
      layout: { ownPlots: 1, suppliers: [{ plots: 2 }] },
      resolve: { 'hooks.ddsync.test': `127.0.0.1:${receiver.port}` },
    });
    const memory = new Writable({
      write(chunk, _enc, done) {
        logLines.push(String(chunk));
        done();
      },
    });
    logged = h.client({ logger: pino({ level: 'debug' }, memory) });
  });
  afterAll(async () => {
    await h?.close();
    await receiver?.close();
  });

  it('creates (201), lists, reads, patches and deletes (204) a webhook', async () => {
    expect(await h.api.listWebhooks()).toEqual([]);
    const rec = recordingFetch();
    const api = h.client({ fetch: rec.fetch });
    const created = await api.createWebhook({ url: 'https://hooks.ddsync.test/crud', events: ['transaction.updated'] });
    expect(rec.last('POST', /^\/webhooks$/)?.status).toBe(201);
    expect(created).toMatchObject({
      url: 'https://hooks.ddsync.test/crud',
      isActive: true,
      events: ['transaction.updated'],
      description: null,
    });
    expect(created.id).toMatch(/^[0-9a-f-]{36}$/);
    expect((await h.api.listWebhooks()).map((w) => w.id)).toEqual([created.id]);
    expect(await h.api.getWebhook(created.id)).toEqual(created);

    const patched = await h.api.updateWebhook(created.id, {
      url: 'https://hooks.ddsync.test/crud2',
      description: 'ERP feed',
      isActive: false,
    });
    expect(patched).toMatchObject({
      id: created.id,
      url: 'https://hooks.ddsync.test/crud2',
      description: 'ERP feed',
      isActive: false,
      events: ['transaction.updated'],
    });
    expect(await h.api.getWebhook(created.id)).toMatchObject({ description: 'ERP feed', isActive: false });

    await api.deleteWebhook(created.id);
    expect(rec.last('DELETE', /^\/webhooks\//)?.status).toBe(204);
    expect(await h.api.listWebhooks()).toEqual([]);
    expect(await rejectionOf(h.api.getWebhook(created.id))).toBeInstanceOf(NotFoundError);
    expect(await rejectionOf(h.api.deleteWebhook(created.id))).toBeInstanceOf(NotFoundError);
  });

  it('lists the event kinds', async () => {
    expect(await h.api.listWebhookEventTypes()).toEqual(['transaction.updated']);
  });

  it('reads stats and attempts (an array) of a fresh webhook; send-example answers a messageId', async () => {
    const hook = await h.api.createWebhook({ url: 'https://hooks.ddsync.test/hook?fresh=1', isActive: false });
    expect(await h.api.getWebhookStats(hook.id)).toEqual({ successfulMessages: 0, failedMessages: 0 });
    const attempts = await h.api.listWebhookAttempts(hook.id);
    expect(Array.isArray(attempts)).toBe(true);
    expect(attempts).toEqual([]);
    const rec = recordingFetch();
    const { messageId } = await h.client({ fetch: rec.fetch }).sendExampleWebhookEvent(hook.id, 'transaction.updated');
    expect(rec.last('POST', /\/send-example$/)?.status).toBe(201);
    expect(messageId).toMatch(/^msg_/);
    const refused = await rejectionOf(h.api.sendExampleWebhookEvent(hook.id, 'plot.created'));
    expect(refused).toBeInstanceOf(BadRequestError);
    expect(refused.serviceMessage).toMatch(/eventType/);
    await attemptsUntil(h.api, hook.id, 1); // an inactive webhook still receives example messages
    await h.api.deleteWebhook(hook.id);
  });

  it('returns the whsec_ secret, and the client logger at debug level never prints it', async () => {
    const hook = await logged.createWebhook({ url: 'https://hooks.ddsync.test/secret' });
    const linesBefore = logLines.length;
    const secret = await logged.getWebhookSecret(hook.id);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/=]{20,}$/);
    expect(secret).toBe(h.sim.control.webhooks().find((w) => w.id === hook.id)?.secret);
    await logged.getWebhookSecret(hook.id);
    await rejectionOf(logged.getWebhook('00000000-0000-4000-8000-00000000dead'));
    // The logger did log these calls (so the absence below means something)...
    const lines = logLines.slice(linesBefore).join('');
    expect(lines).toContain('/webhooks/{id}/secret');
    expect(lines).toMatch(/"level":20/);
    // ...and no line anywhere carries the secret (nor its base64 key part).
    const all = logLines.join('');
    expect(all).not.toContain(secret);
    expect(all).not.toContain(secret.slice('whsec_'.length));
    await logged.deleteWebhook(hook.id);
  });

  it("applies the contract's validation limits: the client refuses before sending", async () => {
    const before = h.api.stats.requests;
    const base = 'https://hooks.ddsync.test/';
    const cases: Array<[() => Promise<unknown>, RegExp]> = [
      [
        () => h.api.createWebhook({ url: 'http://127.0.0.1:9/x' }),
        /url: expected a valid http\(s\) URL whose host has a TLD/,
      ],
      [() => h.api.createWebhook({ url: 'http://localhost:9/x' }), /url/],
      [() => h.api.createWebhook({ url: `${base}${'a'.repeat(2049 - base.length)}` }), /url/],
      [() => h.api.createWebhook({ url: `${base}ok`, description: 'd'.repeat(1001) }), /description/],
      [() => h.api.updateWebhook('any-id', { url: 'http://127.0.0.1:9/x' }), /url/],
      [() => h.api.updateWebhook('any-id', { url: `${base}ok`, description: 'd'.repeat(1001) }), /description/],
    ];
    for (const [call, field] of cases) {
      const error = await rejectionOf(call());
      expect(error).toBeInstanceOf(RequestValidationError);
      expect(error.message).toMatch(field);
    }
    expect(h.api.stats.requests).toBe(before);
    expect(h.sim.control.webhooks()).toEqual([]);

    // At the limits exactly, both the client and the service accept.
    const longest = `${base}${'a'.repeat(2048 - base.length)}`;
    expect(longest).toHaveLength(2048);
    const atLimit = await h.api.createWebhook({ url: longest, description: 'd'.repeat(1000) });
    expect(atLimit.url).toBe(longest);
    expect(atLimit.description).toHaveLength(1000);
    await h.api.deleteWebhook(atLimit.id);
  });

  it('the service refuses the same inputs with 400 (checked raw, since the client never sends them)', async () => {
    const token = await h.sim.control.mintToken(3600);
    const post = async (body: unknown) => {
      const res = await fetch(`${h.sim.url}/webhooks`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: res.status, message: ((await res.json()) as { message: string[] }).message.join('; ') };
    };
    expect(await post({ url: 'http://127.0.0.1:9/x' })).toMatchObject({
      status: 400,
      message: expect.stringMatching(/top-level domain/),
    });
    expect(await post({ url: `https://hooks.ddsync.test/${'a'.repeat(2030)}` })).toMatchObject({
      status: 400,
      message: expect.stringMatching(/2048/),
    });
    expect(await post({ url: 'https://hooks.ddsync.test/x', description: 'd'.repeat(1001) })).toMatchObject({
      status: 400,
      message: expect.stringMatching(/1000/),
    });
  });

  it('the client and the service agree on every webhook url (one rule, schema/upstream/webhook-rules.ts)', async () => {
    const token = await h.sim.control.mintToken(3600);
    const cases: Array<[string, boolean]> = [
      ['https://hooks.ddsync.test/agree', true],
      ['http://hooks.ddsync.test:8080/agree?x=1', true],
      ['http://127.0.0.1:9/x', false],
      ['http://localhost:9/x', false],
      ['ftp://hooks.ddsync.test/x', false],
      [`https://hooks.${'a'.repeat(64)}/x`, false], // longer than any TLD: the client used to accept it
      [`https://hooks.ddsync.test/${'a'.repeat(2049 - 'https://hooks.ddsync.test/'.length)}`, false],
    ];
    for (const [url, ok] of cases) {
      const client = await h.api.createWebhook({ url }).then(
        (w) => w,
        (e: unknown) => e,
      );
      const res = await fetch(`${h.sim.url}/webhooks`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ url }),
      });
      expect(res.status, url).toBe(ok ? 201 : 400);
      if (ok) {
        await h.api.deleteWebhook((client as { id: string }).id);
        await h.api.deleteWebhook(((await res.json()) as { id: string }).id);
      } else {
        expect(client, url).toBeInstanceOf(RequestValidationError);
      }
    }
  });

  it('delivers a signed example message to a real endpoint, and attempts and stats reflect it', async () => {
    const hook = await h.api.createWebhook({ url: 'https://hooks.ddsync.test/hook', events: ['transaction.updated'] });
    const secret = await h.api.getWebhookSecret(hook.id);
    const seen = receiver.received.length;
    const { messageId } = await h.api.sendExampleWebhookEvent(hook.id, 'transaction.updated');
    await receiver.until(seen + 1);
    const delivery = receiver.received[seen]!;
    expect(delivery.path).toBe('/hook');
    expect(delivery.headers.host).toBe('hooks.ddsync.test');
    const headers = {
      'svix-id': String(delivery.headers['svix-id']),
      'svix-timestamp': String(delivery.headers['svix-timestamp']),
      'svix-signature': String(delivery.headers['svix-signature']),
    };
    expect(headers['svix-id']).toBe(messageId);
    const payload = new SvixWebhook(secret).verify(delivery.body, headers) as {
      event: string;
      data: { id: string; status: string };
      timestamp: string;
    };
    expect(payload.event).toBe('transaction.updated');
    expect(typeof payload.data.id).toBe('string');
    // A tampered body or a wrong secret does not verify.
    expect(() =>
      new SvixWebhook(secret).verify(delivery.body.replace('transaction.updated', 'transaction.updatex'), headers),
    ).toThrow();
    expect(() =>
      new SvixWebhook(`whsec_${Buffer.from('another secret of enough length').toString('base64')}`).verify(
        delivery.body,
        headers,
      ),
    ).toThrow();

    const [attempt] = await attemptsUntil(h.api, hook.id, 1);
    expect(attempt).toMatchObject({
      msgId: messageId,
      url: 'https://hooks.ddsync.test/hook',
      status: 'SUCCESS',
      responseStatusCode: 200,
      response: 'ok',
    });
    expect(attempt!.msg).toMatchObject({ id: messageId, eventType: 'transaction.updated' });
    expect(attempt!.msg.payload).toEqual(JSON.parse(delivery.body));
    expect(await h.api.getWebhookStats(hook.id)).toEqual({ successfulMessages: 1, failedMessages: 0 });
  });

  it('records a failed delivery as a FAIL attempt and a failed message', async () => {
    const hook = await h.api.createWebhook({ url: 'https://hooks.ddsync.test/fail' });
    const seen = receiver.received.length;
    const { messageId } = await h.api.sendExampleWebhookEvent(hook.id, 'transaction.updated');
    await receiver.until(seen + 1);
    const [attempt] = await attemptsUntil(h.api, hook.id, 1);
    expect(attempt).toMatchObject({
      msgId: messageId,
      status: 'FAIL',
      responseStatusCode: 500,
      response: 'receiver broken',
    });
    expect(await h.api.getWebhookStats(hook.id)).toEqual({ successfulMessages: 0, failedMessages: 1 });
  });
});
