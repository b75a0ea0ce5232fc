import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { startWorkerHarness, type WorkerHarness } from '../support/worker-harness.ts';
import { checksum, rowVersions, simulatorPlotFacts, warehousePlotFacts } from '../support/warehouse-facts.ts';

describe('warehouse refresh', () => {
  let h: WorkerHarness;
  beforeAll(async () => {
    h = await startWorkerHarness({ seed: 7, suppliers: 4, plots: 1600 });
  });
  afterAll(() => h?.close());

  it("loads exactly the simulator's dataset, odd records and shared plots included", async () => {
    const summary = await h.refresh();
    expect(summary.status).toBe('succeeded');
    const expected = simulatorPlotFacts(h.sim);
    const actual = await warehousePlotFacts(h.db);
    expect(actual.length).toBe(expected.length);
    expect(actual).toEqual(expected);
    expect(checksum(actual)).toBe(checksum(expected));
    expect(expected.some((p) => p.suppliers.includes('|'))).toBe(true);
    console.log(summary);
  });

  it('writes nothing when nothing changed', async () => {
    const before = await rowVersions(h.db);
    const summary = await h.refresh();
    expect(summary.status).toBe('succeeded');
    expect(summary.rowsWritten).toBe(0);
    expect(await rowVersions(h.db)).toEqual(before);
  });
});
