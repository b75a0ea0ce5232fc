import { type PagePlots, UNITS_PER_DEGREE } from '../page-data.ts';

// Positions in Web Mercator pixels at zoom 0 (a 256 px world, as Leaflet's EPSG:3857 projects), and
// the tests of where a screen point falls. Pure: no DOM.

const MAX_LAT = 85.0511287798;

export function px(lon: number): number {
  return ((lon + 180) / 360) * 256;
}

export function py(lat: number): number {
  const s = Math.sin((Math.max(-MAX_LAT, Math.min(MAX_LAT, lat)) * Math.PI) / 180);
  return (0.5 - Math.log((1 + s) / (1 - s)) / (4 * Math.PI)) * 256;
}

/** The part of the world in view: its size in pixels, its origin in pixels at its zoom, and 2^zoom. */
export interface View {
  w: number;
  h: number;
  ox: number;
  oy: number;
  scale: number;
}

/** Where the plots are at zoom 0: centres, whether they have one, and each plot's index by id. */
export class PlotPositions {
  readonly mx: Float64Array;
  readonly my: Float64Array;
  readonly located: Uint8Array;
  readonly byId = new Map<string, number>();
  /** Rings and lines in zoom-0 pixels, decoded the first time a plot is drawn as its shape. */
  private readonly rings = new Map<number, Float64Array[]>();
  private readonly lines = new Map<number, Float64Array[]>();

  constructor(private readonly plots: PagePlots) {
    const n = plots.ids.length;
    this.mx = new Float64Array(n);
    this.my = new Float64Array(n);
    this.located = new Uint8Array(n);
    for (let i = 0; i < n; i++) {
      this.byId.set(plots.ids[i]!, i);
      const x = plots.x[i];
      const y = plots.y[i];
      if (x === null || x === undefined || y === null || y === undefined) continue;
      this.located[i] = 1;
      this.mx[i] = px(x / UNITS_PER_DEGREE);
      this.my[i] = py(y / UNITS_PER_DEGREE);
    }
  }

  /** The plot's centre on screen. */
  screen(i: number, v: View): [number, number] {
    return [this.mx[i]! * v.scale - v.ox, this.my[i]! * v.scale - v.oy];
  }

  /** The plot's centre in degrees: [latitude, longitude]. */
  latLng(i: number): [number, number] {
    return [this.plots.y[i]! / UNITS_PER_DEGREE, this.plots.x[i]! / UNITS_PER_DEGREE];
  }

  ringsOf(i: number): Float64Array[] {
    return this.decoded(this.rings, i, this.plots.rings[i] ?? []);
  }

  linesOf(i: number): Float64Array[] {
    return this.decoded(this.lines, i, this.plots.lines[i] ?? []);
  }

  private decoded(cache: Map<number, Float64Array[]>, i: number, parts: number[][]): Float64Array[] {
    const cached = cache.get(i);
    if (cached) return cached;
    const out = parts.map((part) => {
      let xs = this.plots.x[i]!;
      let ys = this.plots.y[i]!;
      const pts = new Float64Array(part.length);
      for (let k = 0; k + 1 < part.length; k += 2) {
        xs += part[k]!;
        ys += part[k + 1]!;
        pts[k] = px(xs / UNITS_PER_DEGREE);
        pts[k + 1] = py(ys / UNITS_PER_DEGREE);
      }
      return pts;
    });
    cache.set(i, out);
    return out;
  }
}

/** Parts in zoom-0 pixels, on screen. */
export function onScreen(parts: readonly Float64Array[], v: View): Float64Array[] {
  return parts.map((part) => {
    const out = new Float64Array(part.length);
    for (let q = 0; q < part.length; q += 2) {
      out[q] = part[q]! * v.scale - v.ox;
      out[q + 1] = part[q + 1]! * v.scale - v.oy;
    }
    return out;
  });
}

/** The bounding box [minX, minY, maxX, maxY] of the parts and the point s. */
export function bounds(parts: readonly Float64Array[], s: readonly [number, number]): [number, number, number, number] {
  const b: [number, number, number, number] = [s[0], s[1], s[0], s[1]];
  for (const part of parts)
    for (let q = 0; q < part.length; q += 2) {
      const x = part[q]!;
      const y = part[q + 1]!;
      if (x < b[0]) b[0] = x;
      if (x > b[2]) b[2] = x;
      if (y < b[1]) b[1] = y;
      if (y > b[3]) b[3] = y;
    }
  return b;
}

/** Whether (x, y) lies inside the ring (even-odd rule). */
export function inside(x: number, y: number, ring: Float64Array): boolean {
  let hit = false;
  for (let a = 0, b = ring.length - 2; a < ring.length; b = a, a += 2) {
    const xa = ring[a]!;
    const ya = ring[a + 1]!;
    const xb = ring[b]!;
    const yb = ring[b + 1]!;
    if (ya > y !== yb > y && x < ((xb - xa) * (y - ya)) / (yb - ya) + xa) hit = !hit;
  }
  return hit;
}

/** Whether (x, y) lies within `tolerance` pixels of the open line. */
export function nearLine(x: number, y: number, line: Float64Array, tolerance: number): boolean {
  for (let q = 0; q + 3 < line.length; q += 2) {
    const ax = line[q]!;
    const ay = line[q + 1]!;
    const dx = line[q + 2]! - ax;
    const dy = line[q + 3]! - ay;
    const length2 = dx * dx + dy * dy;
    const t = length2 === 0 ? 0 : Math.max(0, Math.min(1, ((x - ax) * dx + (y - ay) * dy) / length2));
    if (Math.hypot(x - (ax + t * dx), y - (ay + t * dy)) <= tolerance) return true;
  }
  return line.length === 2 && Math.hypot(x - line[0]!, y - line[1]!) <= tolerance;
}
