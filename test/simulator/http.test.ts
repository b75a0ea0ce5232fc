import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawExchange } from '../support/raw-http.ts';
import { startClient, type Client } from './helpers.ts';

describe('the HTTP front', () => {
  let c: Client;
  beforeAll(async () => {
    c = await startClient();
  });
  afterAll(() => c.sim.close());

  it("answers unknown routes and methods 404 in the service's error shape, and takes a trailing slash", async () => {
    const missing = await c.get('/no/such/thing');
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ statusCode: 404, message: 'Cannot GET /no/such/thing', error: 'Not Found' });
    expect(await (await c.send('PUT', '/business-connections/suppliers')).json()).toMatchObject({
      statusCode: 404,
      message: 'Cannot PUT /business-connections/suppliers',
    });
    expect((await c.get('/business-connections/suppliers/')).status).toBe(200);
  });

  it('decodes path parameters, and a malformed escape is an unknown id rather than a failure', async () => {
    expect((await c.get('/webhooks/%E0%A4%A')).status).toBe(404);
    expect((await c.get(`/webhooks/${encodeURIComponent('a b')}`)).status).toBe(404);
  });

  it('reads a chunked body like any other and refuses bad JSON with 400', async () => {
    const text = JSON.stringify({ url: 'https://hooks.example.com/chunked', events: ['transaction.updated'] });
    const body = new ReadableStream({
      start(s) {
        s.enqueue(new TextEncoder().encode(text.slice(0, 10)));
        s.enqueue(new TextEncoder().encode(text.slice(10)));
        s.close();
      },
    });
    const created = await fetch(`${c.sim.url}/webhooks`, {
      method: 'POST',
      body,
      headers: { authorization: `Bearer ${c.token}`, 'content-type': 'application/json' },
      duplex: 'half',
    } as RequestInit);
    expect(created.status).toBe(201);
    expect(await created.json()).toMatchObject({ url: 'https://hooks.example.com/chunked' });
    const bad = await fetch(`${c.sim.url}/webhooks`, {
      method: 'POST',
      body: '{"url":',
      headers: { authorization: `Bearer ${c.token}`, 'content-type': 'application/json' },
    });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ statusCode: 400, error: 'Bad Request' });
  });

  it('refuses a body declared over 10 MiB with 413 before reading it, then closes', async () => {
    const answer = await rawExchange(
      c.sim.port,
      `POST /webhooks HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${c.token}\r\nContent-Type: application/json\r\nContent-Length: ${11 * 1024 * 1024}\r\n\r\n{"url":`,
    );
    expect(answer.status).toBe(413);
    expect(answer.head).toMatch(/^connection: close$/im);
    expect(JSON.parse(answer.body)).toEqual({
      statusCode: 413,
      message: 'Request body too large',
      error: 'Payload Too Large',
    });
  });
});
