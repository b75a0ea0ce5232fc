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
  const edges = edgesOf(rings);
  const visits: Visit[] = [];
  forEachOverlappingPair(edges, (p, q) => visitsOf(rings, edges, p, q, visits));
  visits.sort((x, y) => x.ring1 - y.ring1 || x.ring2 - y.ring2 || x.edge1 - y.edge1 || x.edge2 - y.edge2);
  const points: Array<[number, number]> = [];
  for (const v of visits) {
    const point = crossing(rings[v.ring1]!, v.edge1, rings[v.ring2]!, v.edge2);
    if (point) points.push(point);
  }
  return points;
}

/** Up to this many edges, every pair's boxes are compared directly: cheaper than building a tree (22 against 124 µs at 100 edges; about even near 250). */
const DIRECT_PAIRS_UP_TO = 200;

/** Calls `visit(p, q)` once for each pair of edges p < q whose boxes overlap or touch. */
function forEachOverlappingPair(edges: Edges, visit: (p: number, q: number) => void): void {
  const { count, minX, minY, maxX, maxY } = edges;
  if (count <= DIRECT_PAIRS_UP_TO) {
    for (let p = 0; p < count; p++)
      for (let q = p + 1; q < count; q++)
        if (minX[q]! <= maxX[p]! && minX[p]! <= maxX[q]! && minY[q]! <= maxY[p]! && minY[p]! <= maxY[q]!) visit(p, q);
    return;
  }
  const tree = new Flatbush(count);
  for (let e = 0; e < count; e++) tree.add(minX[e]!, minY[e]!, maxX[e]!, maxY[e]!);
  tree.finish();
  for (let p = 0; p < count; p++)
    for (const q of tree.search(minX[p]!, minY[p]!, maxX[p]!, maxY[p]!)) if (q > p) visit(p, q);
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

/** The tests @turf/kinks makes of edges `p` and `q` (none, one or two). */
function visitsOf(
  rings: ReadonlyArray<ReadonlyArray<Position>>,
  edges: Edges,
  p: number,
  q: number,
  out: Visit[],
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
    out.push({ ring1: rp, edge1: first, ring2: rp, edge2: second });
    return;
  }
  if (iq >= ip) out.push({ ring1: rp, edge1: ip, ring2: rq, edge2: iq });
  if (ip >= iq) out.push({ ring1: rq, edge1: iq, ring2: rp, edge2: ip });
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
