import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { sql } from 'kysely';
import { openWarehouse, type Warehouse } from '../../warehouse/database.ts';
import { migrateToLatest } from '../../warehouse/migrate.ts';
import { storePlotBatch, type PlotBatch } from '../../warehouse/refresh/plot-batch.ts';
import { mapPlots } from '../../warehouse/refresh/plot-page.ts';
import { beginRun } from '../../warehouse/refresh/run-ledger.ts';
import { normalisePlotsSkippingInvalid } from '../../upstream/index.ts';
import { createTestDatabase } from '../support/databases.ts';
import { warehouseWithoutTemporaryTables } from '../support/no-temporary-role.ts';
import { rowVersions } from '../support/warehouse-facts.ts';
import { samplePage, samplePlot } from '../unit/upstream/samples.ts';

const RUN = '00000000-0000-4000-8000-0000000000aa';

function page(from: number, n: number, scope: string, pageNo = 1, extra: unknown[] = []): PlotBatch {
  const { plots, invalid } = normalisePlotsSkippingInvalid([...samplePage(n, from), ...extra], 'test');
  return {
    runId: RUN,
    scope,
    supplierId: scope,
    page: pageNo,
    ...mapPlots(plots, pageNo, false),
    invalid,
    requests: { requests: 1, retries: 0, rateLimited: 0 },
  };
}

describe('plot page writer', () => {
  let db: Warehouse;
  beforeAll(async () => {
    db = openWarehouse(await createTestDatabase('writer'), 6);
    await migrateToLatest(db);
    await beginRun(db, RUN, null);
  });
  afterAll(() => db?.destroy());

  it('writes a page once: a replay after a lost completion changes no row and does not count twice', async () => {
    const first = await storePlotBatch(db, page(0, 5, 'supplier-a', 1, [{ name: 'no id' }]));
    expect(first.counts['plots']).toEqual({ inserted: 5, updated: 0, unchanged: 0, deleted: 0 });
    expect(first.replayed).toBe(false);
    const before = await rowVersions(db);
    const replay = await storePlotBatch(db, page(0, 5, 'supplier-a', 1, [{ name: 'no id' }]));
    expect(replay.replayed).toBe(true);
    expect(replay.counts['plots']).toEqual({ inserted: 0, updated: 0, unchanged: 5, deleted: 0 });
    expect(await rowVersions(db)).toEqual(before);
    const recorded = await sql<{ counts: Record<string, { inserted: number }>; received: number }>`
      select counts, received from sync_pages where run_id = ${RUN}::uuid and scope = 'supplier-a' and page = 1`.execute(
      db,
    );
    expect(recorded.rows[0]!.counts['plots']!.inserted).toBe(5);
    expect(recorded.rows[0]!.received).toBe(6);
    const issues = await sql<{
      field: string;
      rule: string;
      action: string;
    }>`select field, rule, action from sync_issues where run_id = ${RUN}::uuid`.execute(db);
    expect(issues.rows).toEqual([{ field: '[5].id', rule: 'required string, missing', action: 'skipped' }]);
  });

  it('stores a plot reached through two suppliers at once as one plot with two links', async () => {
    const [a, b] = await Promise.all([
      storePlotBatch(db, page(100, 50, 'supplier-b')),
      storePlotBatch(db, page(100, 50, 'supplier-c')),
    ]);
    expect(a.counts['plots']!.inserted + b.counts['plots']!.inserted).toBe(50);
    expect(a.counts['plots']!.inserted + a.counts['plots']!.unchanged).toBe(50);
    const plots = await sql<{
      n: number;
    }>`select count(*)::int as n from plots where id like '00000000-0000-4000-8000-0000000001%'`.execute(db);
    expect(plots.rows[0]!.n).toBe(50);
    const links = await sql<{ supplier_id: string; n: number }>`
      select supplier_id, count(*)::int as n from plot_suppliers where supplier_id in ('supplier-b', 'supplier-c') group by supplier_id order by 1`.execute(
      db,
    );
    expect(links.rows).toEqual([
      { supplier_id: 'supplier-b', n: 50 },
      { supplier_id: 'supplier-c', n: 50 },
    ]);
    const history = await sql<{
      n: number;
    }>`select count(*)::int as n from plot_history where plot_id like '00000000-0000-4000-8000-0000000001%'`.execute(
      db,
    );
    expect(history.rows[0]!.n).toBe(50);
  });

  const HOSTILE = {
    name: 'tab\there\nnew line\r\\back\u0000nul "quoted" é 𝄞 lone \ud800',
    commodities: ['x,y', 'q"uote', 'back\\slash', '{b}', 'NULL'],
    customData: { k: 'v\tw\u0000x', nested: { s: '\\N' } },
    species: [{ scientificName: '\\N', commonName: 'tab\tname' }],
  };

  async function storedHostile(database: Warehouse, id: string) {
    const { rows } = await sql<{ name: string; commodities: string[]; custom_data: unknown; species: unknown }>`
      select p.name, p.commodities, p.custom_data,
             (select json_agg(json_build_array(s.scientific_name, s.common_name) order by s.position) from plot_species s where s.plot_id = p.id) as species
      from plots p where p.id = ${id}`.execute(database);
    return rows[0];
  }

  const expectedHostile = {
    name: 'tab\there\nnew line\r\\backnul "quoted" é 𝄞 lone \ufffd',
    commodities: ['x,y', 'q"uote', 'back\\slash', '{b}', 'NULL'],
    custom_data: { k: 'v\twx', nested: { s: '\\N' } },
    species: [['\\N', 'tab\tname']],
  };

  it('stores text that COPY reads as structure (tabs, line breaks, backslashes, \\N, quotes) as sent, NUL dropped', async () => {
    const batch = pageOf([samplePlot(900, HOSTILE)], 'supplier-h');
    const outcome = await storePlotBatch(db, batch);
    expect(outcome.counts['plots']!.inserted).toBe(1);
    expect(await storedHostile(db, String(samplePlot(900).id))).toEqual(expectedHostile);
    // Read again, unchanged: nothing written, the fingerprint matches what was stored.
    const again = await storePlotBatch(db, { ...pageOf([samplePlot(900, HOSTILE)], 'supplier-h'), page: 2 });
    expect(again.counts['plots']).toEqual({ inserted: 0, updated: 0, unchanged: 1, deleted: 0 });
  });

  it('keeps writing when the connection lost its temporary tables (a pooler resetting the session between pages)', async () => {
    // One connection, so the reset surely hits the one the next page uses; DISCARD TEMP is what
    // PgBouncer's session reset does, and transaction pooling may hand over a session that never had them.
    const single = openWarehouse(await createTestDatabase('discard'), 1);
    try {
      await migrateToLatest(single);
      await beginRun(single, RUN, null);
      const first = await storePlotBatch(single, pageOf(samplePage(3, 950), 'supplier-d'));
      expect(first.counts['plots']!.inserted).toBe(3);
      await sql`discard temp`.execute(single);
      const second = await storePlotBatch(single, { ...pageOf(samplePage(3, 960), 'supplier-d'), page: 2 });
      expect(second.counts['plots']!.inserted).toBe(3);
      expect(second.counts['plot_history']!.inserted).toBe(3);
    } finally {
      await single.destroy();
    }
  });

  it('writes the same rows over JSON parameters when the role may not create temporary tables', async () => {
    const limited = await warehouseWithoutTemporaryTables('notemp', (admin) => beginRun(admin, RUN, null));
    try {
      const outcome = await storePlotBatch(
        limited,
        pageOf([samplePlot(901, HOSTILE), ...samplePage(3, 902)], 'supplier-j'),
      );
      expect(outcome.counts['plots']!.inserted).toBe(4);
      expect(outcome.counts['plot_history']!.inserted).toBe(4);
      expect(await storedHostile(limited, String(samplePlot(901).id))).toEqual(expectedHostile);
    } finally {
      await limited.destroy();
    }
  });
});

function pageOf(raw: unknown[], scope: string): PlotBatch {
  const { plots, invalid } = normalisePlotsSkippingInvalid(raw, 'test');
  return {
    runId: RUN,
    scope,
    supplierId: scope,
    page: 1,
    ...mapPlots(plots, 1, false),
    invalid,
    requests: { requests: 1, retries: 0, rateLimited: 0 },
  };
}
