// Construction of plot polygons whose true area is known in advance, so `surfaceArea` agrees
// with what a client computes (e.g. @turf/area) without computing it per request.
import type { Rand } from './rng.ts';

export interface PolygonGeometry {
  type: 'Polygon';
  coordinates: number[][][];
}

/** Beyond the contract's Polygon: the EU system takes a point for a small plot, and a service may send one. */
export interface PointGeometry {
  type: 'Point';
  coordinates: number[];
}

/**
 * Off the contract altogether: never generated, only set by a test through the control API
 * (`editPlot`) to play a service that sends a plot as a line, several points or a collection.
 */
export type OffContractGeometry =
  | { type: 'LineString' | 'MultiPoint'; coordinates: number[][] }
  | { type: 'MultiLineString'; coordinates: number[][][] }
  | { type: 'GeometryCollection'; geometries: Array<PolygonGeometry | PointGeometry | OffContractGeometry> };

// Same sphere radius as @turf/area, so planar areas in the local tangent plane agree closely.
const EARTH_RADIUS_M = 6371008.8;
const METERS_PER_DEGREE = (Math.PI * EARTH_RADIUS_M) / 180;

function round7(value: number): number {
  return Math.round(value * 1e7) / 1e7;
}

/** A shape in metres around its centre: vertices in counter-clockwise order, not closed. */
export interface LocalShape {
  xs: number[];
  ys: number[];
}

function shoelace(shape: LocalShape): number {
  let twice = 0;
  const n = shape.xs.length;
  for (let i = 0; i < n; i++) {
    const j = (i + 1) % n;
    twice += (shape.xs[i] ?? 0) * (shape.ys[j] ?? 0) - (shape.xs[j] ?? 0) * (shape.ys[i] ?? 0);
  }
  return twice / 2;
}

/**
 * A star-shaped polygon (strictly increasing angles around the centre, hence simple and
 * counter-clockwise) scaled to exactly `areaM2` in the local plane; `vertices` of them, or 5 to 9.
 */
export function starShape(rand: Rand, areaM2: number, vertices?: number): LocalShape {
  const n = vertices ?? rand.int(5, 9);
  const step = (2 * Math.PI) / n;
  // Many vertices trace a boundary as one is walked or surveyed: the distance from the centre wanders
  // slowly round it, with a little noise, rather than jumping at every vertex into long spikes.
  const waves =
    vertices === undefined ? [] : [1, 2, 3].map((k) => ({ k, size: 0.15 / k, phase: rand.next() * 2 * Math.PI }));
  const xs: number[] = [];
  const ys: number[] = [];
  for (let i = 0; i < n; i++) {
    const angle = i * step + (rand.next() - 0.5) * 0.6 * step;
    const radius =
      vertices === undefined
        ? 0.75 + rand.next() * 0.5
        : waves.reduce((r, w) => r + w.size * Math.sin(w.k * angle + w.phase), 1) + (rand.next() - 0.5) * 0.01;
    xs.push(radius * Math.cos(angle));
    ys.push(radius * Math.sin(angle));
  }
  const scale = Math.sqrt(areaM2 / shoelace({ xs, ys }));
  return { xs: xs.map((x) => x * scale), ys: ys.map((y) => y * scale) };
}

/** Scales a shape about its centre so its area is multiplied by `areaRatio`. */
export function shrinkShape(shape: LocalShape, areaRatio: number): LocalShape {
  const f = Math.sqrt(areaRatio);
  return { xs: shape.xs.map((x) => x * f), ys: shape.ys.map((y) => y * f) };
}

/** Places a local shape at (lon, lat) as a closed GeoJSON ring. */
export function toPolygon(shape: LocalShape, lon: number, lat: number): PolygonGeometry {
  const lonScale = METERS_PER_DEGREE * Math.cos((lat * Math.PI) / 180);
  const ring: number[][] = shape.xs.map((x, i) => [
    round7(lon + x / lonScale),
    round7(lat + (shape.ys[i] ?? 0) / METERS_PER_DEGREE),
  ]);
  const first = ring[0];
  if (first) ring.push([first[0] ?? 0, first[1] ?? 0]);
  return { type: 'Polygon', coordinates: [ring] };
}

/** A deliberately self-intersecting "bow-tie" ring of roughly `areaM2`. */
export function bowTie(lon: number, lat: number, areaM2: number): PolygonGeometry {
  const half = Math.sqrt(areaM2) / 2;
  return toPolygon({ xs: [-half, half, half, -half], ys: [-half, half, -half, half] }, lon, lat);
}

/** A plot given as a single point (7 decimals), as for a plot of up to 4 ha. */
export function toPoint(lon: number, lat: number): PointGeometry {
  return { type: 'Point', coordinates: [round7(lon), round7(lat)] };
}

/** The polygon with its closing position left out: the contract does not require closed rings. */
export function unclosed(polygon: PolygonGeometry): PolygonGeometry {
  return { type: 'Polygon', coordinates: polygon.coordinates.map((ring) => ring.slice(0, -1)) };
}

/** The polygon with every coordinate rounded to `decimals` (GPS exported at low precision). */
export function rounded(polygon: PolygonGeometry, decimals: number): PolygonGeometry {
  const f = 10 ** decimals;
  return {
    type: 'Polygon',
    coordinates: polygon.coordinates.map((ring) => ring.map((p) => p.map((v) => Math.round(v * f) / f))),
  };
}

/** Planar area in m² of a lon/lat ring (local tangent plane at its first point). */
export function ringAreaM2(ring: number[][]): number {
  const lat0 = ring[0]?.[1] ?? 0;
  const lonScale = METERS_PER_DEGREE * Math.cos((lat0 * Math.PI) / 180);
  const xs = ring.slice(0, -1).map((p) => (p[0] ?? 0) * lonScale);
  const ys = ring.slice(0, -1).map((p) => (p[1] ?? 0) * METERS_PER_DEGREE);
  return Math.abs(shoelace({ xs, ys }));
}

/** The polygon with a hole: the same star shrunk to `holeShare` of its area about its centre, wound the other way. */
export function withHole(shape: LocalShape, holeShare: number, lon: number, lat: number): PolygonGeometry {
  const outer = toPolygon(shape, lon, lat).coordinates[0] ?? [];
  const hole = toPolygon(shrinkShape(shape, holeShare), lon, lat).coordinates[0] ?? [];
  return { type: 'Polygon', coordinates: [outer, [...hole].reverse()] };
}

/** Longitude and latitude exchanged in every position (coordinates written latitude first). */
export function swapped(polygon: PolygonGeometry): PolygonGeometry {
  return { type: 'Polygon', coordinates: polygon.coordinates.map((ring) => ring.map(([a, b]) => [b ?? 0, a ?? 0])) };
}

/**
 * The polygon with a corner drawn twice 0.0000004° apart in longitude, both within the same
 * 6-decimal step: distinct as sent, the same position once cut to 6 decimals (as the EU system keeps
 * coordinates), which the EU refuses as a duplicate coordinate.
 */
export function cornerDoubledBelow6Decimals(polygon: PolygonGeometry): PolygonGeometry {
  const ring = polygon.coordinates[0] ?? [];
  const [lon = 0, lat = 0] = ring[0] ?? [];
  const sign = lon < 0 ? -1 : 1;
  const step = Math.trunc(Math.abs(lon) * 1e6) / 1e6;
  const first = [round7(sign * (step + 1e-7)), lat];
  const twin = [round7(sign * (step + 5e-7)), lat];
  return { type: 'Polygon', coordinates: [[first, twin, ...ring.slice(1, -1), first]] };
}
