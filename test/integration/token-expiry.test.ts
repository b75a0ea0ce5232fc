import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { sql } from 'kysely';
import { startWorkerHarness, type WorkerHarness } from '../support/worker-harness.ts';
import { shipmentRow, writeShipments } from '../support/shipments.ts';
import type { BulkProgress } from '../../workflows/bulk-submit.ts';
import type { RunSummary } from '../../warehouse/refresh/sweep.ts';
import { simulatorPlotFacts, warehousePlotFacts } from '../support/warehouse-facts.ts';

/**
 * The service revokes tokens early, often (the simulator's tokenExpiry fault: a token already used
 * may be refused for good, a fresh one too once another call used it). Concurrent calls share such
 * tokens and meet 401s, sometimes several in a row: none of it may end a transaction or a refresh.
 */

const RUN = Math.random().toString(36).slice(2, 8);
const TOKEN_EXPIRY = 0.5;

describe('under early token expiry', () => {
  let h: WorkerHarness;
  beforeAll(async () => {
    h = await startWorkerHarness(
      { seed: 51, suppliers: 16, plots: 4000, timeScale: 0.001, transactionErrorRatio: 0.3 },
      'tokenexpiry',
    );
  });
  afterAll(() => h?.close());

  it('every transaction of a concurrent submission ends as the service decided, once per key, no draft left behind', async () => {
    const supplier = h.sim.control.suppliers()[0]!.id;
    const keys = Array.from({ length: 24 }, (_, i) => `expiry-${RUN}-${i}`);
    const before = h.api.stats.unauthorizedRetries;
    h.sim.control.setFaults({ tokenExpiry: TOKEN_EXPIRY });
    let progress: BulkProgress | null;
    try {
      ({ progress } = await h.submit(writeShipments(keys.map((k) => shipmentRow(k, supplier))), { concurrency: 12 }));
    } finally {
      h.sim.control.setFaults('none');
    }
    expect(progress).toMatchObject({ started: 24, failed: 0, pending: 0 });
    expect(progress!.available + progress!.error).toBe(24);
    // The fault was met, many times: this is not a run that got lucky.
    expect(h.api.stats.unauthorizedRetries - before).toBeGreaterThan(10);

    const counts = h.sim.control.transactionCountsByCustomId();
    expect(keys.map((k) => counts[k])).toEqual(keys.map(() => 1));
    const atService = new Map(
      h.sim.control
        .transactions()
        .filter((t) => keys.includes(t.customId ?? ''))
        .map((t) => [t.customId, t]),
    );
    expect([...atService.values()].filter((t) => t.status === 'DRAFT')).toEqual([]);
    const rows = (
      await sql<{ key: string; id: string; state: string; status: string; last_error: string | null }>`
      select key, id, state, status, last_error from transactions where key = any(${keys}::text[])`.execute(h.db)
    ).rows;
    expect(rows).toHaveLength(24);
    for (const r of rows) {
      const t = atService.get(r.key)!;
      expect({ key: r.key, id: r.id, status: r.status, state: r.state }).toEqual({
        key: r.key,
        id: t.id,
        status: t.status,
        state: t.status.toLowerCase(),
      });
    }
    expect(new Set(rows.map((r) => r.state))).toEqual(new Set(['available', 'error']));
  }, 180_000);

  it('a refresh succeeds with every plot', async () => {
    const before = h.api.stats.unauthorizedRetries;
    h.sim.control.setFaults({ tokenExpiry: TOKEN_EXPIRY });
    let summary: RunSummary;
    try {
      summary = await h.refresh({ supplierConcurrency: 16, pageWindow: 2 });
    } finally {
      h.sim.control.setFaults('none');
    }
    expect(summary.status).toBe('succeeded');
    expect(await warehousePlotFacts(h.db)).toEqual(simulatorPlotFacts(h.sim));
    expect(h.api.stats.unauthorizedRetries - before).toBeGreaterThan(3);
  }, 180_000);
});
