import turfArea from '@turf/area';
import turfBbox from '@turf/bbox';
import {
  isCheckedGeometry,
  positionsOf,
  type PlotGeometry,
  type Position,
  type UncheckedGeometry,
} from '../../schema/upstream.ts';
import { DRAWN_AREA_MAX_CROSSINGS, DRAWN_AREA_MAX_POSITIONS, drawnRingAreaM2 } from './drawn-area.ts';
import { firstSelfIntersection, MAX_PAIR_TESTS } from './self-intersections.ts';

/**
 * What the warehouse records about a plot's polygon: its area (hectares, @turf/area), bounding box,
 * and whether it is a valid shape. An invalid shape is stored and flagged with the reason, never
 * dropped: the plot is still a plot the supplier declared, and its area is the area it encloses as
 * drawn (flaggedAreaM2), so its hectares stay in every total. A point is stored too (the EU system
 * accepts one for a small plot): it has no area and is flagged as not a polygon. The structured
 * `problem` is what the EUDR readiness checks (domain/eudr) turn into findings.
 */
export interface GeometryFacts {
  areaHa: number | null;
  bbox: [minLon: number, minLat: number, maxLon: number, maxLat: number] | null;
  valid: boolean;
  issue: string | null;
  /** The first rule the shape breaks, as data; null when valid. */
  problem: GeometryProblem | null;
  /** A ring crosses the antimeridian (±180°): measured across it, not the long way round the globe. */
  crossesAntimeridian: boolean;
}

/** Where in the shape: polygon index (0 for a Polygon) and ring index (0 = outer ring). */
interface RingAt {
  polygon: number;
  ring: number;
}
export type GeometryProblem =
  | { kind: 'missing' }
  | { kind: 'empty' }
  | { kind: 'point' }
  | { kind: 'no_rings'; polygon: number }
  | ({ kind: 'out_of_range'; position: [number, number] } & Partial<RingAt>)
  | ({ kind: 'too_few_positions'; positions: number; distinct?: number } & RingAt)
  | ({ kind: 'not_closed' } & RingAt)
  /** `complete` false: the shape's edges overlap too much to count every crossing; `count` is a lower bound. */
  | { kind: 'self_intersection'; at: [number, number]; count: number; complete: boolean }
  /** Too many of its edges overlap to finish the crossing check (MAX_PAIR_TESTS): neither valid nor known to cross. */
  | { kind: 'too_complex'; pairs: number }
  | ({ kind: 'hole_outside' } & RingAt)
  | { kind: 'not_a_plot_shape'; type: UncheckedGeometry['type'] };

const M2_PER_HECTARE = 10_000;
/** Why a flagged shape has no area (drawn-area.ts's bounds). */
export const AREA_NOT_MEASURED = `area not measured: a ring of more than ${DRAWN_AREA_MAX_POSITIONS} positions or ${DRAWN_AREA_MAX_CROSSINGS} crossings is not measured as drawn`;

export function assessGeometry(geometry: PlotGeometry | null | undefined): GeometryFacts {
  if (!geometry) return flaggedWithout({ kind: 'missing' }, 'no geometry');
  if (geometry.type === 'Point') return assessPoint(geometry.coordinates);
  if (!isCheckedGeometry(geometry)) return assessUnchecked(geometry);
  const multi = geometry.type === 'MultiPolygon';
  const polygons: Position[][][] = multi ? geometry.coordinates : [geometry.coordinates];
  const problem = structuralProblem(polygons);
  if (problem?.kind === 'empty') return flaggedWithout(problem, 'geometry has no positions');
  const bbox = turfBbox(geometry) as GeometryFacts['bbox'];
  const crossing = problem === null && crossesAntimeridian(polygons);
  // Across the antimeridian, longitudes are unwrapped (west of it +360°) so each edge is the short way.
  const measured = crossing ? unwrapped(polygons) : polygons;
  const flagged = (why: GeometryProblem): GeometryFacts => {
    const areaM2 = flaggedAreaM2(measured);
    return {
      areaHa: areaM2 === null ? null : areaM2 / M2_PER_HECTARE,
      bbox,
      valid: false,
      issue: areaM2 === null ? `${describe(why, multi)}; ${AREA_NOT_MEASURED}` : describe(why, multi),
      problem: why,
      crossesAntimeridian: crossing,
    };
  };
  if (problem) return flagged(problem);
  const shape: PlotGeometry = { type: 'MultiPolygon', coordinates: measured };
  // Every ring of every polygon against every other, as @turf/kinks tests a MultiPolygon.
  const kinks = firstSelfIntersection(measured.flat());
  if (kinks !== null && 'at' in kinks) {
    const [lon, lat] = kinks.at;
    return flagged({
      kind: 'self_intersection',
      at: [round(wrap(lon)), round(lat)],
      count: kinks.count,
      complete: kinks.complete,
    });
  }
  if (kinks !== null) return flagged({ kind: 'too_complex', pairs: MAX_PAIR_TESTS });
  const hole = holeOutside(measured);
  if (hole) return flagged(hole);
  return {
    areaHa: turfArea(shape) / M2_PER_HECTARE,
    bbox,
    valid: true,
    issue: null,
    problem: null,
    crossesAntimeridian: crossing,
  };
}

function flaggedWithout(problem: GeometryProblem, issue: string): GeometryFacts {
  return { areaHa: null, bbox: null, valid: false, issue, problem, crossesAntimeridian: false };
}

function assessPoint(position: Position): GeometryFacts {
  const [lon, lat] = position as [number, number];
  const outside = outOfRange(lon, lat);
  const problem: GeometryProblem = outside ? { kind: 'out_of_range', position: [lon, lat] } : { kind: 'point' };
  return {
    areaHa: null,
    bbox: [lon, lat, lon, lat],
    valid: false,
    issue: outside ? describe(problem, false) : 'a point, not a polygon (no area)',
    problem,
    crossesAntimeridian: false,
  };
}

/**
 * A line, several points or a collection: stored with where it lies, no area, and its type as the
 * problem (the one that matters: the EU refuses lines, and ddsync checks no shape of these types).
 */
function assessUnchecked(geometry: UncheckedGeometry): GeometryFacts {
  const problem: GeometryProblem = { kind: 'not_a_plot_shape', type: geometry.type };
  let bbox: GeometryFacts['bbox'] = null;
  for (const [lon, lat] of positionsOf(geometry) as Iterable<[number, number]>) {
    bbox = bbox
      ? [Math.min(bbox[0], lon), Math.min(bbox[1], lat), Math.max(bbox[2], lon), Math.max(bbox[3], lat)]
      : [lon, lat, lon, lat];
  }
  return { areaHa: null, bbox, valid: false, issue: describe(problem, false), problem, crossesAntimeridian: false };
}

function describe(problem: GeometryProblem, multi: boolean): string {
  const where = (at: Partial<RingAt>) => (multi ? `polygon ${at.polygon} ring ${at.ring}` : `ring ${at.ring}`);
  switch (problem.kind) {
    case 'missing':
      return 'no geometry';
    case 'empty':
      return 'geometry has no positions';
    case 'point':
      return 'a point, not a polygon (no area)';
    case 'no_rings':
      return multi ? `polygon ${problem.polygon} has no rings` : 'polygon has no rings';
    case 'out_of_range': {
      const [lon, lat] = problem.position;
      return problem.ring === undefined
        ? `position outside WGS84 range: [${lon}, ${lat}]`
        : `${where(problem)} has a position outside WGS84 range: [${lon}, ${lat}]`;
    }
    case 'too_few_positions':
      return problem.distinct === undefined
        ? `${where(problem)} has ${problem.positions} positions (a ring needs at least 4)`
        : `${where(problem)} has ${problem.distinct} distinct position(s) (a ring needs at least 3 corners)`;
    case 'not_closed':
      return `${where(problem)} is not closed (first and last positions differ)`;
    case 'self_intersection':
      return `self-intersection at [${problem.at[0]}, ${problem.at[1]}]${problem.count > 1 || !problem.complete ? ` and ${problem.complete ? '' : 'at least '}${problem.count - 1} more` : ''}`;
    case 'too_complex':
      return `more than ${problem.pairs} pairs of its edges overlap: not checked for crossings`;
    case 'hole_outside':
      return `${where(problem)} is a hole outside its outer ring`;
    case 'not_a_plot_shape':
      return `a ${problem.type}, not a polygon or a point (no area)`;
  }
}

/**
 * The area of a flagged shape: as @turf/area (outer ring minus holes, polygons added), but each ring
 * measured as drawn (drawnRingAreaM2), so a ring that crosses itself keeps the area it encloses
 * instead of the 0 its cancelling lobes give; never negative. Rings are measured one by one: rings
 * that cross one another are not merged. Null when a ring is too large or crosses itself too often to
 * measure so (drawn-area.ts): no area rather than a wrong one, and the issue says why.
 */
function flaggedAreaM2(polygons: Position[][][]): number | null {
  let total = 0;
  for (const [outer, ...holes] of polygons) {
    if (!outer) continue;
    let area = drawnRingAreaM2(outer);
    for (const hole of holes) {
      const cut = area === null ? null : drawnRingAreaM2(hole);
      area = area === null || cut === null ? null : area - cut;
    }
    if (area === null) return null;
    total += Math.max(0, area);
  }
  return total;
}

function outOfRange(lon: number, lat: number): boolean {
  return lon < -180 || lon > 180 || lat < -90 || lat > 90;
}

/** Distinct positions of a closed ring, counted up to 3 (enough to enclose an area); stops as soon as it has 3. */
function distinctCorners(ring: Position[]): number {
  const seen: Position[] = [];
  for (let i = 0; i < ring.length - 1 && seen.length < 3; i++) {
    const [lon, lat] = ring[i]!;
    if (!seen.some((q) => q[0] === lon && q[1] === lat)) seen.push(ring[i]!);
  }
  return seen.length;
}

/** The first rule a GeoJSON polygon breaks (RFC 7946 §3.1.6), or 'empty', or null. */
function structuralProblem(polygons: Position[][][]): GeometryProblem | null {
  let positions = 0;
  for (let p = 0; p < polygons.length; p++) {
    const rings = polygons[p]!;
    if (rings.length === 0) return { kind: 'no_rings', polygon: p };
    for (let r = 0; r < rings.length; r++) {
      const ring = rings[r]!;
      positions += ring.length;
      for (const [lon, lat] of ring) {
        if (outOfRange(lon!, lat!)) return { kind: 'out_of_range', polygon: p, ring: r, position: [lon!, lat!] };
      }
      if (ring.length < 4) return { kind: 'too_few_positions', polygon: p, ring: r, positions: ring.length };
      const first = ring[0]!;
      const last = ring[ring.length - 1]!;
      if (first[0] !== last[0] || first[1] !== last[1]) return { kind: 'not_closed', polygon: p, ring: r };
      // Four positions that repeat one or two points enclose nothing: a ring needs three distinct corners.
      const distinct = distinctCorners(ring);
      if (distinct < 3) return { kind: 'too_few_positions', polygon: p, ring: r, positions: ring.length, distinct };
    }
  }
  return positions === 0 ? { kind: 'empty' } : null;
}

/**
 * Whether an edge jumps more than 180° of longitude: no plot's edge spans half the globe, so such an
 * edge is one drawn across the antimeridian (RFC 7946 §3.1.9 asks for a split there, but a service
 * may not split). Measured as written, @turf/area and the crossing check would take the long way round.
 */
function crossesAntimeridian(polygons: Position[][][]): boolean {
  for (const rings of polygons) {
    for (const ring of rings) {
      for (let i = 1; i < ring.length; i++) {
        if (Math.abs(ring[i]![0]! - ring[i - 1]![0]!) > 180) return true;
      }
    }
  }
  return false;
}

function unwrapped(polygons: Position[][][]): Position[][][] {
  return polygons.map((rings) => rings.map((ring) => ring.map(([lon, lat]) => [lon! < 0 ? lon! + 360 : lon!, lat!])));
}

function wrap(lon: number): number {
  return lon > 180 ? lon - 360 : lon;
}

/** A hole with a position outside its outer ring (OGC simple features: holes lie inside the shell). */
function holeOutside(polygons: Position[][][]): GeometryProblem | null {
  for (let p = 0; p < polygons.length; p++) {
    const [outer, ...holes] = polygons[p]!;
    for (let h = 0; h < holes.length; h++) {
      // Rings do not cross (kinks found none): a hole is inside iff a vertex of it is (not on the boundary).
      if (holes[h]!.some((position) => !insideOrOn(outer!, position)))
        return { kind: 'hole_outside', polygon: p, ring: h + 1 };
    }
  }
  return null;
}

/** Ray casting in lon/lat (fine at plot scale); a point on an edge counts as inside. */
function insideOrOn(ring: Position[], [x, y]: Position): boolean {
  let inside = false;
  for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
    const [xi, yi] = ring[i] as [number, number];
    const [xj, yj] = ring[j] as [number, number];
    const cross = (xj - xi) * (y! - yi) - (yj - yi) * (x! - xi);
    if (
      cross === 0 &&
      x! >= Math.min(xi, xj) &&
      x! <= Math.max(xi, xj) &&
      y! >= Math.min(yi, yj) &&
      y! <= Math.max(yi, yj)
    )
      return true;
    if (yi > y! !== yj > y! && x! < ((xj - xi) * (y! - yi)) / (yj - yi) + xi) inside = !inside;
  }
  return inside;
}

function round(n: number): number {
  return Math.round(n * 1e6) / 1e6;
}
