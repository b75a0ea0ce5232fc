import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { startHarness, rejectionOf, type Harness } from './harness.ts';
import { NetworkError, RateLimitedError, ServerError, type UpstreamClient } from '../../upstream/index.ts';
import type { FaultProfile } from '../../simulator/index.ts';

type Kind = 'http500' | 'http503' | 'http429' | 'http429NoRetryAfter' | 'reset' | 'truncate';

const EXPECTED: Record<Kind, new (...args: never[]) => Error> = {
  http500: ServerError,
  http503: ServerError,
  http429: RateLimitedError,
  http429NoRetryAfter: RateLimitedError,
  reset: NetworkError,
  truncate: NetworkError,
};

async function pageIds(api: UpstreamClient, supplier: string): Promise<string[]> {
  const ids: string[] = [];
  for await (const page of api.supplierPlotPages(supplier, { limit: 100 })) ids.push(...page.plots.map((p) => p.id));
  return ids;
}

describe('contract: upstream faults', () => {
  let h: Harness;
  let supplier: string;
  let cleanIds: string[];
  const delays: number[] = [];

  beforeAll(async () => {
    // Instant, recorded backoff: what the client *asks* to wait is asserted, nothing sleeps.
    h = await startHarness(
      { timeScale: 1, layout: { ownPlots: 50, suppliers: [{ plots: 1000 }] } },
      {
        maxAttempts: 6,
        sleep: async (ms) => void delays.push(ms),
      },
    );
    supplier = h.sim.control.suppliers()[0]!.id;
    cleanIds = await pageIds(h.api, supplier);
    expect(cleanIds).toHaveLength(1000);
  });
  afterAll(() => h.close());

  const withFaults = async <T>(faults: Partial<FaultProfile> | string, fn: () => Promise<T>): Promise<T> => {
    h.sim.control.setFaults(faults);
    try {
      return await fn();
    } finally {
      h.sim.control.setFaults({});
    }
  };

  for (const kind of Object.keys(EXPECTED) as Kind[]) {
    it(`${kind}: recovers when it is intermittent, fails typed and retryable after bounded attempts when it persists`, async () => {
      const patient = h.client({ maxAttempts: 10, sleep: async () => undefined });
      const ids = await withFaults({ [kind]: 0.4 }, () => pageIds(patient, supplier));
      expect(ids).toEqual(cleanIds);
      expect(patient.stats.retries).toBeGreaterThan(0);

      const api = h.client({ maxAttempts: 6, sleep: async () => undefined });
      await api.authenticate();
      const before = api.stats.requests;
      const error = await withFaults({ [kind]: 1 }, () => rejectionOf(api.getSupplierPlotsPage(supplier, 1)));
      expect(error).toBeInstanceOf(EXPECTED[kind]);
      expect(error.retryable).toBe(true);
      expect(String(error.message)).toContain('GET /businesses/{businessId}/plots');
      expect(api.stats.requests - before).toBe(6);
    });
  }

  it('waits as long as Retry-After says, and uses capped jittered backoff without it', async () => {
    delays.length = 0;
    await withFaults({ http429: 1, retryAfterSeconds: 3 }, () => rejectionOf(h.api.getSupplierPlotsPage(supplier, 1)));
    expect(delays).toEqual([3000, 3000, 3000, 3000, 3000]);
    delays.length = 0;
    await withFaults({ http429NoRetryAfter: 1 }, () => rejectionOf(h.api.getSupplierPlotsPage(supplier, 1)));
    expect(delays).toHaveLength(5);
    for (const d of delays) expect(d).toBeGreaterThanOrEqual(0);
    for (const d of delays) expect(d).toBeLessThanOrEqual(20); // the harness caps backoff at 20 ms
    expect(h.api.stats.rateLimited).toBeGreaterThanOrEqual(12);
  });

  it('times a slow response out per request and retries it', async () => {
    const api = h.client({ timeoutMs: 100, maxAttempts: 2, sleep: async () => undefined });
    await api.authenticate();
    const error = await withFaults({ latency: 1, latencyMs: [400, 400] }, () =>
      rejectionOf(api.getSupplierPlotsPage(supplier, 1)),
    );
    expect(error).toBeInstanceOf(NetworkError);
    expect(String(error.message)).toMatch(/within 100 ms/);
    expect(api.stats.requests).toBe(3); // token + two attempts
    const patient = h.client({ timeoutMs: 5_000 });
    const page = await withFaults({ latency: 1, latencyMs: [30, 30] }, () => patient.getSupplierPlotsPage(supplier, 1));
    expect(page.plots).toHaveLength(500);
  });

  it('reports a truncated GET /plots stream as a retryable NetworkError', async () => {
    const error = await withFaults({ truncate: 1 }, async () =>
      rejectionOf(
        (async () => {
          for await (const _ of h.api.ownPlots()) {
            /* drain */
          }
        })(),
      ),
    );
    expect(error).toBeInstanceOf(NetworkError);
    expect(error.retryable).toBe(true);
    expect(String(error.message)).toContain('GET /plots');
    const own = [];
    for await (const plot of h.api.ownPlots()) own.push(plot);
    expect(own).toHaveLength(50);
  });

  it('does not repeat a create whose response was lost: the outcome is unknown and found again by customId', async () => {
    const customId = 'fault-contract-lost-create';
    const error = await withFaults({ dropCreateResponse: 1 }, () =>
      rejectionOf(h.api.createTransaction({ customId, activityType: 'IMPORT', countryOfActivity: 'DE' })),
    );
    expect(error).toBeInstanceOf(NetworkError);
    expect(error.outcomeUnknown).toBe(true);
    expect(h.sim.control.transactionCountsByCustomId()[customId]).toBe(1);
    const found = await h.api.findTransactionByCustomId(customId);
    expect(found?.customId).toBe(customId);
    expect(found?.status).toBe('DRAFT');
  });

  it('reads every page of a supplier identically under the hostile profile', async () => {
    const api = h.client({ maxAttempts: 10, sleep: async () => undefined });
    // Latency off: the profile's multi-second delays would only slow the test down.
    const ids = await withFaults(JSON.stringify({ profile: 'hostile', latency: 0 }), () => pageIds(api, supplier));
    expect(ids).toEqual(cleanIds);
    expect(api.stats.retries).toBeGreaterThan(0);
  });
});
