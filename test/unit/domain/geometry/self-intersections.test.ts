import turfKinks from '@turf/kinks';
import { describe, expect, it } from 'vitest';
import { firstSelfIntersection, selfIntersections } from '../../../../domain/geometry/self-intersections.ts';
import { assessGeometry, type GeometryProblem } from '../../../../domain/geometry/geometry-quality.ts';
import { polygonValidityFindings } from '../../../../domain/eudr/polygon-validity.ts';
import type { Position } from '../../../../schema/upstream.ts';

/** What @turf/kinks reports for the same rings, taken as one MultiPolygon's (the refresh's shape). */
const turf = (rings: Position[][]) =>
  turfKinks({ type: 'MultiPolygon', coordinates: [rings] }).features.map((f) => f.geometry.coordinates);

/** A small deterministic generator, so a failure names a case that can be run again. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const close = (ring: Position[]): Position[] => [...ring, [...ring[0]!]];

/** Vertices scattered in a box: a ring that crosses itself many times. */
function scribble(next: () => number, n: number, grid?: number): Position[] {
  const at = () => (grid ? Math.floor(next() * grid) : -47 + next() / 100);
  return close(Array.from({ length: n }, () => [at(), at()]));
}

/** A star around a centre: a simple polygon (no crossings) with long and short edges mixed. */
function star(next: () => number, n: number, cx = -47.1, cy = -15.6, r = 0.01): Position[] {
  return close(
    Array.from({ length: n }, (_, i) => {
      const t = (i / n) * 2 * Math.PI;
      const radius = r * (0.3 + 0.7 * next());
      return [cx + radius * Math.cos(t), cy + radius * Math.sin(t)];
    }),
  );
}

describe('self-intersections: what @turf/kinks reports, without testing every pair of edges', () => {
  it('finds the same points, in the same order, for rings that cross themselves', () => {
    for (let seed = 1; seed <= 60; seed++) {
      const next = random(seed);
      // Up to 40 edges compared directly; past 200, through the tree.
      const rings = [scribble(next, seed % 3 === 0 ? 201 + Math.floor(next() * 100) : 3 + Math.floor(next() * 40))];
      expect(selfIntersections(rings), `seed ${seed}`).toEqual(turf(rings));
    }
  });

  it('finds nothing in simple polygons, as @turf/kinks', () => {
    for (let seed = 1; seed <= 20; seed++) {
      const rings = [star(random(seed), 50 + seed * 20)];
      expect(turf(rings)).toEqual([]);
      expect(selfIntersections(rings)).toEqual([]);
    }
  });

  it('tests holes against their shell and each other as @turf/kinks does (pairs at equal positions counted twice)', () => {
    for (let seed = 1; seed <= 40; seed++) {
      const next = random(1000 + seed);
      const big = seed % 2 === 0;
      const rings = [
        star(next, big ? 300 : 30),
        star(next, big ? 120 : 12, -47.1, -15.6, 0.004),
        scribble(next, 8),
        star(next, 9, -47.105, -15.6, 0.008),
      ];
      const expected = turf(rings);
      expect(selfIntersections(rings), `seed ${seed}`).toEqual(expected);
    }
  });

  it('agrees on grid coordinates: touching edges, shared vertices, collinear overlaps, repeated points', () => {
    for (let seed = 1; seed <= 80; seed++) {
      const next = random(5000 + seed);
      const vertices = seed % 4 === 0 ? 260 : 15;
      const rings = Array.from({ length: 1 + Math.floor(next() * 3) }, () =>
        scribble(next, 3 + Math.floor(next() * vertices), 6),
      );
      expect(selfIntersections(rings), `seed ${seed}`).toEqual(turf(rings));
    }
  });

  it('agrees on an unclosed ring, a bow-tie and degenerate rings', () => {
    const bowTie: Position[] = [
      [0, 0],
      [1, 1],
      [1, 0],
      [0, 1],
      [0, 0],
    ];
    expect(selfIntersections([bowTie])).toEqual([[0.5, 0.5]]);
    expect(selfIntersections([bowTie])).toEqual(turf([bowTie]));
    const open = bowTie.slice(0, -1);
    expect(selfIntersections([open])).toEqual(turf([open]));
    for (const rings of [
      [[]],
      [[[0, 0]]],
      [
        [
          [0, 0],
          [1, 1],
        ],
      ],
      [
        [
          [0, 0],
          [0, 0],
          [0, 0],
          [0, 0],
        ],
      ],
    ] as Position[][][])
      expect(selfIntersections(rings)).toEqual(turf(rings));
  });

  it('keeps a large ring to a few tests per edge (a crossing among thousands of vertices is still found)', () => {
    const ring = star(random(7), 4000);
    // Swap two far-apart vertices' neighbours: the ring now crosses itself.
    const broken = ring.map((p) => [...p]);
    [broken[100], broken[2100]] = [broken[2100]!, broken[100]!];
    const found = selfIntersections([broken]);
    expect(found.length).toBeGreaterThan(0);
    expect(found).toEqual(turf([broken]));
  });

  it('keeps only the first crossing and the count for a plot: the same as the full list, in memory of its own size', () => {
    for (let seed = 1; seed <= 30; seed++) {
      const next = random(500 + seed);
      const rings = [scribble(next, seed % 2 === 0 ? 250 + seed * 10 : 5 + seed)];
      const all = selfIntersections(rings);
      const first = firstSelfIntersection(rings);
      expect(first, `seed ${seed}`).toEqual(
        all.length === 0 ? null : { at: all[0], count: all.length, complete: true },
      );
    }
    expect(firstSelfIntersection([star(random(7), 400)])).toBeNull();
  });

  it('stops after its bound of overlapping pairs: a lower bound when it found crossings, "not checked" when none', () => {
    // A zigzag of 2,000 vertices whose edges all overlap: about two million pairs, crossing everywhere.
    const zigzag = close(Array.from({ length: 2_000 }, (_, i) => [i % 2 === 0 ? 0 : 1, (i * 7919) % 2_000]));
    const full = firstSelfIntersection([zigzag]);
    const bounded = firstSelfIntersection([zigzag], 10_000);
    expect(full).toMatchObject({ complete: true });
    expect(bounded).toMatchObject({ complete: false });
    expect((bounded as { count: number }).count).toBeGreaterThan(0);
    expect((bounded as { count: number }).count).toBeLessThan((full as { count: number }).count);
    // A line walked back and forth: every pair overlaps and none crosses (parallel edges never meet here).
    const walked = close(Array.from({ length: 3_000 }, (_, i) => [i % 2 === 0 ? 0 : 1 + i * 1e-9, 0]));
    expect(firstSelfIntersection([walked], 10_000)).toEqual({ complete: false });
  });

  it('says a plot whose crossings were not all counted, or not checked at all, is not valid, and why', () => {
    const zigzag = close(
      Array.from({ length: 60 }, (_, i) => [i % 2 === 0 ? -47 : -46.99, -15 + ((i * 7919) % 60) * 1e-5]),
    );
    const facts = assessGeometry({ type: 'Polygon', coordinates: [zigzag] });
    expect(facts.valid).toBe(false);
    expect(facts.problem).toMatchObject({ kind: 'self_intersection', complete: true });
    // What the refresh stores when the check stopped at its bound (MAX_PAIR_TESTS), with and without crossings found.
    const counted = facts.problem as Extract<GeometryProblem, { kind: 'self_intersection' }>;
    const partly = polygonValidityFindings({ ...facts, problem: { ...counted, complete: false } });
    expect(partly.find((f) => f.code === 'polygon_self_intersection')).toMatchObject({
      severity: 'blocking',
      message: expect.stringContaining(`and at least ${counted.count - 1} more point(s)`),
      details: { crossings: counted.count, crossingsAtLeast: true },
    });
    const unchecked = polygonValidityFindings({ ...facts, problem: { kind: 'too_complex', pairs: 20_000_000 } });
    expect(unchecked.map((f) => [f.code, f.severity])).toEqual([['polygon_too_complex_to_check', 'blocking']]);
  });
});
