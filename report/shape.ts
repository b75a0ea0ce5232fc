// A plot's GeoJSON made small enough for a report of 100,000 plots: coordinates as whole units of
// 1e-5 degree (about a metre: far below what a screen shows), rings simplified at that tolerance,
// and each ring written as differences from the previous position (small numbers, few digits).
// Pure: no I/O.
import { UNITS_PER_DEGREE } from './page-data.ts';

/** Units per degree of the report's coordinates. */
export { UNITS_PER_DEGREE };
/** Simplification tolerance in units: positions within 2 units (about 2 m) of the line are dropped. */
const TOLERANCE = 2;

export interface CompactShape {
  /** Centre of the plot's positions (bounding box), in units: [x (longitude), y (latitude)]. */
  x: number;
  y: number;
  /**
   * The rings (outer rings and holes of every polygon), each as [dx0, dy0, dx1, dy1, …]: the first
   * position relative to the centre, each next one relative to the one before. Empty for a point.
   */
  rings: number[][];
  /** Open lines (of a LineString or MultiLineString: the EU refuses them, the map still shows them), encoded as rings are; absent when none. */
  lines?: number[][];
}

type Position = [number, number];

function position(value: unknown): Position | null {
  if (!Array.isArray(value) || value.length < 2) return null;
  const [lon, lat] = value as unknown[];
  if (typeof lon !== 'number' || typeof lat !== 'number') return null;
  if (!Number.isFinite(lon) || !Number.isFinite(lat) || lon < -180 || lon > 180 || lat < -90 || lat > 90) return null;
  return [Math.round(lon * UNITS_PER_DEGREE), Math.round(lat * UNITS_PER_DEGREE)];
}

/** The positions of a ring that are valid WGS84 (others are left out: the map cannot place them). */
function ringOf(value: unknown): Position[] {
  if (!Array.isArray(value)) return [];
  const out: Position[] = [];
  for (const p of value) {
    const q = position(p);
    if (q) out.push(q);
  }
  return out;
}

interface Parts {
  /** Rings of polygons (a Point: a single ring of one position). */
  rings: Position[][];
  /** Open lines. */
  lines: Position[][];
}

/**
 * The rings and lines of a geometry: Point, Polygon, MultiPolygon, LineString, MultiLineString, and
 * those inside a GeometryCollection or a Feature. Any other type (MultiPoint, a type no GeoJSON has)
 * has nothing the map draws.
 */
function partsOf(geometry: unknown, into: Parts = { rings: [], lines: [] }): Parts {
  if (!geometry || typeof geometry !== 'object') return into;
  const g = geometry as { type?: unknown; coordinates?: unknown; geometries?: unknown };
  const c = g.coordinates;
  const kept = (list: Position[][]) => list.filter((r) => r.length > 0);
  switch (g.type) {
    case 'Point': {
      const p = position(c);
      if (p) into.rings.push([p]);
      break;
    }
    case 'Polygon':
      if (Array.isArray(c)) into.rings.push(...kept(c.map(ringOf)));
      break;
    case 'MultiPolygon':
      if (Array.isArray(c))
        into.rings.push(...kept(c.flatMap((polygon: unknown) => (Array.isArray(polygon) ? polygon.map(ringOf) : []))));
      break;
    case 'LineString':
      into.lines.push(...kept([ringOf(c)]));
      break;
    case 'MultiLineString':
      if (Array.isArray(c)) into.lines.push(...kept(c.map(ringOf)));
      break;
    case 'GeometryCollection':
      if (Array.isArray(g.geometries)) for (const member of g.geometries) partsOf(member, into);
      break;
    case 'Feature':
      partsOf((geometry as { geometry?: unknown }).geometry, into);
      break;
  }
  return into;
}

/** Squared distance from p to the segment a–b. */
function segmentDistance2(p: Position, a: Position, b: Position): number {
  const dx = b[0] - a[0];
  const dy = b[1] - a[1];
  const length2 = dx * dx + dy * dy;
  const t = length2 === 0 ? 0 : Math.max(0, Math.min(1, ((p[0] - a[0]) * dx + (p[1] - a[1]) * dy) / length2));
  const ex = p[0] - (a[0] + t * dx);
  const ey = p[1] - (a[1] + t * dy);
  return ex * ex + ey * ey;
}

/** Douglas–Peucker, iterative (a ring of thousands of positions must not exhaust the stack). */
export function simplifyRing(ring: readonly Position[], tolerance = TOLERANCE): Position[] {
  // Repeated positions first (rounding to units merges near ones).
  const points = ring.filter((p, i) => i === 0 || p[0] !== ring[i - 1]![0] || p[1] !== ring[i - 1]![1]);
  if (points.length <= 4) return points;
  const keep = new Uint8Array(points.length);
  keep[0] = 1;
  keep[points.length - 1] = 1;
  const stack: Array<[number, number]> = [[0, points.length - 1]];
  const limit = tolerance * tolerance;
  while (stack.length > 0) {
    const [first, last] = stack.pop()!;
    let farthest = -1;
    let max = limit;
    for (let i = first + 1; i < last; i++) {
      const d = segmentDistance2(points[i]!, points[first]!, points[last]!);
      if (d > max) {
        max = d;
        farthest = i;
      }
    }
    if (farthest >= 0) {
      keep[farthest] = 1;
      stack.push([first, farthest], [farthest, last]);
    }
  }
  const simplified = points.filter((_, i) => keep[i] === 1);
  // A closed ring whose first and last positions are the same one keeps at least a triangle.
  return simplified.length >= 4 || simplified.length === points.length ? simplified : points;
}

/** Each position as the difference from the one before, the first from the centre, after simplification. */
function encode(parts: Position[][], x: number, y: number): number[][] {
  return parts.map((part) => {
    const out: number[] = [];
    let px = x;
    let py = y;
    for (const [rx, ry] of simplifyRing(part)) {
      out.push(rx - px, ry - py);
      px = rx;
      py = ry;
    }
    return out;
  });
}

/** The compact shape of a plot's GeoJSON; null when it has no position the map can place. */
export function compactShape(geometry: unknown): CompactShape | null {
  const { rings, lines } = partsOf(geometry);
  if (rings.length === 0 && lines.length === 0) return null;
  let minX = Infinity;
  let minY = Infinity;
  let maxX = -Infinity;
  let maxY = -Infinity;
  for (const part of [...rings, ...lines])
    for (const [x, y] of part) {
      if (x < minX) minX = x;
      if (x > maxX) maxX = x;
      if (y < minY) minY = y;
      if (y > maxY) maxY = y;
    }
  const x = Math.round((minX + maxX) / 2);
  const y = Math.round((minY + maxY) / 2);
  const isPoint = lines.length === 0 && rings.length === 1 && rings[0]!.length === 1;
  if (isPoint) return { x, y, rings: [] };
  const shape: CompactShape = { x, y, rings: encode(rings, x, y) };
  if (lines.length > 0) shape.lines = encode(lines, x, y);
  return shape;
}

/** The rings back in degrees (the page does the same): for tests. */
export function decodeRings(shape: CompactShape, which: 'rings' | 'lines' = 'rings'): Array<Array<[number, number]>> {
  return (shape[which] ?? []).map((ring) => {
    const out: Array<[number, number]> = [];
    let px = shape.x;
    let py = shape.y;
    for (let i = 0; i + 1 < ring.length; i += 2) {
      px += ring[i]!;
      py += ring[i + 1]!;
      out.push([px / UNITS_PER_DEGREE, py / UNITS_PER_DEGREE]);
    }
    return out;
  });
}
