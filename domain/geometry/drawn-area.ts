import turfArea from '@turf/area';
import type { Position } from '../../schema/upstream.ts';

/**
 * The area (m²) a ring encloses as drawn, also when it crosses itself. @turf/area takes the
 * absolute value of the ring's signed area: the two lobes of a bow-tie wind in opposite directions
 * and cancel out, so a flagged plot's hectares would vanish from every total. Here the ring is cut
 * at each point where it crosses or touches itself into simple loops, each loop measured as
 * @turf/area measures a ring, and a point counts once when the ring winds around it at all (the
 * nonzero rule, as SVG and canvas fill a path): the lobes of a bow-tie add up, a region drawn twice
 * counts once, a loop drawn backwards inside another is left out. A ring that does not cross itself
 * gets exactly @turf/area's value. Pure; quadratic in the ring's positions and in its loops (only
 * flagged rings get here), so bounded: null, not measured, for a ring of more than
 * DRAWN_AREA_MAX_POSITIONS positions or more than DRAWN_AREA_MAX_CROSSINGS crossings. Unbounded, one
 * flagged plot of 600,000 positions held its page for hours.
 */
export function drawnRingAreaM2(ring: readonly Position[]): number | null {
  const split = simpleLoops(ring);
  if (split === null) return null;
  const loops = split
    .map((points) => ({ points, signed: planarSignedArea(points) }))
    .filter((l) => l.signed !== 0)
    // Larger first: a loop's parent (the smallest loop around it) is placed before it.
    .sort((a, b) => Math.abs(b.signed) - Math.abs(a.signed));
  const winding: number[] = [];
  const parentOf: number[] = [];
  let covered = 0;
  for (let i = 0; i < loops.length; i++) {
    const loop = loops[i]!;
    // Loops meet only at points, never cross: a loop is inside another iff a point of one of its edges is.
    const probe = midpoint(loop.points[0]!, loop.points[1]!);
    let parent = -1;
    for (let j = i - 1; j >= 0; j--) {
      if (contains(loops[j]!.points, probe)) {
        parent = j;
        break;
      }
    }
    parentOf.push(parent);
    winding.push(Math.sign(loop.signed) + (parent >= 0 ? winding[parent]! : 0));
    const area = turfArea({ type: 'Polygon', coordinates: [[...loop.points, loop.points[0]!]] });
    // The region inside a loop and outside its children is wound winding[i] times; its children are taken out of it below.
    if (winding[i] !== 0) covered += area;
    if (parent >= 0 && winding[parent] !== 0) covered -= area;
  }
  return Math.max(0, covered);
}

type Point = [number, number];

/** Positions of a ring measured as drawn, at most: 50 million pairs of segments, under a second here. */
export const DRAWN_AREA_MAX_POSITIONS = 10_000;
/** Crossings of a ring measured as drawn, at most: each loop they cut is placed among the others. */
export const DRAWN_AREA_MAX_CROSSINGS = 5_000;

/**
 * The ring as simple closed loops (implicitly closed, no repeated point), split where it crosses or
 * touches itself; null past the bounds above.
 */
function simpleLoops(ring: readonly Position[]): Point[][] | null {
  const points: Point[] = [];
  for (const [lon, lat] of ring) {
    const p: Point = [lon!, lat!];
    if (points.length === 0 || !same(points[points.length - 1]!, p)) points.push(p);
  }
  if (points.length > 1 && same(points[0]!, points[points.length - 1]!)) points.pop();
  const n = points.length;
  if (n < 3) return [];
  if (n > DRAWN_AREA_MAX_POSITIONS) return null;
  let crossings = 0;

  // Every crossing becomes a point of both segments, so the walk below meets it twice.
  const inserted: Array<Array<{ t: number; p: Point }>> = points.map(() => []);
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      if (j === i + 1 || (i === 0 && j === n - 1)) continue;
      const hit = crossing(points[i]!, points[(i + 1) % n]!, points[j]!, points[(j + 1) % n]!);
      if (!hit) continue;
      if (++crossings > DRAWN_AREA_MAX_CROSSINGS) return null;
      const { t, u } = hit;
      // A crossing at a segment's end is that vertex itself (same key in the walk).
      const p: Point =
        t === 0
          ? points[i]!
          : t === 1
            ? points[(i + 1) % n]!
            : u === 0
              ? points[j]!
              : u === 1
                ? points[(j + 1) % n]!
                : hit.p;
      if (t > 0 && t < 1) inserted[i]!.push({ t, p });
      if (u > 0 && u < 1) inserted[j]!.push({ t: u, p });
    }
  }

  // Walk the ring; returning to a point already on the path closes a loop, which is cut off.
  const loops: Point[][] = [];
  const path: Point[] = [];
  const at = new Map<string, number>();
  const visit = (p: Point) => {
    const k = key(p);
    if (path.length > 0 && key(path[path.length - 1]!) === k) return;
    const start = at.get(k);
    if (start === undefined) {
      at.set(k, path.length);
      path.push(p);
      return;
    }
    const cut = path.splice(start + 1);
    for (const q of cut) at.delete(key(q));
    loops.push([path[start]!, ...cut]);
  };
  for (let i = 0; i < n; i++) {
    visit(points[i]!);
    for (const { p } of inserted[i]!.sort((a, b) => a.t - b.t)) visit(p);
  }
  loops.push(path);
  return loops.filter((l) => l.length >= 3);
}

// Parameters this close to a segment's end are its end: a vertex lying on another segment.
const END = 1e-12;

/** Where segments ab and cd meet: parameters along each (0..1) and the point; null when parallel or apart. */
function crossing(a: Point, b: Point, c: Point, d: Point): { t: number; u: number; p: Point } | null {
  const rx = b[0] - a[0],
    ry = b[1] - a[1],
    sx = d[0] - c[0],
    sy = d[1] - c[1];
  const denominator = rx * sy - ry * sx;
  if (denominator === 0) return null;
  const qx = c[0] - a[0],
    qy = c[1] - a[1];
  let t = (qx * sy - qy * sx) / denominator;
  let u = (qx * ry - qy * rx) / denominator;
  if (t < -END || t > 1 + END || u < -END || u > 1 + END) return null;
  t = snap(t);
  u = snap(u);
  return { t, u, p: [a[0] + t * rx, a[1] + t * ry] };
}

function snap(x: number): number {
  return x < END ? 0 : x > 1 - END ? 1 : x;
}

/** Shoelace in degrees: only its sign (direction) and size relative to other loops are used. */
function planarSignedArea(points: readonly Point[]): number {
  let twice = 0;
  for (let i = 0; i < points.length; i++) {
    const [x1, y1] = points[i]!;
    const [x2, y2] = points[(i + 1) % points.length]!;
    twice += x1 * y2 - x2 * y1;
  }
  return twice / 2;
}

/** Even-odd ray test; the probe is never on the loop's boundary (loops share points, not edges). */
function contains(points: readonly Point[], [x, y]: Point): boolean {
  let inside = false;
  for (let i = 0, j = points.length - 1; i < points.length; j = i++) {
    const [xi, yi] = points[i]!;
    const [xj, yj] = points[j]!;
    if (yi > y !== yj > y && x < ((xj - xi) * (y - yi)) / (yj - yi) + xi) inside = !inside;
  }
  return inside;
}

function midpoint(a: Point, b: Point): Point {
  return [(a[0] + b[0]) / 2, (a[1] + b[1]) / 2];
}

function same(a: Point, b: Point): boolean {
  return a[0] === b[0] && a[1] === b[1];
}

function key(p: Point): string {
  return `${p[0]},${p[1]}`;
}
