import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { Writable } from 'node:stream';
import pino from 'pino';
import { startHarness, rejectionOf, type Harness } from './harness.ts';
import { CredentialsRefusedError } from '../../upstream/index.ts';

function memoryLogger() {
  const lines: string[] = [];
  const logger = pino(
    { level: 'debug' },
    new Writable({
      write(chunk, _e, done) {
        lines.push(String(chunk));
        done();
      },
    }),
  );
  return { logger, text: () => lines.join('') };
}

describe('contract: authentication', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ suppliers: 3, plots: 100 });
  });
  afterAll(() => h.close());

  it("issues a one-day bearer JWT (the contract's Limits row)", async () => {
    const res = await fetch(`${h.sim.url}/auth/machine-to-machine-clients/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        client_id: 'ddsync-demo',
        client_secret: 'ddsync-demo-secret',
        grant_type: 'client_credentials',
      }),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ token_type: 'Bearer', expires_in: 86_400 });
    expect(String(body.access_token).split('.')).toHaveLength(3);
  });

  it('exchanges credentials once and shares the token among concurrent calls', async () => {
    const api = h.client();
    await Promise.all(Array.from({ length: 20 }, () => api.listSuppliers()));
    expect(api.stats.tokenRefreshes).toBe(1);
    expect(api.stats.requests).toBe(21);
    await api.listBuyers();
    expect(api.stats.tokenRefreshes).toBe(1);
  });

  it('refuses wrong credentials with a final CredentialsRefusedError, asked once, that never shows the secret', async () => {
    const api = h.client({ clientSecret: 'wrong-secret-5f2c9a' });
    const error = await rejectionOf(api.listSuppliers());
    expect(error).toBeInstanceOf(CredentialsRefusedError);
    expect(error.retryable).toBe(false);
    expect(error.message).toBe(
      'POST /auth/machine-to-machine-clients/token: 401 client credentials refused: Invalid client credentials',
    );
    expect(String(error.message) + String(error.stack)).not.toContain('wrong-secret-5f2c9a');
    // Every later call of the process fails at once with the same refusal.
    expect(await rejectionOf(api.listBuyers())).toBe(error);
    expect(api.stats.requests).toBe(1);
  });

  it('renews a token shortly before it expires, without a 401', async () => {
    const sim = await startHarness({ suppliers: 1, plots: 10, tokenLifetimeSeconds: 100 });
    let skew = 0;
    const api = sim.client({ now: () => Date.now() + skew });
    try {
      await api.listSuppliers();
      skew = 89_000; // 89 s into a 100 s token: still outside the refresh margin (the last 10 s)
      await api.listSuppliers();
      expect(api.stats.tokenRefreshes).toBe(1);
      skew = 95_000; // inside the margin: before expiry, renewed ahead of time
      await api.listSuppliers();
      expect(api.stats.tokenRefreshes).toBe(2);
      expect(api.stats.unauthorizedRetries).toBe(0);
    } finally {
      await sim.close();
    }
  });

  it('recovers from a token expiring mid-run with one refresh and one repeat per expiry', async () => {
    const api = h.client();
    await api.listSuppliers();
    h.sim.control.setFaults({ tokenExpiry: 1 });
    try {
      for (let i = 0; i < 10; i++) expect(await api.listSuppliers()).toHaveLength(3);
    } finally {
      h.sim.control.setFaults({});
    }
    // Every call met an expired token: 10 refreshes (plus the first token), 10 repeats, no failure.
    expect(api.stats.unauthorizedRetries).toBe(10);
    expect(api.stats.tokenRefreshes).toBe(11);
  });

  it('concurrent calls sharing tokens the service revokes early (tokenExpiry 0.5) all succeed', async () => {
    const api = h.client({ concurrency: 8 });
    await api.listSuppliers();
    h.sim.control.setFaults({ tokenExpiry: 0.5 });
    try {
      const results = await Promise.all(
        Array.from({ length: 60 }, (_, i) => (i % 2 ? api.listSuppliers() : api.listBuyers())),
      );
      expect(results.filter((r) => Array.isArray(r))).toHaveLength(60);
    } finally {
      h.sim.control.setFaults({});
    }
    // Calls met revoked tokens, some more than once (a fresh token can be revoked too): none failed.
    expect(api.stats.unauthorizedRetries).toBeGreaterThan(10);
    expect(api.stats.tokenRefreshes).toBeGreaterThan(2);
  });

  it('never logs the client secret or a token, even at debug level and on failures', async () => {
    const { logger, text } = memoryLogger();
    const api = h.client({ logger });
    await api.listSuppliers();
    h.sim.control.setFaults({ tokenExpiry: 1 });
    await api.listSuppliers();
    h.sim.control.setFaults({});
    await rejectionOf(h.client({ logger, clientSecret: 'another-wrong-secret-77' }).listSuppliers());
    const logged = text();
    expect(logged).toContain('upstream request');
    expect(logged).not.toContain('ddsync-demo-secret');
    expect(logged).not.toContain('another-wrong-secret-77');
    expect(logged).not.toMatch(/eyJ[A-Za-z0-9_-]+\./);
  });
});
