import { afterAll, describe, expect, it } from 'vitest';
import area from '@turf/area';
import { startSimulator, type Simulator } from '../../simulator/index.ts';
import { PRODUCING_COUNTRIES } from '../../simulator/catalog.ts';
import { analysisIdFor } from '../../simulator/plot-factory.ts';

type Ring = number[][];
interface Plot {
  id: string;
  geometry: { type: string; coordinates: Ring[] };
  surfaceArea: number;
  name: string;
  [k: string]: unknown;
}

function segmentsCross(a: number[], b: number[], c: number[], d: number[]): boolean {
  const o = (p: number[], q: number[], r: number[]): number =>
    Math.sign(
      ((q[0] ?? 0) - (p[0] ?? 0)) * ((r[1] ?? 0) - (p[1] ?? 0)) -
        ((q[1] ?? 0) - (p[1] ?? 0)) * ((r[0] ?? 0) - (p[0] ?? 0)),
    );
  return o(a, b, c) * o(a, b, d) < 0 && o(c, d, a) * o(c, d, b) < 0;
}

function ringProblems(ring: Ring): string[] {
  const problems: string[] = [];
  const first = ring[0];
  const last = ring[ring.length - 1];
  if (!first || !last || first[0] !== last[0] || first[1] !== last[1]) problems.push('not closed');
  let twice = 0;
  for (let i = 0; i < ring.length - 1; i++) twice += ring[i]![0]! * ring[i + 1]![1]! - ring[i + 1]![0]! * ring[i]![1]!;
  if (twice <= 0) problems.push('not counter-clockwise');
  const n = ring.length - 1;
  for (let i = 0; i < n; i++) {
    for (let j = i + 2; j < n; j++) {
      if (i === 0 && j === n - 1) continue;
      if (segmentsCross(ring[i]!, ring[i + 1]!, ring[j]!, ring[j + 1]!)) problems.push('self-intersecting');
    }
  }
  return problems;
}

describe('seeded dataset', () => {
  const sims: Simulator[] = [];
  afterAll(async () => {
    await Promise.all(sims.map((s) => s.close()));
  });
  const start = async (opts: Parameters<typeof startSimulator>[0]): Promise<Simulator> => {
    const sim = await startSimulator({ port: 0, ...opts });
    sims.push(sim);
    return sim;
  };

  it('is identical for the same seed and different for another seed', async () => {
    const [a, b, c] = await Promise.all([
      start({ seed: 7, plots: 300 }),
      start({ seed: 7, plots: 300 }),
      start({ seed: 8, plots: 300 }),
    ]);
    const dump = (s: Simulator): string => JSON.stringify([...s.control.plots()]);
    expect(dump(a)).toBe(dump(b));
    expect(dump(a)).not.toBe(dump(c));
    expect(a.control.suppliers()).toEqual(b.control.suppliers());
  });

  it('has valid closed counter-clockwise polygons with surfaceArea matching the real area, except the odd records made otherwise', async () => {
    const sim = await start({ seed: 3, plots: 1500 });
    const odd = sim.control.oddRecords();
    let count = 0;
    for (const { plot } of sim.control.plots()) {
      const p = plot as Plot;
      count++;
      if (p.id === odd.pointOver4ha) {
        expect(p.geometry.type).toBe('Point');
        expect(p.surfaceArea).toBeGreaterThan(40_000);
        continue;
      }
      if (p.id === odd.pointZeroArea) {
        expect(p.geometry.type).toBe('Point');
        expect(p.surfaceArea).toBe(0);
        continue;
      }
      expect(p.geometry.type).toBe('Polygon');
      const problems = ringProblems(p.geometry.coordinates[0] ?? []);
      if (p.id === odd.withHole) {
        expect(problems).toEqual([]);
        expect(p.geometry.coordinates).toHaveLength(2);
        continue;
      }
      if (p.id === odd.swappedLonLat) {
        // Exchanging the axes mirrors the ring: it turns clockwise.
        expect(problems).toEqual(['not counter-clockwise']);
        continue;
      }
      if (p.id === odd.bowTie) {
        expect(problems).toContain('self-intersecting');
        continue;
      }
      if (p.id === odd.unclosedRing) {
        expect(problems).toContain('not closed');
        expect(p.geometry.coordinates[0]!.length).toBeGreaterThanOrEqual(4);
        continue;
      }
      expect(problems, `plot ${p.id}`).toEqual([]);
      if (p.id === odd.areaMismatch) {
        const real = area({ type: 'Feature', properties: {}, geometry: p.geometry as never });
        expect(p.surfaceArea / real).toBeCloseTo(3, 2);
        continue;
      }
      const ha = p.surfaceArea / 10_000;
      expect(ha).toBeGreaterThanOrEqual(0.5);
      expect(ha).toBeLessThanOrEqual(500);
      const real = area({ type: 'Feature', properties: {}, geometry: p.geometry as never });
      expect(Math.abs(real - p.surfaceArea) / p.surfaceArea).toBeLessThan(0.001);
    }
    expect(count).toBe(1500);
    expect(sim.control.countPlots()).toBe(1500);
  });

  it('draws every outer ring with the vertices asked for, still simple, closed and of the area it reports', async () => {
    const sim = await start({ seed: 3, plots: 200, vertices: 1500 });
    const odd = sim.control.oddRecords();
    const regular = [...sim.control.plots()]
      .map(({ plot }) => plot as Plot)
      .filter((p) => !Object.values(odd).includes(p.id) && p.geometry.type === 'Polygon');
    expect(regular.length).toBeGreaterThan(150);
    for (const p of regular.slice(0, 20)) {
      const ring = p.geometry.coordinates[0]!;
      expect(ring).toHaveLength(1501);
      expect(ringProblems(ring), `plot ${p.id}`).toEqual([]);
      const real = area({ type: 'Feature', properties: {}, geometry: p.geometry as never });
      expect(Math.abs(real - p.surfaceArea) / p.surfaceArea).toBeLessThan(0.001);
    }
    // The default dataset is unchanged by the option's existence: 5 to 9 vertices.
    const plain = await start({ seed: 3, plots: 200 });
    const sizes = new Set([...plain.control.plots()].map(({ plot }) => (plot as Plot).geometry.coordinates[0]?.length));
    for (const size of sizes) if (size !== undefined) expect(size).toBeLessThanOrEqual(10);
  });

  it('exposes odd records: empty objects, unicode name, no analyses, pending analysis', async () => {
    const sim = await start({ seed: 1, plots: 200 });
    const odd = sim.control.oddRecords();
    const empty = sim.control.getPlot(odd.emptyObjects ?? '');
    expect(empty?.['productionDateStart']).toEqual({});
    expect(empty?.['filename']).toEqual({});
    expect(sim.control.getPlot(odd.unicodeName ?? '')?.['name']).toBe('Café São João — 農園 🌱');
    const none = sim.control.getPlot(odd.noAnalyses ?? '');
    expect(none?.['mostRecentAnalysis']).toEqual({});
    expect(none?.['mostRecentAnalysesByType']).toEqual({});
    expect(none?.['riskLevel']).toBeNull();
    const pending = sim.control.getPlot(odd.pendingAnalysis ?? '');
    expect(
      (pending?.['mostRecentAnalysesByType'] as Record<string, { status: string }> | undefined)?.['EUFOROBS']?.status,
    ).toBe('PENDING');
    expect(pending?.['riskLevel']).toBeNull();
  });

  it('exposes the odd records the EUDR readiness checks were made for', async () => {
    const sim = await start({ seed: 1, plots: 2000 });
    const odd = sim.control.oddRecords();
    const plot = (kind: keyof typeof odd) => sim.control.getPlot(odd[kind] ?? '') as Plot;
    expect(plot('pointOver4ha').geometry.type).toBe('Point');
    expect(plot('pointOver4ha')['commodities']).not.toEqual(['cattle']);
    const coarse = plot('lowPrecision').geometry.coordinates[0]!.flat();
    expect(coarse.every((v) => Math.round(v * 1e4) / 1e4 === v)).toBe(true);
    expect(plot('beforeCutoff')['productionDateStart']).toBe('2019-04-01');
    const deforested = plot('deforested')['mostRecentAnalysis'] as { status: string; deforestedArea: number };
    expect(deforested.status).toBe('succeeded');
    expect(deforested.deforestedArea).toBeGreaterThan(0);
    expect(plot('noCountry')['countryCode']).toBe('');
    // The EU's own rules: a hole, a point of 0 m², latitude first, two corners within one 6-decimal step.
    expect(plot('withHole').geometry.coordinates).toHaveLength(2);
    expect(plot('pointZeroArea').geometry.type).toBe('Point');
    expect(plot('pointZeroArea')['surfaceArea']).toBe(0);
    const [lat, lon] = plot('swappedLonLat').geometry.coordinates[0]![0] as number[];
    const country = PRODUCING_COUNTRIES.find((c) => c.code === plot('swappedLonLat')['countryCode'])!;
    expect(lon).toBeGreaterThanOrEqual(country.box[0]);
    expect(lon).toBeLessThanOrEqual(country.box[1]);
    expect(lat).toBeGreaterThanOrEqual(country.box[2]);
    expect(lat).toBeLessThanOrEqual(country.box[3]);
    const [c1, c2] = plot('doubledCorner').geometry.coordinates[0] as number[][];
    expect(c1).not.toEqual(c2);
    expect(c1!.map((v) => Math.trunc(v * 1e6))).toEqual(c2!.map((v) => Math.trunc(v * 1e6)));
    // Two plots claim the same land, through different direct suppliers.
    const copy = plot('sameLand');
    const twins = [...sim.control.plots()].filter(
      ({ plot: p }) => JSON.stringify((p as Plot).geometry) === JSON.stringify(copy.geometry),
    );
    expect(twins.length).toBe(2);
    const [a, b] = twins.map((t) => t.supplierIds);
    expect(a!.length).toBeGreaterThan(0);
    expect(b!.length).toBeGreaterThan(0);
    expect(a!.some((s) => b!.includes(s))).toBe(false);
  });

  it('follows an explicit layout, with shared upstream plots reachable through two suppliers', async () => {
    const sim = await start({
      layout: {
        ownPlots: 3,
        suppliers: [{ plots: 500 }, { plots: 1000, upstream: [20] }, { plots: 0 }],
        shared: [{ plots: 10, suppliers: [0, 1] }],
      },
    });
    const [s0, s1, s2] = sim.control.suppliers();
    expect(s0?.plotsCount).toBe(510);
    expect(s1?.plotsCount).toBe(1030);
    expect(s2?.plotsCount).toBe(0);
    expect(sim.control.countPlots()).toBe(3 + 500 + 1000 + 20 + 10);
    const shared = [...sim.control.plots()].filter((p) => p.supplierIds.length === 2);
    expect(shared).toHaveLength(10);
    expect(shared[0]?.supplierIds.sort()).toEqual([s0?.id, s1?.id].sort());
  });

  it('applies mutations: edit, new analysis, risk status, removal, disconnect, reset', async () => {
    const sim = await start({ layout: { ownPlots: 0, suppliers: [{ plots: 5 }, { plots: 5 }] } });
    const [first] = [...sim.control.plots()];
    const id = first?.plot['id'] as string;
    expect(sim.control.editPlot(id, { name: 'Renamed', commodities: ['soya'] })['name']).toBe('Renamed');
    const analysed = sim.control.addAnalysis(id, { type: 'PRECISION', status: 'succeeded', riskOfDeforestation: 0.9 });
    expect((analysed['mostRecentAnalysis'] as { type: string }).type).toBe('PRECISION');
    expect(analysed['riskLevel']).toBe('high');
    expect(sim.control.setRiskStatus(id, 'EUDR_COMPLIANT', 'low')['riskAssessmentStatus']).toBe('EUDR_COMPLIANT');
    sim.control.removePlot(id);
    expect(sim.control.countPlots()).toBe(9);
    expect(sim.control.getPlot(id)).toBeUndefined();
    sim.control.disconnectSupplier(sim.control.suppliers()[1]?.id ?? '');
    expect(sim.control.countPlots()).toBe(4);
    sim.control.reset();
    expect(sim.control.countPlots()).toBe(10);
    expect(sim.control.getPlot(id)?.['name']).not.toBe('Renamed');
  });
});

describe('generated ids', () => {
  it('never gives two analyses one id: 600,000 analyses, 600,000 ids (a 32-bit hash repeated 16)', () => {
    const ids = new Set<string>();
    for (let g = 0; g < 300_000; g++)
      for (const type of ['EUFOROBS', 'PRECISION']) ids.add(analysisIdFor(3434, g, type));
    expect(ids.size).toBe(600_000);
    expect(
      [...ids].every((id) => /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(id)),
    ).toBe(true);
  });
});
