import { describe, it, expect, afterEach } from 'vitest';
import { sql } from 'kysely';
import { startWorkerHarness, type WorkerHarness, type HarnessOptions } from '../support/worker-harness.ts';
import { refreshFingerprint } from '../support/warehouse-fingerprint.ts';
import { splitSupplierPlotsPage } from '../../upstream/index.ts';
import type { SimulatorOptions } from '../../simulator/index.ts';
import type { Warehouse } from '../../warehouse/database.ts';

/**
 * A page too large to parse whole is split and written plot by plot (activities/refresh/activities.ts,
 * storeSplitPlots): the warehouse must end exactly as the whole-page path leaves it, and a plot above
 * the limit of one plot is refused into sync_issues while the rest of its page is stored. The limits
 * are lowered here so that ordinary pages (about 1.4 MB) take the split path in parts of 64 KB.
 */
const SPLIT_EVERY_PAGE: HarnessOptions['pageLimits'] = { wholePageMaxBytes: 0, partBytes: 64 * 1024 };
const DATASET: SimulatorOptions = { seed: 41, plots: 1300, suppliers: 2 };

async function issues(db: Warehouse, runId: string) {
  const { rows } = await sql<Record<string, unknown>>`
    select scope, entity, record_id, location, field, rule, action from sync_issues where run_id = ${runId}::uuid`.execute(
    db,
  );
  return rows.map((r) => JSON.stringify(r)).sort();
}

describe('pages split plot by plot', () => {
  const harnesses: WorkerHarness[] = [];
  afterEach(async () => {
    for (const h of harnesses.splice(0)) await h.close();
  });

  /**
   * What a refresh left: the fingerprint of every table, the plots without the service's updatedAt
   * and the hash that covers it (an edit's time: it differs between two simulators), the issues.
   */
  async function snapshot(db: Warehouse, runId: string) {
    const { plots: _, ...tables } = (await refreshFingerprint(db, runId)).tables;
    const plots = await sql<{ row: unknown }>`
      select to_jsonb(p) - 'first_seen_at' - 'changed_at' - 'updated_at' - 'content_hash' as row from plots p order by id`.execute(
      db,
    );
    return { tables, plots: plots.rows, issues: await issues(db, runId) };
  }

  /**
   * A refresh of a dataset with an invalid plot and a value stored as null on the first supplier's
   * first page, then one plot edited and a second refresh.
   */
  async function refreshTwice(options: HarnessOptions) {
    const h = await startWorkerHarness(DATASET, 'large_pages', options);
    harnesses.push(h);
    const supplier = h.sim.control.suppliers()[0]!.id;
    const ids = h.sim.control.supplierPlotIds(supplier);
    h.sim.control.editPlot(ids[100]!, {
      geometry: { type: 'Polygon', coordinates: 'not rings' } as never,
      surfaceArea: 1,
    });
    // Named in its issue by its place among the page's valid plots: 299, after the invalid one.
    h.sim.control.editPlot(ids[300]!, { productionDateStart: '2021-02-30' } as never);
    const first = await h.refresh();
    expect(first.status).toBe('succeeded');
    const afterFirst = await snapshot(h.db, first.runId);
    h.sim.control.editPlot(ids[250]!, { name: 'renamed between refreshes', commodities: ['cocoa', 'coffee'] });
    const second = await h.refresh();
    expect(second.status).toBe('succeeded');
    return { first: afterFirst, second: { ...(await snapshot(h.db, second.runId)), counts: second.counts } };
  }

  it('stores the same warehouse as the whole-page path, and writes only what changed on a page read again', async () => {
    const split = await refreshTwice({ pageLimits: SPLIT_EVERY_PAGE });
    const whole = await refreshTwice({});

    expect(split.first.plots).toHaveLength(1299);
    expect(split.first.issues).toEqual([
      expect.stringContaining('"location":"page 1 #100","field":"[100].geometry'),
      expect.stringContaining('"location":"page 1 #299","field":"productionDateStart"'),
    ]);
    expect(split.first).toEqual(whole.first);
    expect(split.second).toEqual(whole.second);
    // The edited plot's page changed: one plot rewritten (and its history), the others found unchanged.
    expect(split.second.counts['plots']).toMatchObject({ inserted: 0, updated: 1 });
  });

  it('refuses a plot above the limit into sync_issues with its id and the rule, and stores the rest of its page', async () => {
    const h = await startWorkerHarness({ ...DATASET, hugePlotVertices: 20_000 }, 'large_pages', {
      pageLimits: { ...SPLIT_EVERY_PAGE, plotMaxBytes: 256 * 1024 },
    });
    harnesses.push(h);
    // The plot drawn with 20,000 vertices, found in the first pages as the service sends them.
    const huge: string[] = [];
    for (const supplier of h.sim.control.suppliers()) {
      const raw = await h.api.getSupplierPlotsPageText(supplier.id, 1);
      const page = splitSupplierPlotsPage(raw);
      for (let i = 0; i < page.received; i++) if (page.sizeOf(i) > 256 * 1024) huge.push(page.ids[i]!);
      raw.release();
    }
    expect(huge).toHaveLength(1);
    const summary = await h.refresh();
    expect(summary.status).toBe('succeeded');
    const refused = await sql<{ record_id: string; rule: string; action: string; location: string }>`
      select record_id, rule, action, location from sync_issues where run_id = ${summary.runId}::uuid and rule like '%larger than%'`.execute(
      h.db,
    );
    expect(refused.rows).toEqual([
      {
        record_id: huge[0],
        rule: expect.stringMatching(/^a plot of 0\.\d MB of JSON is larger than the 0\.3 MB one plot may have$/),
        action: 'skipped',
        location: expect.stringMatching(/^page 1 #\d+$/),
      },
    ]);
    const stored = await sql<{ n: number; huge: number }>`
      select count(*)::int as n, count(*) filter (where id = ${huge[0]!})::int as huge from plots where deleted_at is null`.execute(
      h.db,
    );
    // Every plot but the refused one (the simulator's own plots included, as in the test above).
    expect(stored.rows[0]).toEqual({ n: 1299, huge: 0 });
  });
});
