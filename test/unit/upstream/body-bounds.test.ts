import { afterEach, describe, expect, it } from 'vitest';
import { createUpstreamClient } from '../../../upstream/client.ts';
import { NetworkError, ServerError } from '../../../upstream/errors.ts';
import { ERROR_BODY_KEPT_BYTES, WHOLE_BODY_MAX_BYTES } from '../../../upstream/transport.ts';
import { fakeJwt, recordingSleep, startServer, tokenRoute, type LocalServer } from './local-server.ts';

// A body read whole is bounded (upstream/transport.ts, WHOLE_BODY_MAX_BYTES): a service or proxy that
// answers without end must fail the request, not fill the worker's heap until V8 ends it.

const CHUNK = Buffer.alloc(1024 * 1024, ' ');

/**
 * Answers with `status`, `head` and then `chunk` again and again until the client goes away; counts
 * the bytes it wrote and the connections closed.
 */
function endless(
  res: import('node:http').ServerResponse,
  sent: { bytes: number; closed: number },
  { status = 200, head = '[', chunk = CHUNK }: { status?: number; head?: string; chunk?: Buffer } = {},
) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.write(head);
  const more = () => {
    while (!res.destroyed) {
      sent.bytes += chunk.byteLength;
      if (!res.write(chunk)) return void res.once('drain', more);
    }
  };
  res.once('close', () => sent.closed++);
  more();
}

/** A client of `server`, asking once unless told otherwise. */
const clientOf = (server: LocalServer, o: Partial<Parameters<typeof createUpstreamClient>[0]> = {}) =>
  createUpstreamClient({ baseUrl: server.url, clientId: 'c', clientSecret: 'secret-xyz', maxAttempts: 1, ...o });

describe('bodies read whole are bounded', () => {
  let server: LocalServer | undefined;
  afterEach(async () => server?.close());

  it('cuts an endless JSON answer at the bound, closes the connection and fails retryably, naming the rule', async () => {
    const sent = { bytes: 0, closed: 0 };
    server = await startServer((req, res) => {
      if (tokenRoute(req, res, () => fakeJwt(1))) return;
      endless(res, sent);
    });
    const { sleep } = recordingSleep();
    const client = clientOf(server, { maxAttempts: 2, sleep });
    const error = await client.listSuppliers().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NetworkError);
    expect((error as NetworkError).retryable).toBe(true);
    expect((error as NetworkError).message).toBe(
      'GET /business-connections/suppliers: network error: response body larger than 32 MB, more than ddsync reads whole (WHOLE_BODY_MAX_BYTES)',
    );
    expect((error as NetworkError).endpoint).toBe('GET /business-connections/suppliers');
    // Asked twice, each answer left once its bound was passed (what TCP had in flight aside).
    const asked = server.requests.filter((r) => r.path === '/business-connections/suppliers');
    expect(asked).toHaveLength(2);
    await expect.poll(() => sent.closed).toBe(2);
    expect(sent.bytes).toBeLessThan(2 * (WHOLE_BODY_MAX_BYTES + 16 * 1024 * 1024));
  });

  it('reads an answer of any length up to the bound', async () => {
    const many = Array.from({ length: 3000 }, (_, i) => ({ id: `c${i}`, padding: 'x'.repeat(8000) }));
    const text = JSON.stringify(many);
    expect(text.length).toBeGreaterThan(20 * 1024 * 1024);
    expect(text.length).toBeLessThan(WHOLE_BODY_MAX_BYTES);
    server = await startServer((req, res) => {
      if (tokenRoute(req, res, () => fakeJwt(1))) return;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(text);
    });
    const client = clientOf(server);
    expect(await client.listSuppliers()).toHaveLength(3000);
  });

  it("reads an invitation's answer without the plots its businesses embed, however many they weigh", async () => {
    // 33 MB of embedded plots: past the bound of a body read whole, read anyway since they are dropped unread.
    const plot = JSON.stringify({
      id: 'p',
      geometry: {
        type: 'Polygon',
        coordinates: [
          [
            [1, 2],
            [3, 4],
            [5, 6],
            [1, 2],
          ],
        ],
      },
    });
    const plots = (n: number) => `[${Array.from({ length: n }, () => plot).join(',')}]`;
    const answer = (n: number) =>
      `{"id":"i1","status":"ACCEPTED","sourceIsInvitee":"true","business":{"id":"b1","plots":${plots(n)}},"sentByUser":{"id":"u1","business":{"id":"b2","plots":${plots(2)}}}}`;
    const large = answer(420_000);
    expect(large.length).toBeGreaterThan(WHOLE_BODY_MAX_BYTES);
    server = await startServer((req, res) => {
      if (tokenRoute(req, res, () => fakeJwt(1))) return;
      res.writeHead(req.method === 'POST' ? 201 : 200, { 'content-type': 'application/json' });
      res.end(req.method === 'POST' ? answer(3) : large);
    });
    const client = clientOf(server);
    const updated = await client.updateBusinessInvitation('i1', { status: 'ACCEPTED' });
    expect(updated).toMatchObject({ id: 'i1', status: 'ACCEPTED', sourceIsInvitee: true, business: { id: 'b1' } });
    expect(updated.business).not.toHaveProperty('plots');
    const created = await client.createBusinessInvitation({ email: 'buyer@example.com' });
    expect(created).toMatchObject({ id: 'i1', business: { id: 'b1' }, sentByUser: { business: { id: 'b2' } } });
    expect(created.business).not.toHaveProperty('plots');
    expect(created.sentByUser?.business).not.toHaveProperty('plots');
  }, 60_000);

  it('cuts an endless listing of invitations once what it keeps passes the bound', async () => {
    const sent = { bytes: 0, closed: 0 };
    const invitation = Buffer.from(
      `${JSON.stringify({ id: 'i', status: 'PENDING', customData: { note: 'x'.repeat(900) } })},`,
    );
    const many = Buffer.concat(Array.from({ length: 1024 }, () => invitation));
    server = await startServer((req, res) => {
      if (tokenRoute(req, res, () => fakeJwt(1))) return;
      endless(res, sent, { chunk: many });
    });
    const client = clientOf(server);
    const error = await client.listBusinessInvitations().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NetworkError);
    expect((error as Error).message).toBe(
      'GET /business-invitations: network error: more than 32 MB of the answer kept (without what is left out), more than ddsync holds of one (WHOLE_BODY_MAX_BYTES)',
    );
    await expect.poll(() => sent.closed).toBe(1);
  }, 60_000);

  it("cuts an invitation's answer whose kept part has no end, as the listing", async () => {
    const sent = { bytes: 0, closed: 0 };
    const note = Buffer.from(`"${'x'.repeat(1023)}",`);
    server = await startServer((req, res) => {
      if (tokenRoute(req, res, () => fakeJwt(1))) return;
      // Not the embedded plots, which are dropped unread: a member ddsync keeps, without end.
      endless(res, sent, {
        head: '{"id":"i1","status":"ACCEPTED","notes":[',
        chunk: Buffer.concat(Array(1024).fill(note)),
      });
    });
    const client = clientOf(server);
    const error = await client.updateBusinessInvitation('i1', { status: 'ACCEPTED' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NetworkError);
    expect((error as Error).message).toBe(
      'PATCH /business-invitations/{id}: network error: more than 32 MB of the answer kept (without what is left out), more than ddsync holds of one (WHOLE_BODY_MAX_BYTES)',
    );
    await expect.poll(() => sent.closed).toBe(1);
  }, 60_000);

  it("keeps the first bytes of a long error answer for the service's message and reads no further", async () => {
    const sent = { bytes: 0, closed: 0 };
    server = await startServer((req, res) => {
      if (tokenRoute(req, res, () => fakeJwt(1))) return;
      endless(res, sent, { status: 503, head: `{"statusCode":503,"message":"down for maintenance","padding":"` });
    });
    const client = clientOf(server);
    const error = await client.listSuppliers().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServerError);
    await expect.poll(() => sent.closed).toBe(1);
    expect(sent.bytes).toBeLessThan(ERROR_BODY_KEPT_BYTES + 16 * 1024 * 1024);
  });
});
