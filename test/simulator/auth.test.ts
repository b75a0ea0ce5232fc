import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startClient, type Client } from './helpers.ts';

describe('authentication', () => {
  let c: Client;
  beforeAll(async () => {
    c = await startClient({ clientId: 'cid', clientSecret: 'sec' });
  });
  afterAll(() => c.sim.close());
  const tokenRequest = (body: unknown): Promise<Response> =>
    fetch(`${c.sim.url}/auth/machine-to-machine-clients/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  it('issues a bearer JWT with expires_in', async () => {
    const res = await tokenRequest({ client_id: 'cid', client_secret: 'sec', grant_type: 'client_credentials' });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ token_type: 'Bearer', expires_in: 86400 });
    expect(String(body['access_token']).split('.')).toHaveLength(3);
  });

  it('answers 400 for missing or invalid fields and 401 for wrong credentials', async () => {
    const missing = await tokenRequest({ client_id: 'cid' });
    expect(missing.status).toBe(400);
    const body = (await missing.json()) as { message: string[] };
    expect(body.message).toEqual(
      expect.arrayContaining([expect.stringContaining('client_secret'), expect.stringContaining('grant_type')]),
    );
    expect((await tokenRequest({ client_id: 'cid', client_secret: 'sec', grant_type: 'password' })).status).toBe(400);
    expect(
      (await tokenRequest({ client_id: 'cid', client_secret: 'nope', grant_type: 'client_credentials' })).status,
    ).toBe(401);
  });

  it('answers 401 for a missing, malformed, forged or expired token', async () => {
    const call = (authorization?: string): Promise<Response> =>
      fetch(`${c.sim.url}/business-connections/suppliers`, authorization ? { headers: { authorization } } : {});
    expect((await call(`Bearer ${c.token}`)).status).toBe(200);
    expect((await call()).status).toBe(401);
    expect((await call('Bearer not-a-jwt')).status).toBe(401);
    const [h, p] = c.token.split('.');
    expect((await call(`Bearer ${h}.${p}.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA`)).status).toBe(401);
    const expired = await c.sim.control.mintToken(-60);
    const res = await call(`Bearer ${expired}`);
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ statusCode: 401, message: 'Unauthorized', error: 'Unauthorized' });
  });

  it('expires tokens after the configured lifetime', async () => {
    const short = await startClient({ tokenLifetimeSeconds: 0 });
    expect((await short.get('/business-connections/suppliers')).status).toBe(401);
    await short.sim.close();
  });
});
