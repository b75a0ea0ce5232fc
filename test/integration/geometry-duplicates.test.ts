import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { sql } from 'kysely';
import { startWorkerHarness, type WorkerHarness } from '../support/worker-harness.ts';
import type { OddKind } from '../../simulator/index.ts';
import type { PolygonGeometry } from '../../simulator/geometry.ts';
import { truncate6 } from '../../domain/eudr/six-decimals.ts';

/**
 * The same geometry under two plot ids (geometry_duplicate, docs/eudr-readiness.md), on a refreshed
 * simulator warehouse without PostGIS: the simulator's sameLand record copies another supplier's
 * plot; the check compares geometries as the EU keeps them (cut to 6 decimals); the findings close
 * when a copy is redrawn or deleted, and a warning leaves readiness alone.
 */

interface Row {
  plot_id: string;
  severity: string;
  message: string;
  details: { other_plots: number; plot_ids: string[] };
  valid_from: Date;
}

describe('geometry duplicates', () => {
  let h: WorkerHarness;
  let odd: Partial<Record<OddKind, string>>;
  let sameLand: string;
  let twin: string;
  const current = async () =>
    (
      await sql<Row>`
        select plot_id, severity, message, details, valid_from from eudr_findings
        where code = 'geometry_duplicate' and is_current order by plot_id`.execute(h.db)
    ).rows;
  const geometryOf = (id: string) => h.sim.control.getPlot(id)!['geometry'] as PolygonGeometry;

  beforeAll(async () => {
    h = await startWorkerHarness({ seed: 7, suppliers: 4, plots: 1600 }, 'duplicates');
    odd = h.sim.control.oddRecords();
    sameLand = odd.sameLand!;
    expect(sameLand).toBeDefined();
    // The plot it copies, found at the source: the one other plot with the very same geometry.
    const text = JSON.stringify(geometryOf(sameLand));
    const copies = [...h.sim.control.plots()]
      .map((p) => p.plot)
      .filter((p) => p['id'] !== sameLand && JSON.stringify(p['geometry']) === text);
    expect(copies).toHaveLength(1);
    twin = copies[0]!['id'] as string;
    expect((await h.refresh()).status).toBe('succeeded');
  });
  afterAll(() => h?.close());

  it('flags the sameLand pair, each naming the other, and no other plot; a warning, so readiness is untouched', async () => {
    const rows = await current();
    expect(rows.map((r) => r.plot_id)).toEqual([sameLand, twin].sort());
    for (const r of rows) {
      const other = r.plot_id === sameLand ? twin : sameLand;
      expect(r.severity).toBe('warning');
      expect(r.message).toBe(
        `The same geometry as plot ${other}, once cut to 6 decimals as the EU keeps it: a statement bringing both would carry the land twice.`,
      );
      expect(r.details).toMatchObject({ other_plots: 1, plot_ids: [other] });
    }
    const views = await sql<{ plot_id: string; ready: boolean; blocking_codes: string[]; codes: string[] }>`
      select r.plot_id, r.ready, r.blocking_codes, array(select f ->> 'code' from jsonb_array_elements(r.findings) f) as codes
      from bi_eudr_plot_readiness r where r.plot_id = any(${[sameLand, twin]}::text[])`.execute(h.db);
    expect(views.rows).toHaveLength(2);
    for (const v of views.rows) {
      expect(v.codes).toContain('geometry_duplicate');
      expect(v.blocking_codes).not.toContain('geometry_duplicate');
      expect(v.ready).toBe(v.blocking_codes.length === 0);
    }
  });

  it('keeps the findings through an unchanged refresh and a plot rewritten for another reason', async () => {
    const before = await current();
    const summary = await h.refresh();
    expect(summary.status).toBe('succeeded');
    expect(summary.rowsWritten).toBe(0);
    expect(await current()).toEqual(before);
    // A plot of the pair rewritten for another reason: the page writer leaves its finding alone,
    // rather than closing it for the end of the refresh to open again.
    h.sim.control.editPlot(twin, { name: 'renamed, same land' });
    expect((await h.refresh()).status).toBe('succeeded');
    expect(await current()).toEqual(before);
    const versions = await sql<{ n: number }>`
      select count(*)::int as n from eudr_findings where code = 'geometry_duplicate'`.execute(h.db);
    expect(versions.rows[0]!.n).toBe(2);
  });

  it('compares as the EU keeps the geometry: digits past the sixth decimal do not tell plots apart', async () => {
    const control = h.sim.control;
    const ids = new Set(Object.values(odd));
    const other = [...control.plots()].map((p) => p.plot['id'] as string).find((id) => !ids.has(id) && id !== twin)!;
    const own = geometryOf(other);
    // The pair's polygon with one corner moved by less than the 6-decimal cut: another number sent,
    // the same position once cut.
    const ring = geometryOf(sameLand).coordinates[0]!.map((p) => [...p]);
    const lon = ring[1]![0]!;
    const moved = Number(`${truncate6(lon).toFixed(6)}${String(lon).endsWith('9') ? '1' : '9'}`);
    expect(moved).not.toBe(lon);
    expect(truncate6(moved)).toBe(truncate6(lon));
    ring[1]![0] = moved;
    control.editPlot(other, { geometry: { type: 'Polygon', coordinates: [ring] } as PolygonGeometry });
    expect((await h.refresh()).status).toBe('succeeded');
    const three = [sameLand, twin, other].sort();
    const rows = await current();
    expect(rows.map((r) => r.plot_id)).toEqual(three);
    for (const r of rows) {
      const rest = three.filter((id) => id !== r.plot_id);
      expect(r.message).toContain(`as 2 other plots (${rest[0]} and ${rest[1]})`);
      expect(r.details).toMatchObject({ other_plots: 2, plot_ids: rest });
    }

    // Drawn back: the third plot's finding closes, the pair's say one plot again.
    control.editPlot(other, { geometry: own });
    expect((await h.refresh()).status).toBe('succeeded');
    expect((await current()).map((r) => [r.plot_id, r.details.plot_ids])).toEqual(
      [
        [sameLand, [twin]],
        [twin, [sameLand]],
      ].sort((a, b) => ((a[0] as string) < (b[0] as string) ? -1 : 1)),
    );
    const closed = await sql<{ n: number }>`
      select count(*)::int as n from eudr_findings
      where code = 'geometry_duplicate' and plot_id = ${other} and not is_current and valid_to is not null`.execute(
      h.db,
    );
    expect(closed.rows[0]!.n).toBe(1);
  });

  it('closes both findings when one of the pair is redrawn', async () => {
    const ring = geometryOf(sameLand).coordinates[0]!.map(([lon, lat]) => [lon! + 0.001, lat!]);
    h.sim.control.editPlot(sameLand, { geometry: { type: 'Polygon', coordinates: [ring] } as PolygonGeometry });
    expect((await h.refresh()).status).toBe('succeeded');
    expect(await current()).toEqual([]);
    const history = await sql<{ plot_id: string; open: boolean }>`
      select plot_id, is_current or valid_to is null as open from eudr_findings
      where code = 'geometry_duplicate' and plot_id = any(${[sameLand, twin]}::text[])`.execute(h.db);
    expect(history.rows.length).toBeGreaterThanOrEqual(2);
    expect(history.rows.every((r) => !r.open)).toBe(true);
  });

  it('closes both findings when one of a pair is deleted at the source', async () => {
    const control = h.sim.control;
    const ids = new Set(Object.values(odd));
    const copy = [...control.plots()]
      .map((p) => p.plot['id'] as string)
      .filter((id) => !ids.has(id) && id !== twin)
      .at(-1)!;
    control.editPlot(copy, { geometry: geometryOf(twin) });
    expect((await h.refresh()).status).toBe('succeeded');
    expect((await current()).map((r) => r.plot_id)).toEqual([copy, twin].sort());

    control.removePlot(copy);
    expect((await h.refresh()).status).toBe('succeeded');
    expect(await current()).toEqual([]);
    const gone = await sql<{ n: number }>`
      select count(*)::int as n from plots where id = ${copy} and deleted_at is not null`.execute(h.db);
    expect(gone.rows[0]!.n).toBe(1);
  });

  it('tells collections apart by their members, and finds the same line under two ids', async () => {
    const control = h.sim.control;
    const ids = new Set(Object.values(odd));
    const [a, b, c, d] = [...control.plots()]
      .map((p) => p.plot['id'] as string)
      .filter((id) => !ids.has(id) && id !== twin)
      .slice(0, 4) as [string, string, string, string];
    const point = (lon: number) => ({ type: 'Point' as const, coordinates: [lon, 5.5] });
    // Two collections of different points: nothing in common but their type.
    control.editPlot(a, { geometry: { type: 'GeometryCollection', geometries: [point(-3.1)] } });
    control.editPlot(b, { geometry: { type: 'GeometryCollection', geometries: [point(-3.2)] } });
    // The same line twice.
    const line = {
      type: 'LineString' as const,
      coordinates: [
        [-3.3, 5.5],
        [-3.31, 5.51],
      ],
    };
    control.editPlot(c, { geometry: line });
    control.editPlot(d, { geometry: line });
    expect((await h.refresh()).status).toBe('succeeded');
    expect((await current()).map((r) => r.plot_id)).toEqual([c, d].sort());
  });

  it('finds a pair whose corners straddle a line of the grid it looks for candidates on', async () => {
    const control = h.sim.control;
    const ids = new Set(Object.values(odd));
    const [a, b] = [...control.plots()]
      .map((p) => p.plot['id'] as string)
      .filter((id) => !ids.has(id) && id !== twin)
      .slice(4, 6) as [string, string];
    // West of Greenwich the cut rounds up: -47.10000049 is -47.100000 to the EU, as -47.1 is; the two
    // south-west corners lie in two cells of the unshifted 0.0001° grid (-471000 and -471001 ten-thousandths).
    const ring = (west: number) => [
      [west, -15.5],
      [-47.09, -15.5],
      [-47.09, -15.49],
      [-47.1, -15.49],
      [west, -15.5],
    ];
    control.editPlot(a, { geometry: { type: 'Polygon', coordinates: [ring(-47.1)] } });
    control.editPlot(b, { geometry: { type: 'Polygon', coordinates: [ring(-47.10000049)] } });
    expect((await h.refresh()).status).toBe('succeeded');
    expect((await current()).map((r) => r.plot_id)).toEqual(expect.arrayContaining([a, b]));
    const pair = (await current()).filter((r) => r.plot_id === a || r.plot_id === b);
    expect(pair.map((r) => r.details.plot_ids)).toEqual(a < b ? [[b], [a]] : [[a], [b]]);
  });
});
