import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startClient, type Client } from './helpers.ts';

/** The control's interception rules: chosen requests answered, cut, held or their answer lost; nothing else changes. */
describe('request interception (control only)', () => {
  let c: Client;
  let supplierId: string;
  beforeAll(async () => {
    c = await startClient({ transactionErrorRatio: 0 });
    supplierId = c.sim.control.suppliers()[0]?.id ?? '';
  });
  afterAll(() => c.sim.close());
  beforeEach(() => c.sim.control.reset());

  const create = (customId: string) =>
    c.send('POST', '/transactions', {
      customId,
      activityType: 'IMPORT',
      countryOfActivity: 'NL',
      components: [{ hsn: '18010000', quantity: 1, unit: 'KGM', supplierBusinessId: supplierId }],
    });
  const countOf = (customId: string) => c.sim.control.transactionCountsByCustomId()[customId] ?? 0;

  it('answers a status to the next matching requests without handling them, body values matched', async () => {
    c.sim.control.intercept({
      method: 'POST',
      path: '/transactions',
      body: { customId: 'refused' },
      action: 'status',
      status: 403,
      times: 2,
    });
    expect((await create('other')).status).toBe(201);
    const refused = await create('refused');
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ statusCode: 403, error: 'Forbidden' });
    expect((await create('refused')).status).toBe(403);
    expect(countOf('refused')).toBe(0);
    // Used up: the service as always.
    expect((await create('refused')).status).toBe(201);
    expect(countOf('refused')).toBe(1);
  });

  it('matches a route pattern or a concrete path, and sends Retry-After with 429', async () => {
    const created = (await (await create('pattern')).json()) as { id: string };
    c.sim.control.intercept({
      method: 'GET',
      path: '/transactions/:id',
      action: 'status',
      status: 429,
      retryAfterSeconds: 7,
    });
    const limited = await c.get(`/transactions/${created.id}`);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('7');
    c.sim.control.intercept({ method: 'GET', path: `/transactions/${created.id}`, action: 'status', status: 503 });
    expect((await c.get(`/transactions/${created.id}`)).status).toBe(503);
    expect((await c.get(`/transactions/${created.id}`)).status).toBe(200);
  });

  it('cuts the connection unhandled (reset), or after handling it (dropResponse: applied, answer lost)', async () => {
    c.sim.control.intercept({ method: 'POST', path: '/transactions', action: 'reset' });
    await expect(create('reset')).rejects.toThrow();
    expect(countOf('reset')).toBe(0);
    c.sim.control.intercept({ method: 'POST', path: '/transactions', action: 'dropResponse' });
    await expect(create('dropped')).rejects.toThrow();
    expect(countOf('dropped')).toBe(1);
  });

  it('holds a request unhandled until released (holdRequest): applied only then, then answered', async () => {
    c.sim.control.intercept({ method: 'POST', path: '/transactions', action: 'holdRequest' });
    const answer = create('held');
    await c.sim.control.whenHeld(1);
    expect(c.sim.control.heldRequests()).toBe(1);
    expect(countOf('held')).toBe(0);
    expect(await c.sim.control.releaseHeld()).toBe(1);
    expect(countOf('held')).toBe(1);
    expect((await answer).status).toBe(201);
    expect(c.sim.control.heldRequests()).toBe(0);
  });

  it("holds the answer of a handled request (holdResponse): the service's state is that of its arrival", async () => {
    c.sim.control.intercept({ method: 'GET', path: '/transactions', action: 'holdResponse' });
    const list = c.get('/transactions');
    await c.sim.control.whenHeld(1);
    expect((await create('after-list')).status).toBe(201);
    await c.sim.control.releaseHeld();
    const seen = (await (await list).json()) as Array<{ customId: string }>;
    expect(seen.map((t) => t.customId)).not.toContain('after-list');
  });

  it('cuts held requests unanswered and unapplied on reset', async () => {
    c.sim.control.intercept({ method: 'POST', path: '/transactions', action: 'holdRequest' });
    const answer = create('discarded');
    await c.sim.control.whenHeld(1);
    c.sim.control.reset();
    await expect(answer).rejects.toThrow();
    expect(countOf('discarded')).toBe(0);
    expect(c.sim.control.heldRequests()).toBe(0);
  });

  it('counts requests by route (faulted and intercepted ones too, control routes never)', async () => {
    c.sim.control.intercept({ method: 'POST', path: '/transactions', action: 'status', status: 500 });
    await create('a');
    await create('b');
    await c.get('/transactions');
    await c.get('/_sim/suppliers');
    expect(c.sim.control.requestCounts()).toEqual({ 'POST /transactions': 2, 'GET /transactions': 1 });
    const counts = (await (await c.get('/_sim/requests/counts')).json()) as Record<string, number>;
    expect(counts['POST /transactions']).toBe(2);
  });

  it('over HTTP: sets, lists held, releases and clears; a bad rule is 400 naming each field and its rule', async () => {
    const bad = await c.send('POST', '/_sim/intercepts', {
      method: 'FETCH',
      path: 'transactions',
      times: 0,
      action: 'explode',
      status: 200,
      extra: 1,
    });
    expect(bad.status).toBe(400);
    const { message } = (await bad.json()) as { message: string[] };
    expect(message).toEqual([
      'extra is not a rule field (known: method, path, times, body, action, status, retryAfterSeconds)',
      'method must be one of GET, POST, PUT, PATCH, DELETE',
      'path must be a string starting with / (a service path, not a /_sim/ one)',
      'times must be a positive integer',
      'action must be one of status, reset, holdRequest, holdResponse, dropResponse',
      'status is allowed only with action status',
    ]);
    const noStatus = await c.send('POST', '/_sim/intercepts', { method: 'GET', path: '/webhooks', action: 'status' });
    expect(((await noStatus.json()) as { message: string[] }).message).toEqual([
      'status must be an integer from 400 to 599 (with action status)',
    ]);
    const nested = await c.send('POST', '/_sim/intercepts', {
      method: 'POST',
      path: '/transactions',
      action: 'reset',
      body: { customId: { nested: true } },
    });
    expect(((await nested.json()) as { message: string[] }).message).toEqual([
      'body must be an object whose values are strings, numbers or booleans',
    ]);

    const set = await c.send('POST', '/_sim/intercepts', {
      method: 'post',
      path: '/transactions',
      action: 'holdRequest',
    });
    expect(set.status).toBe(201);
    expect(await set.json()).toEqual({ method: 'POST', path: '/transactions', times: 1, action: 'holdRequest' });
    const answer = create('over-http');
    await c.sim.control.whenHeld(1);
    expect(await (await c.get('/_sim/held')).json()).toEqual({ held: 1 });
    expect(await (await c.send('POST', '/_sim/held/release')).json()).toEqual({ released: 1 });
    expect((await answer).status).toBe(201);

    await c.send('POST', '/_sim/intercepts', { method: 'GET', path: '/webhooks', action: 'status', status: 500 });
    expect((await c.send('DELETE', '/_sim/intercepts')).status).toBe(204);
    expect((await c.get('/webhooks')).status).toBe(200);
  });
});
