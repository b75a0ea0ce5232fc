import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { startWorkerHarness, type WorkerHarness } from '../support/worker-harness.ts';
import { OVERLAP_CODES } from '../../domain/eudr/overlap-findings.ts';
import type { PolygonGeometry } from '../../simulator/geometry.ts';
import { ddsyncEnv, runDdsync } from '../support/processes.ts';
import { expectSummariesAgree } from '../support/summary-oracles.ts';
import { plotGroups } from '../support/simulator-plots.ts';

// Two suppliers, no plot shared between them: every overlap below is made by the test.
const layout = { ownPlots: 3, suppliers: [{ plots: 30 }, { plots: 25 }] };

const shifted = (g: PolygonGeometry, dLon: number): PolygonGeometry => ({
  type: 'Polygon',
  coordinates: g.coordinates.map((ring) => ring.map(([lon, lat]) => [lon! + dLon, lat!])),
});

interface Finding {
  plot_id: string;
  code: string;
  severity: string;
  details: { plots: Array<{ plot_id: string; overlap_ha: number }> };
}

describe('a refresh on a warehouse with PostGIS', () => {
  let h: WorkerHarness;
  beforeAll(async () => {
    h = await startWorkerHarness({ seed: 11, layout }, 'spatial');
    expect((await h.refresh()).status).toBe('succeeded');
  });
  afterAll(() => h?.close());

  const currentOverlaps = async (ids?: string[]) =>
    (
      await sql<Finding>`
        select plot_id, code, severity, details from eudr_findings
        where is_current and code = any(${[...OVERLAP_CODES]}::text[])
          and (${ids ?? null}::text[] is null or plot_id = any(${ids ?? null}::text[]))
        order by plot_id, code`.execute(h.db)
    ).rows;
  const findingRows = async () =>
    (await sql<{ n: number }>`select count(*)::int as n from eudr_findings`.execute(h.db)).rows[0]!.n;

  it('fills geom for usable shapes and leaves it null with the reason for a bow-tie, without failing', async () => {
    const geoms = await sql<{ id: string; geom: string | null; geom_issue: string | null; valid: boolean }>`
      select id, ST_GeometryType(geom) as geom, geom_issue, geometry_valid as valid from plots order by id`.execute(
      h.db,
    );
    expect(geoms.rows.length).toBe(h.sim.control.countPlots());
    const bowTie = h.sim.control.oddRecords().bowTie!;
    expect(geoms.rows.find((r) => r.id === bowTie)).toEqual({
      id: bowTie,
      geom: null,
      geom_issue: expect.stringMatching(/^invalid geometry: Self-intersection at POINT/),
      valid: false,
    });
    // Every plot whose polygon ddsync found valid has its geometry; every null one says why.
    expect(geoms.rows.filter((r) => r.valid && r.geom === null)).toEqual([]);
    expect(geoms.rows.filter((r) => r.geom === null && !r.geom_issue)).toEqual([]);
    // Analyses reporting deforestation get its geometry too.
    const deforested = await sql<{ sent: number; geom: number }>`
      select count(*) filter (where deforested_geometry <> '{}'::jsonb)::int as sent,
             count(deforested_geom)::int as geom from analyses`.execute(h.db);
    expect(deforested.rows[0]!.sent).toBeGreaterThan(0);
    expect(deforested.rows[0]!.geom).toBe(deforested.rows[0]!.sent);
    const checked = await sql<{ on: boolean }>`select eudr_overlap_checked() as on`.execute(h.db);
    expect(checked.rows[0]!.on).toBe(true);
    const readiness = await sql<{ n: number }>`
      select count(*)::int as n from bi_eudr_plot_readiness where not overlap_checked`.execute(h.db);
    expect(readiness.rows[0]!.n).toBe(0);
  });

  it('finds the same land claimed twice, keeps the findings through an unchanged refresh, and closes them when the overlap goes', async () => {
    const { control } = h.sim;
    const [s0, s1] = control.suppliers();
    const { onlyOf } = plotGroups(control, { exceptOdd: true });
    const [a, c] = onlyOf(s0!.id).slice(-2) as [string, string];
    const b = onlyOf(s1!.id).at(-1)!;
    const geometryOf = (id: string) => control.getPlot(id)!['geometry'] as PolygonGeometry;
    const aShape = geometryOf(a);
    const [bShape, cShape] = [geometryOf(b), geometryOf(c)];
    // B (another supplier) is a copy of A; C (A's supplier) is A moved by a fraction of its width.
    const lons = aShape.coordinates[0]!.map(([lon]) => lon!);
    const width = Math.max(...lons) - Math.min(...lons);
    control.editPlot(b, { geometry: aShape });
    control.editPlot(c, { geometry: shifted(aShape, width * 0.2) });
    // And a shape PostGIS refuses, to show the refresh goes on.
    const d = onlyOf(s1!.id).at(-2)!;
    const dRing = geometryOf(d).coordinates[0]!;
    const crossed = [dRing[0]!, dRing[2]!, dRing[1]!, ...dRing.slice(3)];
    control.editPlot(d, { geometry: { type: 'Polygon', coordinates: [crossed] } });

    expect((await h.refresh()).status).toBe('succeeded');
    const found = await currentOverlaps([a, b, c]);
    expect(found.map((f) => [f.plot_id, f.code, f.severity])).toEqual(
      [
        [a, 'overlap_same_supplier', 'warning'],
        [a, 'overlap_other_supplier', 'blocking'],
        [b, 'overlap_other_supplier', 'blocking'],
        [c, 'overlap_same_supplier', 'warning'],
        [c, 'overlap_other_supplier', 'blocking'],
      ].sort((x, y) => (x[0]! + x[1]! < y[0]! + y[1]! ? -1 : 1)),
    );
    const bFinding = found.find((f) => f.plot_id === b)!;
    expect(bFinding.details.plots.map((p) => p.plot_id).sort()).toEqual([a, c].sort());
    expect(bFinding.details.plots.find((p) => p.plot_id === a)!.overlap_ha).toBeGreaterThan(0);
    const ready = await sql<{ plot_id: string; ready: boolean; overlap_checked: boolean }>`
      select plot_id, ready, overlap_checked from bi_eudr_plot_readiness where plot_id = ${b}`.execute(h.db);
    expect(ready.rows).toEqual([{ plot_id: b, ready: false, overlap_checked: true }]);
    const dGeom = await sql<{ geom: string | null; issue: string | null }>`
      select ST_AsText(geom) as geom, geom_issue as issue from plots where id = ${d}`.execute(h.db);
    expect(dGeom.rows[0]).toEqual({ geom: null, issue: expect.stringMatching(/^invalid geometry: Self-intersection/) });

    // Nothing changed: the check does not run, and no finding is written.
    const before = await findingRows();
    const checkedAt = await sql<{ at: string }>`select overlaps_checked_at::text as at from spatial_state`.execute(
      h.db,
    );
    expect((await h.refresh()).status).toBe('succeeded');
    expect(await findingRows()).toBe(before);
    expect(
      (await sql<{ at: string }>`select overlaps_checked_at::text as at from spatial_state`.execute(h.db)).rows,
    ).toEqual(checkedAt.rows);

    // B moves back, C too: the overlap findings close, with their history kept.
    control.editPlot(b, { geometry: bShape });
    control.editPlot(c, { geometry: cShape });
    expect((await h.refresh()).status).toBe('succeeded');
    expect(await currentOverlaps([a, b, c])).toEqual([]);
    const history = await sql<{ plot_id: string; code: string; closed: boolean }>`
      select plot_id, code, valid_to is not null and not is_current as closed from eudr_findings
      where plot_id = any(${[a, b, c]}::text[]) and code = any(${[...OVERLAP_CODES]}::text[]) order by plot_id, code`.execute(
      h.db,
    );
    expect(history.rows).toHaveLength(5);
    expect(history.rows.every((r) => r.closed)).toBe(true);
  });

  it('keeps a plot sent as a line as a PostGIS line, and the overlap check, for land, passes over it', async () => {
    const { control } = h.sim;
    const odd = new Set(Object.values(control.oddRecords()));
    const ids = [...control.plots()].map((p) => p.plot['id'] as string).filter((id) => !odd.has(id));
    const [land, lined] = ids.slice(0, 2) as [string, string];
    const ring = (control.getPlot(land)!['geometry'] as PolygonGeometry).coordinates[0]!;
    // Its outline drawn as a line straight across another plot's land.
    control.editPlot(lined, { geometry: { type: 'LineString', coordinates: [ring[0]!, ring[2]!] } });
    expect((await h.refresh()).status).toBe('succeeded');
    const row = await sql<{ type: string | null; issue: string | null }>`
      select ST_GeometryType(geom) as type, geom_issue as issue from plots where id = ${lined}`.execute(h.db);
    expect(row.rows[0]).toEqual({ type: 'ST_LineString', issue: null });
    expect(await currentOverlaps([land, lined])).toEqual([]);
    const codes = await sql<{ code: string }>`
      select code from eudr_findings where plot_id = ${lined} and is_current order by code`.execute(h.db);
    expect(codes.rows.map((r) => r.code)).toContain('geometry_type_refused');
  });

  it("flags the simulator's copy of another supplier's plot, when the simulator holds one", async () => {
    const odd = h.sim.control.oddRecords() as Record<string, string | undefined>;
    const sameLand = odd['sameLand'];
    // The readiness checks' odd records (docs/simulator.md) include a plot that copies another supplier's.
    if (sameLand === undefined) return;
    const found = await currentOverlaps([sameLand]);
    expect(found.map((f) => [f.code, f.severity])).toEqual([['overlap_other_supplier', 'blocking']]);
  });

  it('is what ddsync config says', async () => {
    const run = runDdsync(
      ['config'],
      ddsyncEnv({ upstreamUrl: h.sim.url, databaseUrl: h.databaseUrl, taskQueue: h.temporal.taskQueue }),
    );
    expect(await run.exited, run.output()).toBe(0);
    expect(run.output()).toMatch(/\nwarehouse spatial mode +PostGIS 3\.\d+ — spatial columns and overlap checks on\n/);
  });
});

// The end of a refresh makes the summaries while the overlap check runs (activities/refresh/activities.ts
// finishRefresh): the findings the check writes must still reach them.
describe('the summaries beside the overlap check', () => {
  let h: WorkerHarness;
  beforeAll(async () => {
    h = await startWorkerHarness({ seed: 12, layout }, 'spatial_summaries');
  });
  afterAll(() => h?.close());

  it('count a plot the check blocks as not ready, from a first load (the making fills while the check runs) until the overlap goes', async () => {
    const { control } = h.sim;
    const [s0, s1] = control.suppliers();
    const { onlyOf } = plotGroups(control, { exceptOdd: true });
    const a = onlyOf(s0!.id).at(-1)!;
    const b = onlyOf(s1!.id).at(-1)!;
    const bShape = control.getPlot(b)!['geometry'];
    // Before the first load: B (another supplier's) is a copy of A.
    control.editPlot(b, { geometry: control.getPlot(a)!['geometry'] as PolygonGeometry });
    expect((await h.refresh()).status).toBe('succeeded');
    const blocked = await sql<{ code: string }>`
      select code from eudr_findings where plot_id = ${b} and is_current and severity = 'blocking'`.execute(h.db);
    expect(blocked.rows.map((r) => r.code)).toContain('overlap_other_supplier');
    const ready = await sql<{ ready: boolean }>`select ready from bi_eudr_plot_readiness where plot_id = ${b}`.execute(
      h.db,
    );
    expect(ready.rows).toEqual([{ ready: false }]);
    await expectSummariesAgree(h.db, 'after a first load that found an overlap');

    control.editPlot(b, { geometry: bShape as PolygonGeometry });
    expect((await h.refresh()).status).toBe('succeeded');
    await expectSummariesAgree(h.db, 'after the overlap went');
  });
});
