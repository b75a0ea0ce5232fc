import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { sql } from 'kysely';
import { openWarehouse, type Warehouse } from '../../warehouse/database.ts';
import { migrateToLatest } from '../../warehouse/migrate.ts';
import {
  storeParsedPlots,
  storePlotBatch,
  storeSplitPlots,
  type PlotBatch,
} from '../../warehouse/refresh/plot-batch.ts';
import { writePlotPage } from '../../warehouse/refresh/plot-writer.ts';
import { mapPlots } from '../../warehouse/refresh/plot-page.ts';
import { beginRun } from '../../warehouse/refresh/run-ledger.ts';
import { normalisePlotsSkippingInvalid, splitSupplierPlotsPage } from '../../upstream/index.ts';
import { createTestDatabase } from '../support/databases.ts';
import { warehouseWithoutTemporaryTables } from '../support/no-temporary-role.ts';
import { rowVersions } from '../support/warehouse-facts.ts';
import { inMemoryPage, samplePage, samplePlot } from '../unit/upstream/samples.ts';

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

  it('writes a page split plot by plot once: its parts in one transaction, a replay changes no row', async () => {
    const text = JSON.stringify([...samplePage(12, 300), { name: 'no id' }, samplePlot(305)]);
    const split = () => splitSupplierPlotsPage(inMemoryPage(text, 1));
    const batch = {
      runId: RUN,
      scope: 'supplier-split',
      supplierId: 'supplier-split',
      page: 1,
      isOwn: false,
      requests: { requests: 1, retries: 0, rateLimited: 0 },
      sourceHash: 'split-page',
    };
    // Parts of about one plot: the page is written in a dozen parts.
    const first = await storeSplitPlots(db, batch, split(), 1);
    expect(first.outcome.replayed).toBe(false);
    // Plot 305 twice: one row, its last occurrence.
    expect(first.outcome.counts['plots']).toEqual({ inserted: 12, updated: 0, unchanged: 0, deleted: 0 });
    expect(first.signature).toBe(`${samplePlot(300).id}…${samplePlot(305).id}`);
    const before = await rowVersions(db);
    const replay = await storeSplitPlots(db, batch, split(), 1);
    expect(replay.outcome.replayed).toBe(true);
    expect(replay.outcome.counts['plots']).toEqual({ inserted: 0, updated: 0, unchanged: 12, deleted: 0 });
    expect(await rowVersions(db)).toEqual(before);
    const recorded = await sql<{ counts: Record<string, { inserted: number }>; received: number; ids: string[] }>`
      select counts, received, ids from sync_pages where run_id = ${RUN}::uuid and scope = 'supplier-split' and page = 1`.execute(
      db,
    );
    expect(recorded.rows[0]).toMatchObject({ received: 14, counts: { plots: { inserted: 12 } } });
    expect(recorded.rows[0]!.ids).toEqual(samplePage(12, 300).map((p) => p.id));
    // A part that fails rolls back the parts before it: nothing of a page is stored unless all of it is.
    const fresh = JSON.stringify(samplePage(3, 900));
    const broken = `${fresh.slice(0, -1)},{"id":"late","name":tru}]`;
    const failing = splitSupplierPlotsPage(inMemoryPage(broken, 2));
    await expect(storeSplitPlots(db, { ...batch, page: 2 }, failing, 1)).rejects.toThrow(/page 2: plot #3 is not JSON/);
    const ids = samplePage(3, 900).map((p) => p.id as string);
    const stored = await sql<{
      n: number;
    }>`select count(*)::int as n from plots where id = any(${ids}::text[])`.execute(db);
    expect(stored.rows[0]!.n).toBe(0);
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

  it('writes a plot it takes for new as a plot it holds when another page stored it meanwhile', async () => {
    // Page 1 of supplier-e read plots 700-702 as new; before its transaction, another supplier's page
    // stored them, 701 with other content (edited at the source between the two reads).
    const raw = samplePage(3, 700);
    const late = page(700, 3, 'supplier-e', 1);
    await storePlotBatch(db, {
      ...pageOf([raw[0], { ...raw[1], riskLevel: 'high', species: [] }, raw[2]], 'supplier-f'),
    });
    const ids = late.rows.map((r) => r.plot.id);
    const outcome = await writePlotPage(db, {
      runId: RUN,
      scope: 'supplier-e',
      supplierId: 'supplier-e',
      page: 1,
      received: 3,
      ids,
      present: ids,
      rows: late.rows,
      existing: new Set(),
      links: ids,
      issues: [],
      requests: { requests: 1, retries: 0, rateLimited: 0 },
    });
    // 700 and 702 were stored as this page has them; 701 is rewritten: species replaced, history advanced.
    expect(outcome.counts['plots']).toEqual({ inserted: 0, updated: 1, unchanged: 2, deleted: 0 });
    expect(outcome.counts['plot_history']).toEqual({ inserted: 1, updated: 1, unchanged: 0, deleted: 0 });
    const id = ids[1]!;
    const stored = await storedRows(db, id);
    expect((stored!['plot'] as { risk_level: string }).risk_level).toBe('none');
    expect(stored!['species']).toEqual([
      { plot_id: id, position: 0, scientific_name: 'Theobroma cacao', common_name: 'cocoa' },
    ]);
    expect(
      (stored!['history'] as { is_current: boolean; risk_level: string }[]).map((h) => [h.is_current, h.risk_level]),
    ).toEqual([
      [false, 'high'],
      [true, 'none'],
    ]);
  });

  it('stores a new plot whose analysis id the warehouse holds under another plot as the staged path does', async () => {
    // Hostile input: plot 711 carries the analysis of plot 710. The straight COPY is refused by the
    // analysis key; the page is written by the staged upsert, which moves the analysis to 711.
    await storePlotBatch(db, pageOf([samplePlot(710)], 'supplier-g'));
    const thief = samplePlot(711, {
      mostRecentAnalysis: { ...(samplePlot(710)['mostRecentAnalysis'] as object) },
      mostRecentAnalysesByType: {},
    });
    const outcome = await storePlotBatch(db, { ...pageOf([thief], 'supplier-g'), page: 2 });
    expect(outcome.counts['plots']).toEqual({ inserted: 1, updated: 0, unchanged: 0, deleted: 0 });
    expect(outcome.counts['analyses']).toEqual({ inserted: 0, updated: 1, unchanged: 0, deleted: 0 });
    const id = String(thief['id']);
    const stored = await storedRows(db, id);
    expect((stored!['analyses'] as { id: string }[]).map((a) => a.id)).toEqual(['a-710']);
    expect((stored!['history'] as unknown[]).length).toBe(1);
  });

  it('a parsed page, mapped after reading what is held, writes what the same page mapped first writes', async () => {
    // Two warehouses take the same two pages of supplier-r, one mapped before the read of what is held
    // (storePlotBatch), one after it, mapping only what changed (storeParsedPlots): the rows, counts and
    // issues must agree. Page 2 holds an unchanged plot, a changed one, a new one with a value to null
    // (its issue names its place on the page), and a plot twice.
    const parsedDb = openWarehouse(await createTestDatabase('writer_parsed'), 2);
    try {
      await migrateToLatest(parsedDb);
      await beginRun(parsedDb, RUN, null);
      const pages = [
        samplePage(3, 1100),
        [
          samplePlot(1100),
          samplePlot(1101, { riskLevel: 'high' }),
          samplePlot(1104, { productionDateStart: '2024-02-30' }),
          samplePlot(1100),
        ],
      ];
      const outcomes: unknown[][] = [[], []];
      for (const [i, raw] of pages.entries()) {
        const batch = { ...pageOf(raw, 'supplier-r'), page: i + 1 };
        const mapped = { ...batch, ...mapPlots(normalisePlotsSkippingInvalid(raw, 'test').plots, i + 1, false) };
        outcomes[0]!.push((await storePlotBatch(db, mapped)).counts);
        const { plots, invalid } = normalisePlotsSkippingInvalid(raw, 'test');
        const parsed = { ...batch, plots, invalid, isOwn: false };
        outcomes[1]!.push((await storeParsedPlots(parsedDb, parsed)).counts);
      }
      expect(outcomes[1]).toEqual(outcomes[0]);
      expect((outcomes[1]![1] as Record<string, unknown>)['plots']).toEqual({
        inserted: 1,
        updated: 1,
        unchanged: 1,
        deleted: 0,
      });
      for (const n of [1100, 1101, 1102, 1104]) {
        const id = String(samplePlot(n)['id']);
        expect(await storedRows(parsedDb, id), id).toEqual(await storedRows(db, id));
      }
      const issues = (database: Warehouse) =>
        sql<{ location: string; field: string }>`
          select location, field from sync_issues where run_id = ${RUN}::uuid and scope = 'supplier-r' order by location`.execute(
          database,
        );
      expect((await issues(parsedDb)).rows).toEqual([{ location: 'page 2 #2', field: 'productionDateStart' }]);
      expect((await issues(parsedDb)).rows).toEqual((await issues(db)).rows);
    } finally {
      await parsedDb.destroy();
    }
  });

  it('stores new plots straight in with the same rows as the staged path, history and findings opened by the run', async () => {
    // Plot 720 new (straight COPY); plot 721 stored first with other content, then the same content
    // as 720 apart from its id and name: written by the staged path. Their rows must agree.
    const odd = { productionDateStart: '2019-01-01', geometry: { type: 'Point', coordinates: [10, 5] } };
    await storePlotBatch(db, pageOf([samplePlot(721, { riskLevel: 'high' })], 'supplier-k'));
    await storePlotBatch(db, { ...pageOf([samplePlot(720, odd), samplePlot(721, odd)], 'supplier-k'), page: 2 });
    const [fresh, replaced] = [
      await storedRows(db, String(samplePlot(720)['id'])),
      await storedRows(db, String(samplePlot(721)['id'])),
    ];
    // Hashes cover the ids; everything else must read the same once 721 is renamed 720.
    const unhashed = (text: string) =>
      JSON.parse(text, (key, value) => (key === 'content_hash' || key === 'history_hash' ? undefined : value));
    const same = (value: unknown) => unhashed(JSON.stringify(value).replaceAll('721', '720'));
    const as = (value: unknown) => unhashed(JSON.stringify(value));
    expect(same(replaced!['plot'])).toEqual(as(fresh!['plot']));
    expect(same(replaced!['analyses'])).toEqual(as(fresh!['analyses']));
    expect(same(replaced!['species'])).toEqual(as(fresh!['species']));
    expect((fresh!['findings'] as unknown[]).length).toBeGreaterThan(0);
    const current = (findings: unknown) => (findings as { is_current: boolean }[]).filter((f) => f.is_current);
    expect(same(current(replaced!['findings']))).toEqual(as(fresh!['findings']));
    // 721 has a closed history row from its first content; its current one equals 720's only one.
    expect(same((replaced!['history'] as unknown[]).slice(-1))).toEqual(as(fresh!['history']));
    const opened = await sql<{ run_id: string; is_current: boolean; at_tx: boolean }>`
      select run_id, is_current, valid_from = (select min(valid_from) from eudr_findings where plot_id = ${String(samplePlot(720)['id'])}) as at_tx
      from plot_history where plot_id = ${String(samplePlot(720)['id'])}`.execute(db);
    expect(opened.rows).toEqual([{ run_id: RUN, is_current: true, at_tx: true }]);
  });

  it('links a new plot whose link the warehouse holds without it (an operator removed the plot by hand)', async () => {
    // The link COPYed with the new plot is refused by the link's key; the page goes the staged way,
    // which brings the soft-deleted link back.
    const id = String(samplePlot(730)['id']);
    await sql`insert into plot_suppliers (plot_id, supplier_id, deleted_at) values (${id}, 'supplier-m', now())`.execute(
      db,
    );
    const outcome = await storePlotBatch(db, pageOf([samplePlot(730)], 'supplier-m'));
    expect(outcome.counts['plots']).toEqual({ inserted: 1, updated: 0, unchanged: 0, deleted: 0 });
    expect(outcome.counts['plot_suppliers']).toEqual({ inserted: 0, updated: 1, unchanged: 0, deleted: 0 });
    const link = await sql<{ live: boolean }>`
      select deleted_at is null as live from plot_suppliers where plot_id = ${id} and supplier_id = 'supplier-m'`.execute(
      db,
    );
    expect(link.rows).toEqual([{ live: true }]);
    expect((await storedRows(db, id))!['history']).toHaveLength(1);
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
    name: 'tab\there\nnew line\r\\back\ufffdnul "quoted" é 𝄞 lone \ufffd',
    commodities: ['x,y', 'q"uote', 'back\\slash', '{b}', 'NULL'],
    custom_data: { k: 'v\tw\ufffdx', nested: { s: '\\N' } },
    species: [['\\N', 'tab\tname']],
  };

  it('stores text that COPY reads as structure (tabs, line breaks, backslashes, \\N, quotes) as sent, NUL and a lone surrogate as U+FFFD', async () => {
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
      // Changed plots the warehouse holds are compared and replaced through the temporary tables.
      const changed = samplePage(3, 950).map((p) => ({ ...p, riskLevel: 'high' }));
      const second = await storePlotBatch(single, { ...pageOf(changed, 'supplier-d'), page: 2 });
      expect(second.counts['plots']).toEqual({ inserted: 0, updated: 3, unchanged: 0, deleted: 0 });
      expect(second.counts['plot_history']).toEqual({ inserted: 3, updated: 3, unchanged: 0, deleted: 0 });
      const staged = await sql<{
        n: number;
      }>`select count(*)::int as n from pg_tables where tablename like 'stage_%'`.execute(single);
      expect(staged.rows[0]!.n).toBeGreaterThan(0);
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
      // Plots it holds, changed: compared and replaced over JSON parameters.
      const changed = [samplePlot(901, { ...HOSTILE, riskLevel: 'high' }), ...samplePage(3, 902)];
      const again = await storePlotBatch(limited, { ...pageOf(changed, 'supplier-j'), page: 2 });
      expect(again.counts['plots']).toEqual({ inserted: 0, updated: 1, unchanged: 3, deleted: 0 });
      expect(again.counts['plot_history']).toEqual({ inserted: 1, updated: 1, unchanged: 0, deleted: 0 });
      expect(await storedHostile(limited, String(samplePlot(901).id))).toEqual(expectedHostile);
    } finally {
      await limited.destroy();
    }
  });
});

/** Current rows of a plot in every table a page writes, without the times a write sets. */
async function storedRows(database: Warehouse, id: string) {
  const { rows } = await sql<Record<string, unknown>>`
    select (select to_jsonb(p) - 'first_seen_at' - 'changed_at' from plots p where p.id = ${id}) as plot,
           (select json_agg(to_jsonb(a) - 'first_seen_at' - 'changed_at' order by a.id) from analyses a where a.plot_id = ${id}) as analyses,
           (select json_agg(to_jsonb(s) order by s.position) from plot_species s where s.plot_id = ${id}) as species,
           (select json_agg(to_jsonb(h) - 'valid_from' - 'valid_to' order by h.valid_from) from plot_history h where h.plot_id = ${id}) as history,
           (select json_agg(to_jsonb(f) - 'valid_from' - 'valid_to' order by f.code, f.valid_from) from eudr_findings f where f.plot_id = ${id}) as findings`.execute(
    database,
  );
  return rows[0];
}

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
