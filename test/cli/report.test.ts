import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { sql } from 'kysely';
import { copyFileSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { openWarehouse, type Warehouse } from '../../warehouse/database.ts';
import { MIGRATIONS_DIR, migrateToLatest } from '../../warehouse/migrate.ts';
import { refreshSummaries } from '../../warehouse/analyst-summaries.ts';
import { collectReport, UnknownSupplierError } from '../../report/write.ts';
import { NOT_READY, READY } from '../../report/model.ts';
import { createTestDatabase } from '../support/databases.ts';
import { lastJsonLine, runDdsync } from '../support/processes.ts';
import { scratchDir } from '../support/scratch.ts';
import { remoteResources, reportData } from '../support/report-html.ts';

// `ddsync report` on a warehouse written by hand, so every figure is known: S1 reaches P1 (ready)
// and P2 (a bow-tie: blocking finding, and a warning); S2 reaches P2 too and P3 (a point, no
// country: blocking); P4 is soft-deleted (not in the report); S3 has no plot. A closed finding
// (history) of P1 is not current and must not show.
const NAMES = { P1: 'North field', P2: 'Shared </script><img src=x onerror=alert(1)>', P3: 'Spot' };

async function seed(db: Warehouse): Promise<void> {
  const square = (lon: number, lat: number) =>
    JSON.stringify({
      type: 'Polygon',
      coordinates: [
        [
          [lon, lat],
          [lon + 0.01, lat],
          [lon + 0.01, lat + 0.01],
          [lon, lat + 0.01],
          [lon, lat],
        ],
      ],
    });
  const bowTie = JSON.stringify({
    type: 'Polygon',
    coordinates: [
      [
        [-1.5, 6.1],
        [-1.49, 6.11],
        [-1.49, 6.1],
        [-1.5, 6.11],
        [-1.5, 6.1],
      ],
    ],
  });
  await sql`
    insert into businesses (id, name, is_caller, content_hash) values
      ('C', 'Caller Ltd', true, 'h'), ('S1', 'Alpha Cocoa', false, 'h'), ('S2', 'Beta Farms', false, 'h'),
      ('S3', 'Gamma Wood', false, 'h')`.execute(db);
  await sql`
    insert into business_connections (id, source_business_id, target_business_id, partner_business_id, role, content_hash) values
      ('c1', 'S1', 'C', 'S1', 'supplier', 'h'), ('c2', 'S2', 'C', 'S2', 'supplier', 'h'), ('c3', 'S3', 'C', 'S3', 'supplier', 'h')`.execute(
    db,
  );
  await sql`
    insert into plots (id, name, owner_id, country_code, commodities, area_ha, geometry, geometry_valid, content_hash, history_hash, deleted_at) values
      ('P1', ${NAMES.P1}, 'S1', 'CI', '{cocoa}', 120, ${square(-5, 7)}::jsonb, true, 'h', 'h', null),
      ('P2', ${NAMES.P2}, 'S1', 'GH', '{cocoa}', 1.2, ${bowTie}::jsonb, false, 'h', 'h', null),
      ('P3', ${NAMES.P3}, 'S2', null, '{coffee}', 6, '{"type":"Point","coordinates":[-75.5,4.5]}'::jsonb, true, 'h', 'h', null),
      ('P4', 'Gone', 'S2', 'CI', '{cocoa}', 3, ${square(-6, 7)}::jsonb, true, 'h', 'h', now())`.execute(db);
  await sql`
    insert into plot_suppliers (plot_id, supplier_id) values ('P1', 'S1'), ('P2', 'S1'), ('P2', 'S2'), ('P3', 'S2'), ('P4', 'S2')`.execute(
    db,
  );
  await sql`
    insert into eudr_findings (plot_id, code, severity, message, valid_from, valid_to, is_current) values
      ('P1', 'country_missing', 'blocking', 'An old finding, fixed since.', now() - interval '2 days', now() - interval '1 day', false),
      ('P2', 'polygon_self_intersection', 'blocking', 'The polygon crosses itself near [-1.495, 6.105].', now(), null, true),
      ('P2', 'area_mismatch', 'warning', 'Reported 2 ha, the polygon has 1.2 ha.', now(), null, true),
      ('P3', 'country_missing', 'blocking', 'The country of production is missing.', now(), null, true),
      ('P4', 'country_missing', 'blocking', 'A deleted plot''s finding.', now(), null, true)`.execute(db);
  await sql`
    insert into sync_runs (id, status, started_at, finished_at) values
      ('00000000-0000-4000-8000-000000000001', 'succeeded', '2026-11-20T10:00:00Z', '2026-11-20T10:05:00Z')`.execute(
    db,
  );
}

describe('ddsync report', () => {
  let url: string;
  let db: Warehouse;
  beforeAll(async () => {
    url = await createTestDatabase('report');
    db = openWarehouse(url, 2);
    await migrateToLatest(db);
    await seed(db);
    // Rows written by hand, not by a refresh: the summaries a refresh keeps are made here, as its end makes them.
    await refreshSummaries(db);
  });
  afterAll(() => db?.destroy());

  it('reads the current plots with their current findings, readiness, polygons and suppliers from the views', async () => {
    const model = await collectReport(db, undefined, new Date('2026-11-23T21:00:00Z'));
    expect(model.totals).toEqual({ plots: 3, ready: 1, notReady: 2, unknown: 0, hectares: 127.2, located: 3 });
    expect(model.overlapChecked).toBe(false);
    expect(model.lastRefreshAt).toBe('2026-11-20T10:05:00.000Z');
    expect(model.plots.ids).toEqual(['P1', 'P2', 'P3']);
    expect(model.plots.state).toEqual([READY, NOT_READY, NOT_READY]);
    expect(model.plots.names[1]).toBe(NAMES.P2);
    const findingsOf = (i: number) => model.plots.findings[i]!.map((k) => model.findings[k]![0]);
    expect(findingsOf(0)).toEqual([]);
    expect(findingsOf(1)).toEqual(['polygon_self_intersection', 'area_mismatch']);
    expect(findingsOf(2)).toEqual(['country_missing']);
    expect(model.plots.rings[0]).toHaveLength(1);
    expect(model.plots.rings[2]).toEqual([]);
    expect([model.plots.x[2], model.plots.y[2]]).toEqual([-7550000, 450000]);
    const suppliersOf = (i: number) => model.plots.suppliers[i]!.map((k) => model.suppliers[k]![1]);
    expect(suppliersOf(1)).toEqual(['Alpha Cocoa', 'Beta Farms']);
    expect(model.supplierRows.map((s) => [s.supplierId, s.plots, s.plotsReady, s.plotsNotReady])).toEqual([
      ['S2', 2, 0, 2],
      ['S1', 2, 1, 1],
      ['S3', 0, 0, 0],
    ]);
    expect(model.reasons).toEqual([
      ['country_missing', 1],
      ['polygon_self_intersection', 1],
    ]);
    // The map's country risk colouring counts each level's plots as the view counts them (P3 has no
    // country: unknown, as plots_country_risk_unknown counts it); CI is standard, GH low (0022).
    expect(model.countryRisk).toEqual({ low: 1, standard: 1, high: 0, unknown: 1 });
  });

  it('restricts to one supplier, naming the other suppliers of its plots; an unknown supplier is an error', async () => {
    const model = await collectReport(db, 'S2');
    expect(model.supplier).toEqual({ id: 'S2', name: 'Beta Farms' });
    expect(model.plots.ids).toEqual(['P2', 'P3']);
    expect(model.supplierRows.map((s) => s.supplierId)).toEqual(['S2']);
    expect(model.suppliers.map((s) => s[1]).sort()).toEqual(['Alpha Cocoa', 'Beta Farms']);
    await expect(collectReport(db, 'nobody')).rejects.toThrow(UnknownSupplierError);
  });

  it('writes one HTML file that needs no network, prints its path, and refuses bad flags with exit code 2', async () => {
    const out = scratchDir('report');
    const env = { PATH: process.env.PATH, HOME: process.env.HOME, DATABASE_URL: url };
    const run = runDdsync(['report', '--out', out], env);
    expect(await run.exited, run.output()).toBe(0);
    const path = join(out, 'ddsync-report.html');
    expect(run.output().trim().split('\n').at(-1)).toBe(path);
    expect(run.output()).toContain('3 plots: 1 ready, 2 not ready; overlap check not run (no PostGIS)');
    const html = readFileSync(path, 'utf8');
    expect(remoteResources(html)).toEqual([]);
    expect(html).not.toContain('<img src=x');
    expect(reportData<{ plots: { names: string[] } }>(html).plots.names).toContain(NAMES.P2);
    // The map's switch to colour by country risk, its legend counting the plots per level.
    expect(html).toContain('<input type="radio" name="colour-by" value="risk">');
    expect(html).toMatch(/<div data-level="unknown">[^\n]*<span class="count">1<\/span> plot</);
    // The libraries and the outlines are inside the file.
    expect(html).toContain('Leaflet 1.9.4, a JS library for interactive maps');
    expect(html).toContain('id="ddsync-world">{"type":"Topology"');

    const json = runDdsync(['report', '--out', out, '--supplier', 'S1', '--json'], env);
    expect(await json.exited, json.output()).toBe(0);
    expect(lastJsonLine(json.output())).toMatchObject({
      report: join(out, 'ddsync-report-S1.html'),
      plots: 2,
      plotsReady: 1,
      plotsNotReady: 1,
      overlapChecked: false,
    });

    const unknown = runDdsync(['report', '--out', out, '--supplier', 'nobody'], env);
    expect(await unknown.exited).toBe(2);
    expect(unknown.output()).toContain('--supplier: no supplier with business id "nobody" in the warehouse');
    const file = runDdsync(['report', '--out', path], env);
    expect(await file.exited).toBe(2);
    expect(file.output()).toContain('--out must be a folder');
    const noDatabase = runDdsync(['report'], { PATH: process.env.PATH, HOME: process.env.HOME });
    expect(await noDatabase.exited).toBe(2);
    expect(noDatabase.output()).toContain('DATABASE_URL');
  });

  it('needs no more than the read-only BI role', async () => {
    const out = scratchDir('report-bi');
    const login = `report_bi_${Math.random().toString(36).slice(2, 8)}`;
    await sql.raw(`create role ${login} login password 'bi' in role ddsync_reader`).execute(db);
    const biUrl = url.replace(/\/\/[^@]+@/, `//${login}:bi@`);
    const run = runDdsync(['report', '--out', out, '--json'], { PATH: process.env.PATH, DATABASE_URL: biUrl });
    expect(await run.exited, run.output()).toBe(0);
    expect(lastJsonLine(run.output())).toMatchObject({ plots: 3, plotsNotReady: 2 });
  });

  it('says there are no plots yet on an empty warehouse, and to migrate on one without the views', async () => {
    const out = scratchDir('report-empty');
    const emptyUrl = await createTestDatabase('report_empty');
    const empty = openWarehouse(emptyUrl, 1);
    try {
      const bare = runDdsync(['report', '--out', out], { PATH: process.env.PATH, DATABASE_URL: emptyUrl });
      expect(await bare.exited).toBe(1);
      expect(bare.output()).toContain('the warehouse lacks the readiness views');
      expect(bare.output()).toContain('run ddsync migrate');
      // Migrated up to the readiness views but not their country risk columns (0022): said so too.
      const before0022 = scratchDir('report-migrations');
      for (const f of readdirSync(MIGRATIONS_DIR).filter((f) => f < '0022'))
        copyFileSync(join(MIGRATIONS_DIR, f), join(before0022, f));
      await migrateToLatest(empty, before0022);
      const older = runDdsync(['report', '--out', out], { PATH: process.env.PATH, DATABASE_URL: emptyUrl });
      expect(await older.exited).toBe(1);
      expect(older.output()).toContain('country_risk_level');
      expect(older.output()).toContain('run ddsync migrate');
      await migrateToLatest(empty);
      const run = runDdsync(['report', '--out', out, '--json'], { PATH: process.env.PATH, DATABASE_URL: emptyUrl });
      expect(await run.exited, run.output()).toBe(0);
      expect(lastJsonLine(run.output())).toMatchObject({ plots: 0, plotsReady: 0, plotsNotReady: 0 });
      expect(readFileSync(join(out, 'ddsync-report.html'), 'utf8')).toContain('<h2>No plots yet</h2>');
    } finally {
      await empty.destroy();
    }
  });
});
