import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'svix';
import { startClient, startReceiver, until, type Client } from './helpers.ts';

interface Hook {
  id: string;
  url: string;
  description: unknown;
  events: string[];
  isActive: boolean;
}
interface Attempt {
  msgId: string;
  status: string;
  responseStatusCode: number;
  msg: { id: string; eventType: string };
}

describe('webhooks', () => {
  let c: Client;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  beforeAll(async () => {
    // The first two deliveries fail, later ones succeed: exercises the retry schedule.
    receiver = await startReceiver((n) => (n <= 2 ? 500 : 204));
    c = await startClient({ timeScale: 0.0001, resolve: { 'hooks.example.org': `127.0.0.1:${receiver.port}` } });
  });
  afterAll(async () => {
    await c.sim.close();
    await receiver.close();
  });

  it('validates url, description and events', async () => {
    const bad = async (body: unknown, fragment: string): Promise<void> => {
      const res = await c.send('POST', '/webhooks', body);
      expect(res.status).toBe(400);
      const msg = ((await res.json()) as { message: string[] }).message.join(' ');
      expect(msg).toContain(fragment);
    };
    await bad({}, 'url');
    await bad({ url: 'http://127.0.0.1:8080/hook' }, 'top-level domain');
    await bad({ url: 'http://localhost:8080/hook' }, 'top-level domain');
    await bad({ url: `https://a.example.com/${'x'.repeat(2048)}` }, '2048');
    await bad({ url: 'https://a.example.com/h', description: 'd'.repeat(1001) }, '1000');
    await bad({ url: 'https://a.example.com/h', events: ['plot.deleted'] }, 'events');
    expect(await c.json('/webhooks/events')).toEqual({ events: ['transaction.updated'] });
  });

  it('creates, reads, patches and deletes; unset description is {}', async () => {
    const created = (await (
      await c.send('POST', '/webhooks', { url: 'https://x.example.com/h', events: ['transaction.updated'] })
    ).json()) as Hook;
    expect(created).toMatchObject({ description: {}, isActive: true, events: ['transaction.updated'] });
    expect((await c.json<Hook>(`/webhooks/${created.id}`)).url).toBe('https://x.example.com/h');
    const patched = await c.send('PATCH', `/webhooks/${created.id}`, {
      url: 'https://y.example.com/h',
      description: 'ours',
      isActive: false,
    });
    expect(await patched.json()).toMatchObject({
      url: 'https://y.example.com/h',
      description: 'ours',
      isActive: false,
    });
    expect(await (await c.get(`/webhooks/${created.id}/secret`)).json()).toMatch(/^whsec_[A-Za-z0-9+/=]+$/);
    expect((await c.send('DELETE', `/webhooks/${created.id}`)).status).toBe(204);
    expect((await c.get(`/webhooks/${created.id}`)).status).toBe(404);
  });

  it('delivers a signed example, retries with the same message id, records attempts and stats', async () => {
    const hook = (await (
      await c.send('POST', '/webhooks', { url: 'https://hooks.example.org/in?x=1', events: ['transaction.updated'] })
    ).json()) as Hook;
    const secret = (await (await c.get(`/webhooks/${hook.id}/secret`)).json()) as string;
    const sent = await c.send('POST', `/webhooks/${hook.id}/send-example`, { eventType: 'transaction.updated' });
    expect(sent.status).toBe(201);
    const { messageId } = (await sent.json()) as { messageId: string };
    const deliveries = await receiver.next(3);
    expect(deliveries.map((d) => d.headers['svix-id'])).toEqual([messageId, messageId, messageId]);
    const last = deliveries[2]!;
    const payload = new Webhook(secret).verify(last.body, {
      'svix-id': String(last.headers['svix-id']),
      'svix-timestamp': String(last.headers['svix-timestamp']),
      'svix-signature': String(last.headers['svix-signature']),
    });
    expect(payload).toMatchObject({ event: 'transaction.updated', data: { status: 'SUBMITTED' } });
    const attempts = await until(async () => {
      const list = await c.json<Attempt[]>(`/webhooks/${hook.id}/attempts`);
      return list.length === 3 ? list : undefined;
    });
    expect(attempts.map((a) => a.status)).toEqual(['SUCCESS', 'FAIL', 'FAIL']);
    expect(attempts[0]).toMatchObject({
      msgId: messageId,
      responseStatusCode: 204,
      msg: { id: messageId, eventType: 'transaction.updated' },
    });
    expect(await c.json(`/webhooks/${hook.id}/stats`)).toEqual({ successfulMessages: 1, failedMessages: 0 });
    expect((await c.send('POST', `/webhooks/${hook.id}/send-example`, { eventType: 'nope' })).status).toBe(400);
  });

  it('signs with both secrets during a rotation', async () => {
    const hook = (await (
      await c.send('POST', '/webhooks', { url: 'https://hooks.example.org/rot', events: ['transaction.updated'] })
    ).json()) as Hook;
    const { secret, previousSecret } = c.sim.control.rotateWebhookSecret(hook.id);
    expect(await (await c.get(`/webhooks/${hook.id}/secret`)).json()).toBe(secret);
    const before = receiver.received.length;
    await c.send('POST', `/webhooks/${hook.id}/send-example`, { eventType: 'transaction.updated' });
    const got = (await receiver.next(before + 1))[before]!;
    const signature = String(got.headers['svix-signature']);
    expect(signature.split(' ')).toHaveLength(2);
    for (const s of [secret, previousSecret]) {
      expect(() =>
        new Webhook(s).verify(got.body, {
          'svix-id': String(got.headers['svix-id']),
          'svix-timestamp': String(got.headers['svix-timestamp']),
          'svix-signature': signature,
        }),
      ).not.toThrow();
    }
  });
});
