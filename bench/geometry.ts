// The crossing check of a plot's polygon (assessGeometry's costliest step on a detailed boundary):
// @turf/kinks, which tests every pair of edges, against selfIntersections, which pairs only edges
// whose boxes overlap, on the same simple star polygons in the same run, from the simulator's 5-9
// vertices to a surveyed boundary's thousands. Both must report the same crossings (none here; the
// equivalence on crossing rings is tested in test/unit/domain/geometry/self-intersections.test.ts).
// Prints figures and ratios only; never passes or fails on time.
// Usage: npm run bench:geometry -- [--runs 5] [--json]
import turfKinks from '@turf/kinks';
import { selfIntersections } from '../domain/geometry/self-intersections.ts';
import type { Position } from '../schema/upstream.ts';
import { median, positiveFlag } from './support/figures.ts';

const runs = positiveFlag('runs', 5);
const SIZES = [7, 100, 500, 1_000, 2_500, 5_000];

/**
 * A simple polygon of `vertices` around a centre: a drawn boundary (radius varying slowly, as a field's
 * edge does, with a little jitter) or a star of long spikes (radius jumping from vertex to vertex: many
 * edges' boxes overlap, the worst case for any pruning by boxes).
 */
function polygon(vertices: number, shape: 'boundary' | 'spikes'): Position[] {
  const ring: Position[] = Array.from({ length: vertices }, (_, i) => {
    const t = (i / vertices) * 2 * Math.PI;
    const wobble =
      shape === 'spikes' ? 0.8 + 0.2 * Math.sin(i * 7.3) : 1 + 0.03 * Math.sin(t * 5) + 0.002 * Math.sin(i * 7.3);
    return [-47.1 + 0.01 * wobble * Math.cos(t), -15.6 + 0.01 * wobble * Math.sin(t)];
  });
  return [...ring, [...ring[0]!]];
}

/** Median ms per polygon of `check` over `runs` runs, each over enough polygons to last a few ms. */
function timed(check: () => number, polygons: number): number {
  const times: number[] = [];
  for (let r = 0; r < runs; r++) {
    const t = performance.now();
    let found = 0;
    for (let i = 0; i < polygons; i++) found += check();
    times.push((performance.now() - t) / polygons);
    if (found !== 0) throw new Error(`a simple polygon was reported crossing itself ${found} times`);
  }
  return median(times);
}

const rows = (['boundary', 'spikes'] as const).flatMap((shape) =>
  SIZES.map((vertices) => {
    const ring = polygon(vertices, shape);
    const polygons = Math.max(1, Math.round(200_000 / (vertices * vertices)));
    const turfMs = timed(() => turfKinks({ type: 'MultiPolygon', coordinates: [[ring]] }).features.length, polygons);
    const ownMs = timed(() => selfIntersections([ring]).length, Math.max(polygons, 20));
    return { shape, vertices, turfMs, ownMs, ratio: turfMs / ownMs };
  }),
);
console.log(`geometry: crossing check of one simple polygon, median ms of ${runs} runs (node ${process.version})`);
console.log('shape      vertices   @turf/kinks   selfIntersections   turf / own   a page of 500: turf s / own s');
for (const r of rows)
  console.log(
    `${r.shape.padEnd(8)} ${String(r.vertices).padStart(10)}   ${r.turfMs.toFixed(3).padStart(11)}   ${r.ownMs.toFixed(3).padStart(17)}   ${r.ratio.toFixed(1).padStart(9)}x   ${((r.turfMs * 500) / 1000).toFixed(2)} / ${((r.ownMs * 500) / 1000).toFixed(2)}`,
  );
if (process.argv.includes('--json')) console.log(JSON.stringify({ runs, rows }));
