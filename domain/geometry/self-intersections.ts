import Flatbush from 'flatbush';
import type { Position } from '../../schema/upstream.ts';

/**
 * Where a shape's rings cross themselves or one another: the points @turf/kinks reports for the same
 * rings, in the same order and as many (so a plot's finding, its first crossing and their count, is
 * what it was), without testing every pair of edges.
 *
 * Why: @turf/kinks tests each edge against every other, n² pairs. A plot drawn from a survey or a
 * cadastre has hundreds to thousands of vertices: at 2,500 vertices that is 60–70 ms per plot, half a
 * minute per page of 500 on the worker's one thread (bench:geometry). Two edges can only cross where
 * their bounding boxes overlap, so a shape of more than 200 edges is put in a static R-tree
 * (flatbush) and each edge is tested only against the edges whose boxes overlap its own: a handful
 * for a drawn boundary, O(n log n) in all; far more only for a shape of long criss-crossing spikes.
 *
 * How the result stays the same: every pair whose boxes overlap (touching counts) is tested in the
 * order, orientation and arithmetic @turf/kinks uses: rings in order, each ring against every ring
 * including itself; within a ring, an edge against the later edges except its neighbours (and the
 * first against the last of a closed ring); between two rings, edge i of the first against edges i
 * and later of the second, in both orders of the rings (so an edge pair at equal positions is tested,
 * and counted, twice). A pair whose boxes do not overlap cannot cross; @turf/kinks could only report
 * one through a rounding error on nearly parallel edges, a crossing that is not there.
 */
export function selfIntersections(rings: ReadonlyArray<ReadonlyArray<Position>>): Array<[number, number]> {
  // (Up to MAX_PAIR_TESTS pairs: for tests and benchmarks against @turf/kinks; plots use firstSelfIntersection.)
  const found: Array<{ test: Visit; point: [number, number] }> = [];
  forEachCrossing(rings, MAX_PAIR_TESTS, (test, point) => found.push({ test: { ...test }, point }));
  found.sort((x, y) => visitOrder(x.test, y.test));
  return found.map((f) => f.point);
}

/**
 * The first point selfIntersections would list and how many it would list, holding only those two:
 * what a plot's finding needs. A degenerate ring (600,000 vertices a few millimetres apart, rounded to
 * 7 decimals so that it zigzags) crosses itself hundreds of thousands of times among hundreds of
 * millions of overlapping pairs: listing every test first and sorting them took 4.5 GB and 88 s here,
 * more than a worker's heap, so the page could never be written. Here memory stays that of the
 * edges' tree, whatever the shape. Time is bounded too: `complete` is false when the pairs whose
 * boxes overlap passed MAX_PAIR_TESTS, and then `count` is a lower bound and `at` the first of the
 * crossings found; null means none was found (in all pairs, or in the first MAX_PAIR_TESTS).
 */
export function firstSelfIntersection(
  rings: ReadonlyArray<ReadonlyArray<Position>>,
  maxPairs = MAX_PAIR_TESTS,
): { at: [number, number]; count: number; complete: boolean } | { complete: false } | null {
  let first: { test: Visit; point: [number, number] } | null = null;
  let count = 0;
  const complete = forEachCrossing(rings, maxPairs, (test, point) => {
    count += 1;
    if (first === null || visitOrder(test, first.test) < 0) first = { test: { ...test }, point };
  });
  const found = first as { test: Visit; point: [number, number] } | null;
  if (found === null) return complete ? null : { complete: false };
  return { at: found.point, count, complete };
}

/**
 * Pairs of edges whose boxes overlap, at most, tested in one shape: a few seconds of one core here
 * (50 million took 14 s on a loaded machine). A drawn boundary has a handful per edge (a 16 MB ring of
 * 640,000 vertices a few million); only a ring whose edges' boxes overlap by the hundred (a zigzag,
 * criss-crossing spikes, a line walked back and forth) comes near it. Past it the shape is not
 * counted further (firstSelfIntersection says so), so no plot holds a page for minutes.
 */
export const MAX_PAIR_TESTS = 20_000_000;

/** @turf/kinks's order of its tests: rings in order, then edges. */
function visitOrder(x: Visit, y: Visit): number {
  return x.ring1 - y.ring1 || x.ring2 - y.ring2 || x.edge1 - y.edge1 || x.edge2 - y.edge2;
}

/**
 * Calls `found` for every test @turf/kinks makes that finds a crossing, in no particular order (`test`
 * is reused: copy it to keep it). Returns false when it stopped after `maxPairs` overlapping pairs.
 */
function forEachCrossing(
  rings: ReadonlyArray<ReadonlyArray<Position>>,
  maxPairs: number,
  found: (test: Readonly<Visit>, point: [number, number]) => void,
): boolean {
  const edges = edgesOf(rings);
  const test: Visit = { ring1: 0, edge1: 0, ring2: 0, edge2: 0 };
  const check = (ring1: number, edge1: number, ring2: number, edge2: number) => {
    const point = crossing(rings[ring1]!, edge1, rings[ring2]!, edge2);
    if (!point) return;
    test.ring1 = ring1;
    test.edge1 = edge1;
    test.ring2 = ring2;
    test.edge2 = edge2;
    found(test, point);
  };
  return forEachOverlappingPair(edges, maxPairs, (p, q) => testsOf(rings, edges, p, q, check));
}

/** Up to this many edges, every pair's boxes are compared directly: cheaper than building a tree (22 against 124 µs at 100 edges; about even near 250). */
const DIRECT_PAIRS_UP_TO = 200;

/**
 * Calls `visit(p, q)` once for each pair of edges p < q whose boxes overlap or touch, up to
 * `maxPairs` of them; returns false when it stopped there.
 */
function forEachOverlappingPair(edges: Edges, maxPairs: number, visit: (p: number, q: number) => void): boolean {
  const { count, minX, minY, maxX, maxY } = edges;
  let pairs = 0;
  if (count <= DIRECT_PAIRS_UP_TO) {
    for (let p = 0; p < count; p++)
      for (let q = p + 1; q < count; q++)
        if (minX[q]! <= maxX[p]! && minX[p]! <= maxX[q]! && minY[q]! <= maxY[p]! && minY[p]! <= maxY[q]!) {
          if (++pairs > maxPairs) return false;
          visit(p, q);
        }
    return true;
  }
  const tree = new Flatbush(count);
  for (let e = 0; e < count; e++) tree.add(minX[e]!, minY[e]!, maxX[e]!, maxY[e]!);
  tree.finish();
  for (let p = 0; p < count; p++)
    for (const q of tree.search(minX[p]!, minY[p]!, maxX[p]!, maxY[p]!))
      if (q > p) {
        if (++pairs > maxPairs) return false;
        visit(p, q);
      }
  return true;
}

/** One test @turf/kinks makes: edge `edge1` of ring `ring1` against edge `edge2` of ring `ring2`. */
interface Visit {
  ring1: number;
  edge1: number;
  ring2: number;
  edge2: number;
}

interface Edges {
  count: number;
  ring: Int32Array;
  index: Int32Array;
  minX: Float64Array;
  maxX: Float64Array;
  minY: Float64Array;
  maxY: Float64Array;
}

function edgesOf(rings: ReadonlyArray<ReadonlyArray<Position>>): Edges {
  let count = 0;
  for (const ring of rings) count += Math.max(0, ring.length - 1);
  const edges: Edges = {
    count,
    ring: new Int32Array(count),
    index: new Int32Array(count),
    minX: new Float64Array(count),
    maxX: new Float64Array(count),
    minY: new Float64Array(count),
    maxY: new Float64Array(count),
  };
  let e = 0;
  for (let r = 0; r < rings.length; r++) {
    const ring = rings[r]!;
    for (let i = 0; i < ring.length - 1; i++, e++) {
      const [x1, y1] = ring[i] as [number, number];
      const [x2, y2] = ring[i + 1] as [number, number];
      edges.ring[e] = r;
      edges.index[e] = i;
      edges.minX[e] = Math.min(x1, x2);
      edges.maxX[e] = Math.max(x1, x2);
      edges.minY[e] = Math.min(y1, y2);
      edges.maxY[e] = Math.max(y1, y2);
    }
  }
  return edges;
}

/** The tests @turf/kinks makes of edges `p` and `q` (none, one or two), each passed to `check`. */
function testsOf(
  rings: ReadonlyArray<ReadonlyArray<Position>>,
  edges: Edges,
  p: number,
  q: number,
  check: (ring1: number, edge1: number, ring2: number, edge2: number) => void,
): void {
  const rp = edges.ring[p]!;
  const rq = edges.ring[q]!;
  const ip = edges.index[p]!;
  const iq = edges.index[q]!;
  if (rp === rq) {
    const first = Math.min(ip, iq);
    const second = Math.max(ip, iq);
    // Neighbours share a vertex, as do the first and last edge of a closed ring: not a crossing.
    if (second - first === 1) return;
    if (first === 0 && second === rings[rp]!.length - 2 && closed(rings[rp]!)) return;
    check(rp, first, rp, second);
    return;
  }
  if (iq >= ip) check(rp, ip, rq, iq);
  if (ip >= iq) check(rq, iq, rp, ip);
}

function closed(ring: ReadonlyArray<Position>): boolean {
  const first = ring[0]!;
  const last = ring[ring.length - 1]!;
  return first[0] === last[0] && first[1] === last[1];
}

/**
 * Where edge i of `a` meets edge k of `b`, ends included, or null (parallel edges never meet here).
 * The two lines' parameters solved by Cramer's rule, computed in the order @turf/kinks computes them
 * so that a crossing lands on the same floating-point coordinates.
 */
function crossing(
  a: ReadonlyArray<Position>,
  i: number,
  b: ReadonlyArray<Position>,
  k: number,
): [number, number] | null {
  const [ax1, ay1] = a[i] as [number, number];
  const [ax2, ay2] = a[i + 1] as [number, number];
  const [bx1, by1] = b[k] as [number, number];
  const [bx2, by2] = b[k + 1] as [number, number];
  const denominator = (by2 - by1) * (ax2 - ax1) - (bx2 - bx1) * (ay2 - ay1);
  if (denominator === 0) return null;
  const dy = ay1 - by1;
  const dx = ax1 - bx1;
  const alongA = ((bx2 - bx1) * dy - (by2 - by1) * dx) / denominator;
  const alongB = ((ax2 - ax1) * dy - (ay2 - ay1) * dx) / denominator;
  if (!(alongA >= 0 && alongA <= 1 && alongB >= 0 && alongB <= 1)) return null;
  return [ax1 + alongA * (ax2 - ax1), ay1 + alongA * (ay2 - ay1)];
}
