import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { sql } from 'kysely';
import { refreshSummaries } from '../../warehouse/analyst-summaries.ts';
import { openWarehouse, type Warehouse } from '../../warehouse/database.ts';
import { migrateToLatest } from '../../warehouse/migrate.ts';
import { createTestDatabase } from '../support/databases.ts';
import { startWorkerHarness, type WorkerHarness } from '../support/worker-harness.ts';

/**
 * Country risk (docs/country-risk.md): the reference table holds what the transcribed act says, the
 * views give each plot the level of its country of production and each supplier the highest of its
 * plots' and whether every plot lies in a low-risk country (simplified due diligence, Article 13),
 * and a later review changes the level in force without editing the rows before it.
 */

/**
 * The levels of the simulator's countries as Implementing Regulation (EU) 2025/1093 gives them (its
 * Annex as transcribed: Ghana and Viet Nam listed low; the others not listed, so standard), written
 * here by hand and not read from the table, so a wrong row fails the test.
 */
const ACT_LEVEL: Record<string, string> = {
  BR: 'standard',
  CO: 'standard',
  PE: 'standard',
  CI: 'standard',
  GH: 'low',
  ID: 'standard',
  MY: 'standard',
  VN: 'low',
  ET: 'standard',
  CM: 'standard',
};

interface SupplierRisk {
  supplier_business_id: string;
  country_risk_level: string | null;
  plots_country_risk_low: number;
  plots_country_risk_standard: number;
  plots_country_risk_high: number;
  plots_country_risk_unknown: number;
  simplified_due_diligence_eligible: boolean | null;
}

const supplierRisk = async (db: Warehouse, view: 'bi_suppliers' | 'bi_eudr_supplier_readiness') =>
  (
    await sql<SupplierRisk>`
      select supplier_business_id, country_risk_level, plots_country_risk_low::int, plots_country_risk_standard::int,
             plots_country_risk_high::int, plots_country_risk_unknown::int, simplified_due_diligence_eligible
      from ${sql.table(view)} order by supplier_business_id`.execute(db)
  ).rows;

describe('country risk: the reference table', () => {
  let db: Warehouse;
  beforeAll(async () => {
    db = openWarehouse(await createTestDatabase('countryrisk'), 2);
    await migrateToLatest(db);
  });
  afterAll(() => db?.destroy());

  it('holds what the transcribed act says, with the act, its dates and the source on every row', async () => {
    const level = async (code: string) =>
      (
        await sql<{
          level: string;
          act: string;
          act_date: string;
          applies_from: string;
          provision: string | null;
          source: string;
        }>`
          select level, act, act_date::text, applies_from::text, provision, source
          from bi_country_risk where country_code = ${code}`.execute(db)
      ).rows[0];
    // High: the four the Annex lists as high risk.
    for (const code of ['BY', 'KP', 'MM', 'RU']) expect((await level(code))?.level, code).toBe('high');
    // Low: every EU member state, and others the Annex lists.
    for (const code of ['DE', 'FR', 'NL', 'GH', 'VN', 'US', 'CN']) expect((await level(code))?.level, code).toBe('low');
    // Standard: not listed (Art. 1(2)).
    for (const code of ['BR', 'CI', 'ID', 'MY', 'CO']) expect((await level(code))?.level, code).toBe('standard');
    // Not settled by the stored sources: territories the Annex does not name, and VA, TW, EH.
    for (const code of ['GF', 'PR', 'GL', 'HK', 'VA', 'TW', 'EH'])
      expect((await level(code))?.level, code).toBe('unknown');

    const by = (await level('BY'))!;
    expect(by).toMatchObject({
      act: 'Commission Implementing Regulation (EU) 2025/1093',
      act_date: '2025-05-22',
      applies_from: '2025-05-26',
      provision: 'Annex',
    });
    expect(by.source).toMatch(/third-party transcription.*official text not read/);
    expect((await level('BR'))!.provision).toBe('Article 1(2)');
    expect((await level('GF'))!.provision).toBeNull();

    const counts = await sql<{ level: string; n: number }>`
      select level, count(*)::int as n from country_risk group by level order by level`.execute(db);
    expect(counts.rows).toEqual([
      { level: 'high', n: 4 },
      { level: 'low', n: 140 },
      { level: 'standard', n: 50 },
      { level: 'unknown', n: 56 },
    ]);
    const unsourced = await sql<{ n: number }>`
      select count(*)::int as n from country_risk where btrim(source) = '' or btrim(act) = ''`.execute(db);
    expect(unsourced.rows[0]!.n).toBe(0);
  });

  it("gives each plot its country's level and each supplier the highest and its eligibility for simplified due diligence", async () => {
    // E1: every plot in a low-risk country (one written in lower case with spaces, as a service may).
    // M1: a low and a standard plot. U1: a low plot and one in French Guiana (unknown). N1: a low plot
    // and one without a country. H1: a standard and a high plot. Z1: no plot. X1's only link is gone.
    await sql
      .raw(`
      insert into businesses (id, name, is_caller, content_hash) values
        ('E1', 'Eligible', false, 'h'), ('M1', 'Mixed', false, 'h'), ('U1', 'Territory', false, 'h'),
        ('N1', 'No country', false, 'h'), ('H1', 'High', false, 'h'), ('Z1', 'Empty', false, 'h');
      insert into business_connections (id, source_business_id, target_business_id, partner_business_id, role, plots_count, plots_commodities, content_hash) values
        ('ce', 'E1', 'C', 'E1', 'supplier', 2, '{}', 'h'), ('cm', 'M1', 'C', 'M1', 'supplier', 2, '{}', 'h'),
        ('cu', 'U1', 'C', 'U1', 'supplier', 2, '{}', 'h'), ('cn', 'N1', 'C', 'N1', 'supplier', 2, '{}', 'h'),
        ('ch', 'H1', 'C', 'H1', 'supplier', 2, '{}', 'h'), ('cz', 'Z1', 'C', 'Z1', 'supplier', 0, '{}', 'h');
      insert into plots (id, name, country_code, commodities, geometry_valid, content_hash, history_hash, deleted_at) values
        ('pe1', 'de', 'DE', '{wood}', true, 'h', 'h', null), ('pe2', 'gh', ' gh ', '{cocoa}', true, 'h', 'h', null),
        ('pm1', 'fr', 'FR', '{wood}', true, 'h', 'h', null), ('pm2', 'br', 'BR', '{soya}', true, 'h', 'h', null),
        ('pu1', 'vn', 'VN', '{coffee}', true, 'h', 'h', null), ('pu2', 'gf', 'GF', '{wood}', true, 'h', 'h', null),
        ('pn1', 'it', 'IT', '{wood}', true, 'h', 'h', null), ('pn2', 'none', '', '{wood}', true, 'h', 'h', null),
        ('ph1', 'ci', 'CI', '{cocoa}', true, 'h', 'h', null), ('ph2', 'by', 'BY', '{wood}', true, 'h', 'h', null),
        ('pgone', 'ru', 'RU', '{wood}', true, 'h', 'h', '2025-01-01T00:00:00Z');
      insert into plot_suppliers (plot_id, supplier_id, deleted_at) values
        ('pe1', 'E1', null), ('pe2', 'E1', null), ('pm1', 'M1', null), ('pm2', 'M1', null),
        ('pu1', 'U1', null), ('pu2', 'U1', null), ('pn1', 'N1', null), ('pn2', 'N1', null),
        ('ph1', 'H1', null), ('ph2', 'H1', null), ('pgone', 'E1', '2025-01-01T00:00:00Z');
    `)
      .execute(db);
    // Written by hand, not by a refresh: the summaries made to agree as the end of a refresh makes them.
    await refreshSummaries(db);

    const plots = await sql<{ plot_id: string; a: string | null; b: string | null }>`
      select c.plot_id, c.country_risk_level as a, r.country_risk_level as b
      from bi_current_plots c join bi_eudr_plot_readiness r using (plot_id) order by plot_id`.execute(db);
    const expected = {
      pe1: 'low',
      pe2: 'low',
      ph1: 'standard',
      ph2: 'high',
      pm1: 'low',
      pm2: 'standard',
      pn1: 'low',
      pn2: null,
      pu1: 'low',
      pu2: 'unknown',
    };
    expect(Object.fromEntries(plots.rows.map((r) => [r.plot_id, r.a]))).toEqual(expected);
    expect(Object.fromEntries(plots.rows.map((r) => [r.plot_id, r.b]))).toEqual(expected);

    // bi_risk_overview: each supplier, commodity and country row carries the country's level, as the
    // plots do (the deleted plot and link are not there; a plot without a country has none).
    const overview = await sql<{ row: string; country_risk_level: string | null }>`
      select supplier_business_id || ' ' || commodity || ' [' || country_code || ']' as row, country_risk_level
      from bi_risk_overview order by 1`.execute(db);
    expect(Object.fromEntries(overview.rows.map((r) => [r.row, r.country_risk_level]))).toEqual({
      'E1 cocoa [ gh ]': 'low',
      'E1 wood [DE]': 'low',
      'H1 cocoa [CI]': 'standard',
      'H1 wood [BY]': 'high',
      'M1 soya [BR]': 'standard',
      'M1 wood [FR]': 'low',
      'N1 wood []': null,
      'N1 wood [IT]': 'low',
      'U1 coffee [VN]': 'low',
      'U1 wood [GF]': 'unknown',
    });
    // The new column comes last: the columns before it keep their order.
    const columns = await sql<{ column_name: string }>`
      select column_name from information_schema.columns
      where table_schema = current_schema() and table_name = 'bi_risk_overview' order by ordinal_position`.execute(db);
    expect(columns.rows.map((c) => c.column_name)).toEqual([
      'supplier_business_id',
      'supplier_name',
      'commodity',
      'country_code',
      'plots',
      'hectares',
      'flagged_plots',
      'flagged_share',
      'plots_allocated',
      'hectares_allocated',
      'country_risk_level',
    ]);

    const row = (
      level: string | null,
      [low, standard, high, unknown]: number[],
      eligible: boolean | null,
    ): Omit<SupplierRisk, 'supplier_business_id'> => ({
      country_risk_level: level,
      plots_country_risk_low: low!,
      plots_country_risk_standard: standard!,
      plots_country_risk_high: high!,
      plots_country_risk_unknown: unknown!,
      simplified_due_diligence_eligible: eligible,
    });
    const want = {
      E1: row('low', [2, 0, 0, 0], true),
      H1: row('high', [0, 1, 1, 0], false),
      M1: row('standard', [1, 1, 0, 0], false),
      N1: row('unknown', [1, 0, 0, 1], false),
      U1: row('unknown', [1, 0, 0, 1], false),
      Z1: row(null, [0, 0, 0, 0], null),
    };
    for (const view of ['bi_suppliers', 'bi_eudr_supplier_readiness'] as const) {
      const got = Object.fromEntries(
        (await supplierRisk(db, view)).map(({ supplier_business_id, ...r }) => [supplier_business_id, r]),
      );
      expect(got, view).toEqual(want);
    }
  });

  it('takes a later review as new rows: the level in force changes on its date, the old rows stay', async () => {
    const before = await sql<
      Record<string, unknown>
    >`select * from country_risk order by country_code, applies_from`.execute(db);
    // A review that moves Brazil to low risk from tomorrow changes nothing today...
    await sql`
      insert into country_risk (country_code, level, act, act_date, applies_from, provision, source)
      values ('BR', 'low', 'A later review (test)', current_date, current_date + 1, 'Annex', 'test row')`.execute(db);
    const inForce = async (code: string) =>
      (await sql<{ level: string }>`select level from bi_country_risk where country_code = ${code}`.execute(db)).rows[0]
        ?.level;
    expect(await inForce('BR')).toBe('standard');
    // ...and from its date on, Brazil's level is the review's: M1's plots are then all low.
    await sql`
      insert into country_risk (country_code, level, act, act_date, applies_from, provision, source)
      values ('BR', 'low', 'A later review (test)', current_date - 1, current_date, 'Annex', 'test row')`.execute(db);
    expect(await inForce('BR')).toBe('low');
    const m1 = (await supplierRisk(db, 'bi_suppliers')).find((s) => s.supplier_business_id === 'M1')!;
    expect(m1).toMatchObject({ country_risk_level: 'low', simplified_due_diligence_eligible: true });
    // The rows of 2025/1093 are as they were.
    const after = await sql<Record<string, unknown>>`
      select * from country_risk where act <> 'A later review (test)' order by country_code, applies_from`.execute(db);
    expect(after.rows).toEqual(before.rows);
    // A review is a row with a new date: the same country and date twice is refused.
    await expect(
      sql`insert into country_risk (country_code, level, act, act_date, applies_from, source)
          values ('BR', 'high', 'x', current_date, current_date, 'x')`.execute(db),
    ).rejects.toThrow(/duplicate key/);
    await expect(
      sql`insert into country_risk (country_code, level, act, act_date, applies_from, source)
          values ('BR', 'medium', 'x', current_date, current_date + 7, 'x')`.execute(db),
    ).rejects.toThrow(/check constraint/);
  });
});

describe('country risk on the simulator refreshed', () => {
  let h: WorkerHarness;
  beforeAll(async () => {
    h = await startWorkerHarness({ seed: 11, suppliers: 4, plots: 600 }, 'countryrisk');
    expect((await h.refresh()).status).toBe('succeeded');
  });
  afterAll(() => h?.close());

  it('gives every plot the level of the country the simulator says it lies in, and every supplier the summary of its plots', async () => {
    // What the simulator serves: each plot's country and the suppliers it is reached through.
    const truth = new Map<string, string | null>();
    const bySupplier = new Map<string, Array<string | null>>();
    for (const { plot, supplierIds } of h.sim.control.plots()) {
      const code = String(plot['countryCode'] ?? '').trim();
      const level = code === '' ? null : (ACT_LEVEL[code] ?? 'unexpected');
      truth.set(String(plot['id']), level);
      for (const s of supplierIds) bySupplier.set(s, [...(bySupplier.get(s) ?? []), level]);
    }
    expect([...truth.values()]).toContain('low');
    expect([...truth.values()]).toContain('standard');

    for (const view of ['bi_current_plots', 'bi_eudr_plot_readiness'] as const) {
      const { rows } = await sql<{ plot_id: string; country_risk_level: string | null }>`
        select plot_id, country_risk_level from ${sql.table(view)}`.execute(h.db);
      expect(Object.fromEntries(rows.map((r) => [r.plot_id, r.country_risk_level])), view).toEqual(
        Object.fromEntries(truth),
      );
    }

    // bi_risk_overview: every row's level is the act's for its country; its rows still add up to the plots.
    const overview = await sql<{ country_code: string | null; country_risk_level: string | null; plots: number }>`
      select country_code, country_risk_level, plots_allocated as plots from bi_risk_overview`.execute(h.db);
    expect(overview.rows.length).toBeGreaterThan(4);
    for (const r of overview.rows) {
      const code = (r.country_code ?? '').trim();
      expect(r.country_risk_level, code).toBe(code === '' ? null : (ACT_LEVEL[code] ?? 'unexpected'));
    }
    expect(Math.round(overview.rows.reduce((sum, r) => sum + Number(r.plots), 0))).toBe(truth.size);

    const summary = (levels: Array<string | null>) => {
      const n = (l: string) => levels.filter((x) => x === l).length;
      const unknown = levels.filter((x) => x === null || x === 'unknown').length;
      return {
        country_risk_level: n('high') > 0 ? 'high' : unknown > 0 ? 'unknown' : n('standard') > 0 ? 'standard' : 'low',
        plots_country_risk_low: n('low'),
        plots_country_risk_standard: n('standard'),
        plots_country_risk_high: n('high'),
        plots_country_risk_unknown: unknown,
        simplified_due_diligence_eligible: n('low') === levels.length,
      };
    };
    const want = Object.fromEntries([...bySupplier].map(([s, levels]) => [s, summary(levels)]));
    expect(Object.keys(want).length).toBe(4);
    for (const view of ['bi_suppliers', 'bi_eudr_supplier_readiness'] as const) {
      const got = Object.fromEntries(
        (await supplierRisk(h.db, view)).map(({ supplier_business_id, ...r }) => [supplier_business_id, r]),
      );
      expect(got, view).toEqual(want);
    }
  });
});
