import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { randomUUID } from 'node:crypto';
import { Webhook as Svix } from 'svix';
import { sql } from 'kysely';
import { startWorkerHarness, FAST_TIMING, type WorkerHarness } from '../support/worker-harness.ts';
import { shipmentRow, writeShipments } from '../support/shipments.ts';
import { waitUntil } from '../support/wait.ts';
import { rawExchange } from '../support/raw-http.ts';
import { freePort } from '../../infra/ports.ts';
import { startReceiver, type RunningReceiver } from '../../infra/receiver.ts';
import { createLogger } from '../../platform/logger.ts';
import { marker, type DesiredWebhook } from '../../schema/desired-webhooks.ts';
import { DISPATCH_MAX_ATTEMPTS, pendingEvents, storeEvent } from '../../warehouse/webhooks/ledger.ts';
import { dispatchEvent } from '../../infra/webhook-dispatch.ts';
import type { Client } from '@temporalio/client';
import { maintainWebhooks, maintainWebhooksWorkflowId } from '../../workflows/maintain-webhooks.ts';

const HOST = 'hooks.ddsync.test';

describe('webhooks: desired state, deliveries and the receiver', () => {
  let h: WorkerHarness;
  let receiver: RunningReceiver;
  let port: number;
  const desired: DesiredWebhook[] = [
    {
      name: 'main',
      url: `https://${HOST}/hooks/main`,
      events: ['transaction.updated'],
      description: 'ddsync receiver',
      active: true,
    },
  ];
  const reconcile = (want: DesiredWebhook[] = desired) =>
    h.temporal.client.workflow.execute(maintainWebhooks, {
      taskQueue: h.temporal.taskQueue,
      workflowId: maintainWebhooksWorkflowId(randomUUID()),
      args: [{ desired: want }],
    });
  const ours = async () => (await h.api.listWebhooks()).find((w) => w.description?.endsWith(marker('main')))!;
  const events = async () =>
    (
      await sql<{
        msg_id: string;
        event_type: string;
        deliveries: number;
        handling: string;
        transaction_id: string | null;
      }>`
    select msg_id, event_type, deliveries, handling, transaction_id from webhook_events order by received_at`.execute(
        h.db,
      )
    ).rows;

  beforeAll(async () => {
    port = await freePort();
    h = await startWorkerHarness(
      {
        seed: 51,
        suppliers: 2,
        plots: 50,
        timeScale: 0.001,
        transactionErrorRatio: 0,
        resolve: { [HOST]: `127.0.0.1:${port}` },
      },
      'hooks',
    );
    await h.startWorker();
    receiver = await startReceiver({
      db: h.db,
      api: h.api,
      temporal: h.temporal.client,
      log: createLogger({ level: 'silent' }),
      host: '127.0.0.1',
      port,
      maxBodyBytes: 4096,
      secretRefetchMinIntervalMs: 0,
    });
  });
  afterAll(async () => {
    await receiver?.close();
    await h?.close();
  });

  it("creates, patches and re-activates ddsync's webhooks, leaves the others alone, and changes nothing when in line", async () => {
    const foreign = await h.api.createWebhook({
      url: 'https://elsewhere.example.com/hook',
      description: "someone else's",
      events: ['transaction.updated'],
    });
    const created = await reconcile();
    expect(created.actions).toEqual([{ kind: 'create', name: 'main', id: expect.any(String) }]);
    const hook = await ours();
    expect(hook).toMatchObject({
      url: desired[0]!.url,
      description: `ddsync receiver ${marker('main')}`,
      isActive: true,
    });

    // Someone edits and pauses ddsync's webhook: the next run puts it back.
    await h.api.updateWebhook(hook.id, {
      url: `https://${HOST}/somewhere-else`,
      description: hook.description!,
      isActive: false,
    });
    const patched = await reconcile();
    expect(patched.actions).toEqual([{ kind: 'patch', name: 'main', id: hook.id, changes: ['url', 'reactivate'] }]);
    expect(await ours()).toMatchObject({ id: hook.id, url: desired[0]!.url, isActive: true });

    expect((await reconcile()).actions).toEqual([]);
    const after = await h.api.getWebhook(foreign.id);
    expect(after).toMatchObject({ url: 'https://elsewhere.example.com/hook', description: "someone else's" });
    const stored = await sql<{
      id: string;
      managed: boolean;
      name: string | null;
    }>`select id, managed, name from webhooks where deleted_at is null order by managed`.execute(h.db);
    expect(stored.rows).toEqual([
      { id: foreign.id, managed: false, name: null },
      { id: hook.id, managed: true, name: 'main' },
    ]);
  });

  it('receives deliveries from the service, stores each message once and pulls attempts and stats', async () => {
    const hook = await ours();
    const { messageId } = await h.api.sendExampleWebhookEvent(hook.id, 'transaction.updated');
    await waitUntil('the example delivered', async () => (await events()).some((e) => e.msg_id === messageId));
    const pulled = await reconcile();
    expect(pulled.newAttempts).toBeGreaterThan(0);
    const attempts = await sql<{
      n: number;
    }>`select count(*)::int as n from webhook_attempts where webhook_id = ${hook.id} and msg_id = ${messageId}`.execute(
      h.db,
    );
    expect(attempts.rows[0]!.n).toBe(1);
    expect((await reconcile()).newAttempts).toBe(0);
    const health = await sql<{
      successful_messages: number;
      failing: boolean;
    }>`select successful_messages::int, failing from bi_webhook_health where webhook_id = ${hook.id}`.execute(h.db);
    expect(health.rows[0]).toMatchObject({ failing: false });
    expect(health.rows[0]!.successful_messages).toBeGreaterThan(0);
    // An example names no transaction ddsync submitted: kept, not an error.
    expect((await events()).find((e) => e.msg_id === messageId)).toMatchObject({
      event_type: 'transaction.updated',
      deliveries: 1,
      handling: 'no_transaction',
    });
  });

  describe('refuses what the service did not send', () => {
    const post = async (body: string, headers: Record<string, string>, path = '/hooks/main') =>
      fetch(`${receiver.url}${path}`, {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json', ...headers },
      });
    const signed = async (msgId: string, body: string, when: Date, secret?: string) => {
      const svix = new Svix(
        secret ?? h.sim.control.webhooks().find((w) => String(w['description']).endsWith(marker('main')))!.secret,
      );
      const ts = Math.floor(when.getTime() / 1000);
      return { 'svix-id': msgId, 'svix-timestamp': String(ts), 'svix-signature': svix.sign(msgId, when, body) };
    };
    const body = JSON.stringify({
      data: { id: 'unknown-transaction', status: 'SUBMITTED' },
      event: 'transaction.updated',
      timestamp: new Date().toISOString(),
    });

    it('forged, stale, malformed, oversized and misaddressed deliveries get 401, 400, 413 or 404', async () => {
      const good = await signed(`msg_${randomUUID()}`, body, new Date());
      expect((await post(body, { ...good, 'svix-signature': 'v1,bm90IGEgc2lnbmF0dXJl' })).status).toBe(401);
      expect((await post(body.replace('SUBMITTED', 'AVAILABLE'), good)).status).toBe(401);
      expect(
        (await post(body, await signed(`msg_${randomUUID()}`, body, new Date(Date.now() - 6 * 60_000)))).status,
      ).toBe(401);
      expect(
        (await post(body, await signed(`msg_${randomUUID()}`, body, new Date(Date.now() + 6 * 60_000)))).status,
      ).toBe(401);
      expect((await post(body, { 'svix-id': 'msg_x' })).status).toBe(400);
      const big = JSON.stringify({ pad: 'x'.repeat(5000) });
      expect((await post(big, await signed(`msg_${randomUUID()}`, big, new Date()))).status).toBe(413);
      expect((await post(body, good, '/hooks/nobody')).status).toBe(404);
      expect((await fetch(`${receiver.url}/healthz`)).status).toBe(200);
    });

    it('refuses an oversized body before reading it all and answers before closing; a chunked delivery is read like any other; only POST', async () => {
      const msgId = `msg_${randomUUID()}`;
      const head = (framing: string, headers: Record<string, string>) =>
        `POST /hooks/main HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n${framing}\r\n${Object.entries(
          headers,
        )
          .map(([k, v]) => `${k}: ${v}\r\n`)
          .join('')}\r\n`;
      const svix = await signed(msgId, body, new Date());
      // A declared length over the limit, its body never sent: refused unread.
      const declared = await rawExchange(receiver.port, head('Content-Length: 1000000', svix), '{"pad":"');
      expect(declared.status).toBe(413);
      expect(declared.head).toMatch(/^connection: close$/im);
      expect(JSON.parse(declared.body)).toEqual({ error: 'body larger than 4096 bytes' });
      // Chunked, past the limit and never finished: refused once it passes the limit.
      const chunk = `400\r\n${'x'.repeat(0x400)}\r\n`;
      const chunked = await rawExchange(receiver.port, head('Transfer-Encoding: chunked', svix), chunk.repeat(5));
      expect(chunked.status).toBe(413);
      expect(JSON.parse(chunked.body)).toEqual({ error: 'body larger than 4096 bytes' });
      // Chunked within the limit: verified over the same bytes.
      const stream = new ReadableStream({
        start(c) {
          c.enqueue(new TextEncoder().encode(body.slice(0, 20)));
          c.enqueue(new TextEncoder().encode(body.slice(20)));
          c.close();
        },
      });
      const streamed = await fetch(`${receiver.url}/hooks/main`, {
        method: 'POST',
        body: stream,
        headers: { 'content-type': 'application/json', ...svix },
        duplex: 'half',
      } as RequestInit);
      expect(streamed.status).toBe(200);
      expect((await events()).some((e) => e.msg_id === msgId)).toBe(true);
      expect((await fetch(`${receiver.url}/hooks/main`)).status).toBe(405);
      expect((await post(body, svix, '/elsewhere')).status).toBe(404);
    });

    it('accepts the webhook-* header prefix and stores a message once however often it is delivered', async () => {
      const msgId = `msg_${randomUUID()}`;
      const first = await signed(msgId, body, new Date());
      const webhookPrefixed = {
        'webhook-id': first['svix-id'],
        'webhook-timestamp': first['svix-timestamp'],
        'webhook-signature': first['svix-signature'],
      };
      expect((await post(body, webhookPrefixed)).status).toBe(200);
      // A retry (re-signed later) and a replay of the same request: answered, counted, not stored again.
      const retry = await post(body, await signed(msgId, body, new Date(Date.now() + 1_000)));
      expect(await retry.json()).toEqual({ received: true, duplicate: true });
      expect((await post(body, first)).status).toBe(200);
      const stored = (await events()).filter((e) => e.msg_id === msgId);
      expect(stored).toEqual([expect.objectContaining({ deliveries: 3 })]);
    });

    it('stores a delivery holding a NUL and a lone surrogate with U+FFFD, recording each with the value as sent', async () => {
      // Before, Postgres refused the payload's \u0000 on every delivery: a 503 for days.
      const msgId = `msg_${randomUUID()}`;
      const hostile =
        '{"data":{"id":"unknown-transaction","status":"SUBMITTED","note":"a\\u0000b","k\\ud800":1},"event":"transaction.updated"}';
      const response = await post(hostile, await signed(msgId, hostile, new Date()));
      expect(response.status).toBe(200);
      const stored = await sql<{
        payload: { data: Record<string, unknown> };
        replaced_values: Record<string, { sent: string }>;
      }>`
        select payload, replaced_values from webhook_events where msg_id = ${msgId}`.execute(h.db);
      expect(stored.rows[0]!.payload.data).toMatchObject({ note: 'a\ufffdb', 'k\ufffd': 1 });
      expect(Object.keys(stored.rows[0]!.replaced_values).sort()).toEqual([
        'payload.data.note',
        'payload.data["k\\ud800"]',
      ]);
      expect(JSON.parse(stored.rows[0]!.replaced_values['payload.data.note']!.sent)).toBe('a\u0000b');
    });

    it('fetches the secret again once after a rotation before refusing', async () => {
      const hook = await ours();
      const { secret } = h.sim.control.rotateWebhookSecret(hook.id);
      const msgId = `msg_${randomUUID()}`;
      // Signed with the new secret only: the receiver's cached secret is the old one.
      expect((await post(body, await signed(msgId, body, new Date(), secret))).status).toBe(200);
      expect((await events()).some((e) => e.msg_id === msgId)).toBe(true);
    });

    it('follows a webhook deleted at the service and created again: warehouse and receiver move to the new one', async () => {
      const old = await ours();
      // The receiver now knows the old webhook (its id is cached under the name).
      expect((await post(body, await signed(`msg_${randomUUID()}`, body, new Date()))).status).toBe(200);
      await h.api.deleteWebhook(old.id);
      expect((await reconcile()).actions).toEqual([{ kind: 'create', name: 'main', id: expect.any(String) }]);
      const fresh = await ours();
      expect(fresh.id).not.toBe(old.id);
      const stored = await sql<{ id: string; name: string | null; deleted: boolean }>`
        select id, name, deleted_at is not null as deleted from webhooks where id = any(${[old.id, fresh.id]}::text[]) order by deleted desc`.execute(
        h.db,
      );
      expect(stored.rows).toEqual([
        { id: old.id, name: 'main', deleted: true },
        { id: fresh.id, name: 'main', deleted: false },
      ]);
      // Signed with the new webhook's secret: the receiver finds the old id gone and looks again.
      const msgId = `msg_${randomUUID()}`;
      const response = await post(body, await signed(msgId, body, new Date()));
      expect(response.status).toBe(200);
      const { messageId } = await h.api.sendExampleWebhookEvent(fresh.id, 'transaction.updated');
      await waitUntil("the new webhook's delivery stored", async () =>
        (await events()).some((e) => e.msg_id === messageId),
      );
    });

    it('refuses unsigned requests before looking up the name', async () => {
      expect((await post(body, {}, `/hooks/random-${randomUUID().slice(0, 8)}`)).status).toBe(400);
    });
  });

  it('a transaction.updated delivery wakes a waiting transaction, which records the status it saw through the webhook', async () => {
    const supplier = h.sim.control.suppliers()[0]!.id;
    const key = `hooked-${randomUUID().slice(0, 8)}`;
    // The transaction waits an hour (of test time) after SUBMITTED unless a webhook wakes it.
    const { progress } = await h.submit(writeShipments([shipmentRow(key, supplier)]), {
      timing: { ...FAST_TIMING, euWaitMs: 3_600_000, maxPollMs: 3_600_000 },
    });
    expect(progress).toMatchObject({ available: 1 });
    const seen = await sql<{
      status: string;
      source: string;
    }>`select status, source from transaction_status_events where transaction_key = ${key} order by seen_at`.execute(
      h.db,
    );
    expect(seen.rows).toContainEqual({ status: 'AVAILABLE', source: 'webhook' });
    const signalled = (await events()).filter((e) => e.handling === 'signalled');
    expect(signalled.length).toBeGreaterThan(0);
  }, 60_000);

  it('backs off an event whose dispatch fails and gives it up after the last try, without holding up the others', async () => {
    const {
      rows: [tx],
    } = await sql<{ id: string }>`select id from transactions where id is not null limit 1`.execute(h.db);
    const msgId = `msg_${randomUUID()}`;
    const payload = { data: { id: tx!.id, status: 'AVAILABLE' }, event: 'transaction.updated' };
    await storeEvent(h.db, {
      msgId,
      webhookName: 'main',
      eventType: 'transaction.updated',
      payload,
      sentAt: new Date(),
      transactionId: tx!.id,
    });
    const unavailable = {
      workflow: {
        getHandle: () => ({
          signal: async () => {
            throw new Error('Temporal unavailable (test)');
          },
        }),
      },
    } as unknown as Client;
    const event = { msg_id: msgId, event_type: 'transaction.updated', transaction_id: tx!.id, payload };
    const state = async () =>
      (
        await sql<{
          handling: string;
          dispatch_attempts: number;
          wait_s: number | null;
          handling_error: string | null;
        }>`
      select handling, dispatch_attempts, round(extract(epoch from next_dispatch_at - now()))::int as wait_s, handling_error
      from webhook_events where msg_id = ${msgId}`.execute(h.db)
      ).rows[0]!;
    await expect(dispatchEvent(h.db, unavailable, event, createLogger({ level: 'silent' }))).rejects.toThrow(
      'Temporal unavailable (test)',
    );
    expect(await state()).toMatchObject({
      handling: 'pending',
      dispatch_attempts: 1,
      handling_error: 'Temporal unavailable (test)',
    });
    expect((await state()).wait_s).toBeGreaterThanOrEqual(29);
    // Not due: the background pass leaves it alone until its time.
    expect((await pendingEvents(h.db)).map((e) => e.msg_id)).not.toContain(msgId);
    await sql`update webhook_events set dispatch_attempts = ${DISPATCH_MAX_ATTEMPTS - 1}, next_dispatch_at = now() where msg_id = ${msgId}`.execute(
      h.db,
    );
    await expect(dispatchEvent(h.db, unavailable, event, createLogger({ level: 'silent' }))).rejects.toThrow();
    expect(await state()).toMatchObject({ handling: 'failed', dispatch_attempts: DISPATCH_MAX_ATTEMPTS });
  });
});
