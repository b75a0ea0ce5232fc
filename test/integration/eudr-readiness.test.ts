import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { sql } from 'kysely';
import { startWorkerHarness, type WorkerHarness } from '../support/worker-harness.ts';
import { rowVersions } from '../support/warehouse-facts.ts';
import type { OddKind } from '../../simulator/index.ts';

/**
 * EUDR readiness on the simulator's data (docs/eudr-readiness.md): each odd record produces the
 * finding it was made for and the checks find nothing of the kind elsewhere; the views agree with
 * the findings; findings keep their history as plots change and go; an unchanged refresh writes none.
 */

/** The finding each odd record was made for (sameLand's overlap findings need PostGIS; its duplicate does not). */
const MADE_FOR: Partial<Record<OddKind, string>> = {
  bowTie: 'polygon_self_intersection',
  emptyObjects: 'production_period_missing',
  noAnalyses: 'analysis_missing',
  pendingAnalysis: 'analysis_pending',
  pointOver4ha: 'point_over_4_ha',
  unclosedRing: 'polygon_ring_not_closed',
  lowPrecision: 'coordinate_precision_low',
  areaMismatch: 'surface_area_mismatch',
  beforeCutoff: 'production_before_cutoff',
  deforested: 'deforestation_detected',
  noCountry: 'country_missing',
  withHole: 'polygon_has_holes',
  pointZeroArea: 'point_area_too_small',
  swappedLonLat: 'coordinates_swapped',
  doubledCorner: 'geometry_invalid_at_6_decimals',
  sameLand: 'geometry_duplicate',
};

/** Codes only odd records have: the simulator's other plots are valid seven-decimal polygons of the reported area, dated after the cut-off, with a country. */
const ONLY_ODD = [
  'polygon_self_intersection',
  'point_over_4_ha',
  'polygon_ring_not_closed',
  'coordinate_precision_low',
  'surface_area_mismatch',
  'production_before_cutoff',
  'country_missing',
  'polygon_has_holes',
  'point_area_too_small',
  'coordinates_swapped',
  'geometry_invalid_at_6_decimals',
  // The simulator's plots lie well inside their countries (its boxes keep 10 km from borders and coasts).
  'country_outside_declared',
  'country_near_border',
];

interface FindingRow {
  plot_id: string;
  code: string;
  severity: string;
  message: string;
  details: Record<string, unknown> | null;
  is_current: boolean;
  valid_to: Date | null;
}

describe('EUDR readiness', () => {
  let h: WorkerHarness;
  let odd: Partial<Record<OddKind, string>>;
  const findings = async (plotId?: string) =>
    (
      await sql<FindingRow>`
        select plot_id, code, severity, message, details, is_current, valid_to from eudr_findings
        where ${plotId ?? null}::text is null or plot_id = ${plotId ?? null}
        order by plot_id, code, valid_from`.execute(h.db)
    ).rows;

  beforeAll(async () => {
    h = await startWorkerHarness({ seed: 7, suppliers: 4, plots: 1600 }, 'eudr');
    odd = h.sim.control.oddRecords();
    expect(Object.keys(odd).length).toBe(17);
    expect((await h.refresh()).status).toBe('succeeded');
  });
  afterAll(() => h?.close());

  it('finds in each odd record what it was made for, and those codes nowhere else', async () => {
    const current = (await findings()).filter((f) => f.is_current);
    for (const [kind, code] of Object.entries(MADE_FOR)) {
      const id = odd[kind as OddKind]!;
      expect(
        current.filter((f) => f.plot_id === id).map((f) => f.code),
        kind,
      ).toContain(code);
    }
    const oddIds = new Set(Object.values(odd));
    for (const f of current)
      if (ONLY_ODD.includes(f.code)) expect(oddIds.has(f.plot_id), `${f.code} on ${f.plot_id}`).toBe(true);
    // Every finding carries its check's severity and a sentence; the point's says why.
    const point = current.find((f) => f.plot_id === odd.pointOver4ha && f.code === 'point_over_4_ha')!;
    expect(point.severity).toBe('blocking');
    expect(point.details).toMatchObject({ limitM2: 40_000 });
    expect(point.message).toMatch(/single point but reports \d+\.\d\d ha/);
    expect(current.find((f) => f.plot_id === odd.beforeCutoff && f.code === 'production_before_cutoff')!.severity).toBe(
      'warning',
    );
    // The same geometry twice: on sameLand and the plot it copies (not an odd record itself), and no other.
    const duplicates = current.filter((f) => f.code === 'geometry_duplicate');
    expect(duplicates).toHaveLength(2);
    const copied = duplicates.map((f) => f.plot_id).find((id) => id !== odd.sameLand)!;
    expect(duplicates.map((f) => f.plot_id)).toContain(odd.sameLand);
    expect(h.sim.control.getPlot(copied)!['geometry']).toEqual(h.sim.control.getPlot(odd.sameLand!)!['geometry']);
    expect(duplicates.every((f) => f.severity === 'warning')).toBe(true);
    // The same land claimed twice is the overlap check's: without PostGIS nothing is said about it.
    expect(current.filter((f) => f.code.startsWith('overlap_'))).toEqual([]);
    // The point is stored as sent, without an area, flagged as not a polygon.
    const stored = await sql<{
      area_ha: number | null;
      geometry_valid: boolean;
      geometry_issue: string;
      geometry: unknown;
    }>`
      select area_ha, geometry_valid, geometry_issue, geometry from plots where id = ${odd.pointOver4ha!}`.execute(
      h.db,
    );
    expect(stored.rows[0]).toEqual({
      area_ha: null,
      geometry_valid: false,
      geometry_issue: 'a point, not a polygon (no area)',
      geometry: h.sim.control.getPlot(odd.pointOver4ha!)!['geometry'],
    });
  });

  it('gives one readiness row per current plot and per supplier, as the findings say', async () => {
    const plots = await sql<{
      plot_id: string;
      ready: boolean;
      blocking_findings: number;
      blocking_codes: string[];
      findings: Array<{ code: string; severity: string; message: string }>;
      overlap_checked: boolean;
      area_ha: number | null;
    }>`select plot_id, ready, blocking_findings, blocking_codes, findings, overlap_checked, area_ha from bi_eudr_plot_readiness`.execute(
      h.db,
    );
    const live = await sql<{ n: number }>`select count(*)::int as n from plots where deleted_at is null`.execute(h.db);
    expect(plots.rows.length).toBe(live.rows[0]!.n);
    const current = (await findings()).filter((f) => f.is_current);
    for (const row of plots.rows) {
      const mine = current.filter((f) => f.plot_id === row.plot_id);
      const blocking = mine.filter((f) => f.severity === 'blocking').map((f) => f.code);
      expect(row.blocking_codes, row.plot_id).toEqual(blocking.sort());
      expect(row.ready).toBe(blocking.length === 0);
      expect(row.findings.map((f) => f.code).sort()).toEqual(mine.map((f) => f.code).sort());
      expect(row.overlap_checked).toBe(false);
    }
    const byId = new Map(plots.rows.map((r) => [r.plot_id, r]));
    expect(byId.get(odd.pointOver4ha!)!.ready).toBe(false);
    // A point has no polygon area: its hectares are the reported surface area.
    expect(byId.get(odd.pointOver4ha!)!.area_ha).toBeCloseTo(
      (h.sim.control.getPlot(odd.pointOver4ha!)!['surfaceArea'] as number) / 10_000,
      6,
    );
    const ready = plots.rows.filter((r) => r.ready).length;
    expect(ready).toBeGreaterThan(0);
    expect(ready).toBeLessThan(plots.rows.length);

    const suppliers = await sql<{
      supplier_business_id: string;
      plots: number;
      plots_ready: number;
      plots_not_ready: number;
      hectares: number;
      hectares_ready: number;
      share_ready: number | null;
      top_reasons: Array<{ code: string; plots: number }>;
    }>`select * from bi_eudr_supplier_readiness order by supplier_business_id`.execute(h.db);
    const links = await sql<{ supplier_id: string; plot_id: string }>`
      select supplier_id, plot_id from plot_suppliers where deleted_at is null`.execute(h.db);
    expect(suppliers.rows.map((s) => s.supplier_business_id)).toEqual(
      h.sim.control
        .suppliers()
        .map((s) => s.id)
        .sort(),
    );
    for (const s of suppliers.rows) {
      const mine = links.rows.filter((l) => l.supplier_id === s.supplier_business_id).map((l) => byId.get(l.plot_id)!);
      const readyPlots = mine.filter((p) => p.ready);
      expect(s.plots).toBe(mine.length);
      expect(s.plots_ready).toBe(readyPlots.length);
      expect(s.plots_not_ready).toBe(mine.length - readyPlots.length);
      expect(s.share_ready).toBeCloseTo(readyPlots.length / mine.length, 12);
      expect(s.hectares).toBeCloseTo(
        mine.reduce((n, p) => n + (p.area_ha ?? 0), 0),
        6,
      );
      expect(s.hectares_ready).toBeCloseTo(
        readyPlots.reduce((n, p) => n + (p.area_ha ?? 0), 0),
        6,
      );
      const tally = new Map<string, number>();
      for (const p of mine) for (const code of p.blocking_codes) tally.set(code, (tally.get(code) ?? 0) + 1);
      const expected = [...tally]
        .map(([code, n]) => ({ code, plots: n }))
        .sort((a, b) => b.plots - a.plots || (a.code < b.code ? -1 : 1))
        .slice(0, 5);
      expect(s.top_reasons).toEqual(expected);
    }
  });

  it('writes no finding when nothing changed', async () => {
    const before = await rowVersions(h.db);
    const summary = await h.refresh();
    expect(summary.status).toBe('succeeded');
    expect(summary.rowsWritten).toBe(0);
    expect(summary.counts['eudr_findings'] ?? { inserted: 0, updated: 0, deleted: 0 }).toMatchObject({
      inserted: 0,
      updated: 0,
      deleted: 0,
    });
    expect(await rowVersions(h.db)).toEqual(before);
  });

  it('keeps history: a changed plot closes the findings that no longer hold and opens the new ones', async () => {
    const control = h.sim.control;
    const pointArea = control.getPlot(odd.pointOver4ha!)!['surfaceArea'] as number;
    // Still a point over 4 ha, but another figure: the finding changes.
    control.editPlot(odd.pointOver4ha!, { surfaceArea: pointArea + 50_000 });
    // The reported area fixed: the mismatch goes.
    const polygonArea = (control.getPlot(odd.areaMismatch!)!['surfaceArea'] as number) / 3;
    control.editPlot(odd.areaMismatch!, { surfaceArea: Math.round(polygonArea * 100) / 100 });
    // A new analysis that finds no deforestation.
    control.addAnalysis(odd.deforested!, { type: 'EUFOROBS', status: 'succeeded', deforestedArea: 0 });
    const untouched = (await findings(odd.beforeCutoff!)).filter((f) => f.is_current);

    const summary = await h.refresh();
    expect(summary.status).toBe('succeeded');
    expect(summary.counts['eudr_findings']).toMatchObject({ inserted: 1, updated: 3, deleted: 0 });

    const point = (await findings(odd.pointOver4ha!)).filter((f) => f.code === 'point_over_4_ha');
    expect(point.map((f) => f.is_current)).toEqual([false, true]);
    expect(point[0]!.valid_to).not.toBeNull();
    expect(point[0]!.details).toMatchObject({ surfaceAreaM2: pointArea });
    expect(point[1]!.details).toMatchObject({ surfaceAreaM2: pointArea + 50_000 });
    const mismatch = (await findings(odd.areaMismatch!)).filter((f) => f.code === 'surface_area_mismatch');
    expect(mismatch.map((f) => f.is_current)).toEqual([false]);
    const deforested = (await findings(odd.deforested!)).filter((f) => f.code === 'deforestation_detected');
    expect(deforested.map((f) => f.is_current)).toEqual([false]);
    // A plot that did not change keeps its rows as they were.
    expect((await findings(odd.beforeCutoff!)).filter((f) => f.is_current)).toEqual(untouched);
    const view = await sql<{
      ready: boolean;
    }>`select ready from bi_eudr_plot_readiness where plot_id = ${odd.deforested!}`.execute(h.db);
    expect(view.rows[0]!.ready).toBe(
      !(await findings(odd.deforested!)).some((f) => f.is_current && f.severity === 'blocking'),
    );
  });

  it("closes a removed plot's findings, and the views no longer show it", async () => {
    const gone = odd.bowTie!;
    expect((await findings(gone)).some((f) => f.is_current)).toBe(true);
    h.sim.control.removePlot(gone);
    const summary = await h.refresh();
    expect(summary.status).toBe('succeeded');
    const rows = await findings(gone);
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.every((f) => !f.is_current && f.valid_to !== null)).toBe(true);
    expect(summary.counts['eudr_findings']!.updated).toBe(rows.length);
    const view = await sql`select 1 from bi_eudr_plot_readiness where plot_id = ${gone}`.execute(h.db);
    expect(view.rows).toEqual([]);
  });

  it('stores a plot a service sends as a line (off its contract), blocks it as the EU would, and clears it once drawn again', async () => {
    const control = h.sim.control;
    // A plot ready as it stands, so the line's finding is its only one.
    const ready = await sql<{ plot_id: string }>`
      select plot_id from bi_eudr_plot_readiness where ready and plot_id <> all(${Object.values(odd)}::text[])
      order by plot_id limit 1`.execute(h.db);
    const id = ready.rows[0]!.plot_id;
    const plain = control.getPlot(id)!;
    const polygon = plain['geometry'] as { type: 'Polygon'; coordinates: number[][][] };
    const ring = polygon.coordinates[0]!;
    // The outline as a line: the same positions, which the EU information system refuses.
    control.editPlot(id, { geometry: { type: 'LineString', coordinates: ring }, surfaceArea: 12_000 });
    const summary = await h.refresh();
    expect(summary.status).toBe('succeeded');
    // Stored, not skipped: no issue names it, and the warehouse has it as the service sent it.
    const issues = await sql<{ n: number }>`
      select count(*)::int as n from sync_issues where run_id = ${summary.runId}::uuid and record_id = ${id}`.execute(
      h.db,
    );
    expect(issues.rows[0]!.n).toBe(0);
    const row = await sql<{
      geometry: { type: string };
      geometry_valid: boolean;
      geometry_issue: string;
      area_ha: number | null;
    }>`
      select geometry, geometry_valid, geometry_issue, area_ha from plots where id = ${id}`.execute(h.db);
    expect(row.rows[0]).toMatchObject({
      geometry: { type: 'LineString' },
      geometry_valid: false,
      geometry_issue: 'a LineString, not a polygon or a point (no area)',
      area_ha: null,
    });
    const current = (await findings(id)).filter((f) => f.is_current);
    expect(current.map((f) => [f.code, f.severity])).toEqual([['geometry_type_refused', 'blocking']]);
    const view = await sql<{ ready: boolean; blocking_codes: string[] }>`
      select ready, blocking_codes from bi_eudr_plot_readiness where plot_id = ${id}`.execute(h.db);
    expect(view.rows[0]).toMatchObject({ ready: false, blocking_codes: ['geometry_type_refused'] });

    control.editPlot(id, { geometry: polygon, surfaceArea: plain['surfaceArea'] as number });
    expect((await h.refresh()).status).toBe('succeeded');
    expect((await findings(id)).filter((f) => f.is_current)).toEqual([]);
    const again = await sql<{ ready: boolean }>`select ready from bi_eudr_plot_readiness where plot_id = ${id}`.execute(
      h.db,
    );
    expect(again.rows[0]!.ready).toBe(true);
  });

  it('says the overlap check was not run on a warehouse without PostGIS', async () => {
    const { rows } = await sql<{ checked: boolean }>`select eudr_overlap_checked() as checked`.execute(h.db);
    expect(rows[0]!.checked).toBe(false);
  });
});
