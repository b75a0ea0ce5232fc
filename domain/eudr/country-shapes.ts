/**
 * Country outlines compiled for fast point lookups: "is this position inside country X, and if not,
 * is it within a few kilometres of its border?". Pure: the outlines come from a TopoJSON topology with
 * packed arcs (packed-topology.ts; world-countries.ts reads Natural Earth 1:10m from world-atlas) and a
 * numeric→alpha-2 map.
 *
 * Speed: every changed plot of a refresh is looked up, against outlines of tens of thousands of
 * edges. Each country's edges are filed in bands of BAND_DEG of latitude, so a point-in-polygon test
 * reads only the edges of its own band, and a border-distance search only the bands within the
 * tolerance; a bounding box sends most far-away questions home at once.
 *
 * The antimeridian: Natural Earth rings that cross ±180° (Russia's mainland, Fiji, Antarctica) come out
 * of TopoJSON spanning 360° of longitude, and a planar test would then put Alaska in Russia. Such a
 * ring is unwrapped (west longitudes + 360°), and a western position is tested both as it is and + 360°.
 */

import { arcPositions, type PackedTopology, type TopoGeometry } from './packed-topology.ts';

const BAND_DEG = 0.5;
const KM_PER_DEG_LAT = 110.574;
const KM_PER_DEG_LON_EQUATOR = 111.32;

export interface CountryShape {
  code: string;
  /** [minLon, minLat, maxLon, maxLat], longitudes possibly up to 360 for an unwrapped ring. */
  bbox: [number, number, number, number];
  /** Edges by band index: x1, y1, x2, y2 in a flat array. */
  bands: Map<number, Float64Array>;
}

export interface Placement {
  inside: boolean;
  /** km from the border when outside and within `toleranceKm`; null when inside or farther away. */
  borderKm: number | null;
}

export interface CountryShapes {
  shapeOf(code: string): CountryShape | undefined;
  /** The codes of the countries whose outline holds the position (for a sentence: "it lies in …"). */
  countriesAt(lon: number, lat: number): string[];
}

/** Compiles every country of `topology.objects[object]`; ids map to codes through `codeOf` (undefined: skipped). */
export function compileCountryShapes(
  topology: PackedTopology,
  object: string,
  codeOf: (id: string) => string | undefined,
): CountryShapes {
  // Compiled lazily, country by country: a warehouse's plots lie in a handful of countries, and
  // decoding all 255 outlines would cost a second for nothing. Arcs are decoded from the packed
  // positions each time a ring needs them (cheap), never kept as arrays of pairs.
  const arcOf = (index: number) => arcPositions(topology, index);
  const geometries = new Map<string, TopoGeometry[]>();
  for (const g of topology.objects[object]?.geometries ?? []) {
    if (g.id === undefined || !g.arcs) continue;
    const code = codeOf(String(g.id));
    if (!code) continue;
    geometries.set(code, [...(geometries.get(code) ?? []), g]);
  }
  const shapes = new Map<string, CountryShape | undefined>();
  const shapeOf = (code: string): CountryShape | undefined => {
    if (shapes.has(code)) return shapes.get(code);
    const parts = geometries.get(code);
    const rings: number[][] = [];
    for (const g of parts ?? []) {
      const polygons = (g.type === 'Polygon' ? [g.arcs] : g.type === 'MultiPolygon' ? g.arcs : []) as number[][][];
      for (const polygon of polygons) for (const ring of polygon) rings.push(ringOf(ring, arcOf));
    }
    const shape = parts ? compile(code, rings) : undefined;
    shapes.set(code, shape);
    return shape;
  };
  return {
    shapeOf,
    countriesAt: (lon, lat) =>
      [...geometries.keys()].filter((code) => placeIn(shapeOf(code)!, lon, lat, 0).inside).sort(),
  };
}

/** A ring as x, y pairs in a flat array, from its arcs (a negative index ~i: arc i reversed). */
function ringOf(indexes: number[], arcOf: (index: number) => Float64Array): number[] {
  const ring: number[] = [];
  for (const index of indexes) {
    const arc = arcOf(index >= 0 ? index : ~index);
    const n = arc.length / 2;
    // Consecutive arcs share their joining position.
    for (let k = ring.length === 0 ? 0 : 1; k < n; k++) {
      const p = index >= 0 ? k : n - 1 - k;
      ring.push(arc[2 * p]!, arc[2 * p + 1]!);
    }
  }
  return ring;
}

function compile(code: string, rings: number[][]): CountryShape {
  const lists = new Map<number, number[]>();
  const bbox: [number, number, number, number] = [Infinity, Infinity, -Infinity, -Infinity];
  for (const ring of rings) {
    let min = Infinity;
    let max = -Infinity;
    for (let i = 0; i < ring.length; i += 2) {
      min = Math.min(min, ring[i]!);
      max = Math.max(max, ring[i]!);
    }
    // Across the antimeridian (see the top): unwrapped, west longitudes + 360°.
    if (max - min > 180) for (let i = 0; i < ring.length; i += 2) if (ring[i]! < 0) ring[i] = ring[i]! + 360;
    for (let i = 2; i < ring.length; i += 2) {
      const x1 = ring[i - 2]!;
      const y1 = ring[i - 1]!;
      const x2 = ring[i]!;
      const y2 = ring[i + 1]!;
      bbox[0] = Math.min(bbox[0], x1);
      bbox[1] = Math.min(bbox[1], y1);
      bbox[2] = Math.max(bbox[2], x1);
      bbox[3] = Math.max(bbox[3], y1);
      for (let b = band(Math.min(y1, y2)); b <= band(Math.max(y1, y2)); b++) {
        const list = lists.get(b);
        if (list) list.push(x1, y1, x2, y2);
        else lists.set(b, [x1, y1, x2, y2]);
      }
    }
  }
  // Typed, at their size: growing arrays keep up to half again their length spare, and countriesAt
  // compiles every country once a plot lies outside its declared one.
  const bands = new Map<number, Float64Array>();
  for (const [b, list] of lists) bands.set(b, Float64Array.from(list));
  return { code, bbox, bands };
}

function band(lat: number): number {
  return Math.floor(lat / BAND_DEG);
}

/**
 * Whether the position lies inside the country, and if not, its distance to the border when that is
 * at most `toleranceKm` (equirectangular at the position's latitude: exact enough over a few km).
 */
export function placeIn(shape: CountryShape, lon: number, lat: number, toleranceKm: number): Placement {
  const xs = lon < 0 ? [lon, lon + 360] : [lon];
  const dLat = toleranceKm / KM_PER_DEG_LAT;
  const kmPerLon = KM_PER_DEG_LON_EQUATOR * Math.max(0.01, Math.cos((lat * Math.PI) / 180));
  const dLon = toleranceKm / kmPerLon;
  const [minX, minY, maxX, maxY] = shape.bbox;
  const near = xs.filter((x) => x >= minX - dLon && x <= maxX + dLon && lat >= minY - dLat && lat <= maxY + dLat);
  if (near.length === 0) return { inside: false, borderKm: null };
  if (near.some((x) => insideAt(shape, x, lat))) return { inside: true, borderKm: null };
  if (toleranceKm <= 0) return { inside: false, borderKm: null };
  let best = Infinity;
  for (let b = band(lat - dLat); b <= band(lat + dLat); b++) {
    const edges = shape.bands.get(b);
    if (!edges) continue;
    for (let i = 0; i < edges.length; i += 4) {
      for (const x of near) {
        const km = segmentKm(x, lat, edges[i]!, edges[i + 1]!, edges[i + 2]!, edges[i + 3]!, kmPerLon);
        if (km < best) best = km;
      }
    }
  }
  return { inside: false, borderKm: best <= toleranceKm ? best : null };
}

/** Even-odd ray casting towards +x over the edges of the position's band (holes and islands alike). */
function insideAt(shape: CountryShape, x: number, y: number): boolean {
  const edges = shape.bands.get(band(y));
  if (!edges) return false;
  let inside = false;
  for (let i = 0; i < edges.length; i += 4) {
    const x1 = edges[i]!;
    const y1 = edges[i + 1]!;
    const x2 = edges[i + 2]!;
    const y2 = edges[i + 3]!;
    if (y1 > y !== y2 > y && x < ((x2 - x1) * (y - y1)) / (y2 - y1) + x1) inside = !inside;
  }
  return inside;
}

/** km from (x, y) to the segment, in a local plane scaled to km at latitude y. */
function segmentKm(x: number, y: number, x1: number, y1: number, x2: number, y2: number, kmPerLon: number): number {
  const ax = (x1 - x) * kmPerLon;
  const ay = (y1 - y) * KM_PER_DEG_LAT;
  const bx = (x2 - x) * kmPerLon;
  const by = (y2 - y) * KM_PER_DEG_LAT;
  const dx = bx - ax;
  const dy = by - ay;
  const length2 = dx * dx + dy * dy;
  const t = length2 === 0 ? 0 : Math.max(0, Math.min(1, -(ax * dx + ay * dy) / length2));
  return Math.hypot(ax + t * dx, ay + t * dy);
}
