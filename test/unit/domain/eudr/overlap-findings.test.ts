import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  MAX_LISTED,
  beyondTolerance,
  compareOthers,
  newOverlapTally,
  overlapFinding,
  tallyOverlap,
  type OverlapOther,
  overlapCode,
  overlapFindings,
  severityOf,
  toleranceM2,
  type Claimants,
  type OverlapPair,
} from '../../../../domain/eudr/overlap-findings.ts';
import { describeSpatialMode, type SpatialMode } from '../../../../warehouse/spatial/mode.ts';

const HA = 10_000;
const of = (suppliers: string[], own = false): Claimants => ({ suppliers, own });

describe('the overlap tolerance', () => {
  it('is what a 5 m border error explains: 10 m × √(smaller plot), 10 % of 1 ha, 1 % of 100 ha', () => {
    expect(toleranceM2(1 * HA)).toBeCloseTo(1_000);
    expect(toleranceM2(100 * HA)).toBeCloseTo(10_000);
    expect(toleranceM2(0)).toBe(0);
    expect(toleranceM2(-5)).toBe(0);
  });

  it('counts an overlap beyond it, measured against the smaller plot', () => {
    const pair = (overlapM2: number, aM2: number, bM2: number): OverlapPair => ({
      a: 'a',
      b: 'b',
      overlapM2,
      aM2,
      bM2,
    });
    expect(beyondTolerance(pair(1_001, 1 * HA, 500 * HA))).toBe(true);
    expect(beyondTolerance(pair(999, 500 * HA, 1 * HA))).toBe(false);
    // Two copies of one polygon always count; plots that only touch never do.
    expect(beyondTolerance(pair(0.5 * HA, 0.5 * HA, 0.5 * HA))).toBe(true);
    expect(beyondTolerance(pair(0, 2 * HA, 2 * HA))).toBe(false);
  });
});

describe('whose land it is', () => {
  it('is the same supplier when the plots share a live supplier, or both are the business’s own', () => {
    expect(overlapCode(of(['s1', 's2']), of(['s2']))).toBe('overlap_same_supplier');
    expect(overlapCode(of([], true), of([], true))).toBe('overlap_same_supplier');
    expect(overlapCode(of(['s1']), of(['s2']))).toBe('overlap_other_supplier');
    expect(overlapCode(of([], true), of(['s1']))).toBe('overlap_other_supplier');
  });

  it('blocks land claimed by two suppliers, warns about an overlap within one', () => {
    expect(severityOf('overlap_other_supplier')).toBe('blocking');
    expect(severityOf('overlap_same_supplier')).toBe('warning');
  });
});

describe('overlap findings', () => {
  const claimants: Record<string, Claimants> = {
    A: of(['s1']),
    B: of(['s2']),
    C: of(['s1']),
    D: of(['s3']),
  };
  const claimantsOf = (id: string) => claimants[id]!;

  it('gives each plot one finding per code, naming the other plots and the hectares', () => {
    const pairs: OverlapPair[] = [
      { a: 'A', b: 'B', overlapM2: 2 * HA, aM2: 2 * HA, bM2: 2 * HA },
      { a: 'A', b: 'C', overlapM2: 0.5 * HA, aM2: 2 * HA, bM2: 3 * HA },
      { a: 'B', b: 'D', overlapM2: 100, aM2: 2 * HA, bM2: 50 * HA }, // a sliver: within the tolerance
    ];
    const found = overlapFindings(pairs, claimantsOf);
    expect(found.map((f) => [f.plot_id, f.code, f.severity])).toEqual([
      ['A', 'overlap_same_supplier', 'warning'],
      ['A', 'overlap_other_supplier', 'blocking'],
      ['B', 'overlap_other_supplier', 'blocking'],
      ['C', 'overlap_same_supplier', 'warning'],
    ]);
    const b = found.find((f) => f.plot_id === 'B')!;
    expect(b.message).toBe('Overlaps plot A of another supplier by 2.00 ha: the same land is claimed twice.');
    expect(JSON.parse(b.details)).toEqual({
      overlapping_plots: 1,
      overlap_ha: 2,
      share_of_plot: 1,
      tolerance: "an overlap counts beyond 10 m × √(smaller plot's m²) (docs/postgis.md)",
      plots: [{ plot_id: 'A', overlap_ha: 2, supplier_business_ids: ['s1'], own: false }],
    });
    expect(found.find((f) => f.plot_id === 'C')!.message).toBe(
      'Overlaps plot A of the same supplier by 0.50 ha: probably one field entered twice; the hectares are counted twice.',
    );
  });

  it('lists several overlapping plots largest first, and is the same text for the same overlaps', () => {
    const pairs: OverlapPair[] = [
      { a: 'A', b: 'B', overlapM2: 0.3 * HA, aM2: 2 * HA, bM2: 2 * HA },
      { a: 'A', b: 'D', overlapM2: 1.2 * HA, aM2: 2 * HA, bM2: 2 * HA },
    ];
    const [a] = overlapFindings(pairs, claimantsOf);
    expect(a!.message).toBe(
      'Overlaps 2 plots of another supplier by 1.50 ha (the largest: plot D, 1.20 ha): the same land is claimed twice.',
    );
    expect(JSON.parse(a!.details).plots.map((p: { plot_id: string }) => p.plot_id)).toEqual(['D', 'B']);
    expect(overlapFindings([...pairs].reverse(), claimantsOf)).toEqual(overlapFindings(pairs, claimantsOf));
  });

  it('finds nothing without pairs beyond the tolerance, nor in a plot paired with itself', () => {
    expect(overlapFindings([], claimantsOf)).toEqual([]);
    expect(overlapFindings([{ a: 'A', b: 'A', overlapM2: HA, aM2: HA, bM2: HA }], claimantsOf)).toEqual([]);
  });
});

describe('a plot’s tally of its overlaps', () => {
  const others = (n: number): OverlapOther[] =>
    Array.from({ length: n }, (_, i) => ({
      plot_id: `p${String(i).padStart(4, '0')}`,
      // Ties in the rounded hectares, listed by id.
      overlap_m2: 1_000 + 1_000 * (i % 7) + i / 10,
      claimants: of([`s${i % 3}`]),
    }));

  it('keeps MAX_LISTED others in the listing order whatever order they come in, and counts them all', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 120 }), fc.integer(), (n, seed) => {
        const all = others(n);
        const shuffled = [...all].sort(
          (x, y) => ((x.overlap_m2 * 7919 + seed) % 13) - ((y.overlap_m2 * 7919 + seed) % 13),
        );
        const tally = newOverlapTally(3 * HA);
        for (const o of shuffled) tallyOverlap(tally, o);
        expect(tally.count).toBe(n);
        expect(tally.listed).toEqual([...all].sort(compareOthers).slice(0, MAX_LISTED));
      }),
    );
  });

  it('gives the finding overlapFindings gives for the same pairs when tallied in the listing order', () => {
    const plot = 'x';
    const list = others(300);
    const pairs: OverlapPair[] = list.map((o) => ({
      a: plot,
      b: o.plot_id,
      overlapM2: o.overlap_m2,
      aM2: 0.5 * HA,
      bM2: 0.5 * HA,
    }));
    const claimantsOf = (id: string) =>
      id === plot ? of(['s0', 's1', 's2']) : list.find((o) => o.plot_id === id)!.claimants;
    const tally = newOverlapTally(0.5 * HA);
    for (const o of [...list].sort(compareOthers)) tallyOverlap(tally, o);
    const found = overlapFindings(pairs, claimantsOf).find((f) => f.plot_id === plot);
    expect(overlapFinding(plot, 'overlap_same_supplier', tally)).toEqual(found);
    expect(JSON.parse(found!.details)).toMatchObject({ overlapping_plots: 300 });
    expect(JSON.parse(found!.details).plots).toHaveLength(MAX_LISTED);
  });
});

describe('the spatial mode in one line', () => {
  const base: SpatialMode = {
    mode: 'postgis',
    version: '3.3.2',
    reason: null,
    overlapsCheckedAt: null,
    overlapsError: null,
  };
  it('names PostGIS and its version, or says why there is none', () => {
    expect(describeSpatialMode(base)).toBe('PostGIS 3.3 — spatial columns and overlap checks on');
    expect(describeSpatialMode({ ...base, overlapsError: 'boom' })).toBe(
      'PostGIS 3.3 — spatial columns and overlap checks on; the last overlap check failed (boom)',
    );
    expect(
      describeSpatialMode({ ...base, mode: 'none', version: null, reason: 'the postgis extension is not installed' }),
    ).toBe('no PostGIS — GeoJSON only; overlap check not run (the postgis extension is not installed)');
  });
});
