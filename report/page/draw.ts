import type { Colouring } from './colours.ts';
import { bounds, inside, nearLine, onScreen, type PlotPositions, type View } from './geometry.ts';

// Drawing the plots on one canvas, by zoom:
//   - zoomed out (zoom < CELL_ZOOM): plots gathered into screen cells of GATHER px, one disc per cell,
//     sized by its plots and coloured by the colouring's rule (share ready, or the worst risk level);
//   - middle zooms: each plot a dot, the categories drawn on top last;
//   - zoomed in (zoom >= POLYGON_ZOOM): each plot in view as its polygon, or its line.
// And what is under a screen point, answered from what the last drawing recorded.

export const CELL_ZOOM = 7;
export const POLYGON_ZOOM = 12;
/** Side of the grid that answers hover over dots, px. */
const CELL = 16;
/** Side of the cells plots are gathered in, px. */
const GATHER = 28;

export interface Cell {
  x: number;
  y: number;
  r: number;
  n: number;
  counts: number[];
  colour: string;
}

interface DrawnPlot {
  i: number;
  /** Rings on screen; null when drawn as a dot (a point, or too small to see). */
  shape: Float64Array[] | null;
  lines: Float64Array[];
  x: number;
  y: number;
}

export type Hits =
  | { mode: 'cells'; plots: number; cells: number; list: Cell[] }
  | { mode: 'points'; plots: number; grid: Map<number, number[]>; radius: number }
  | { mode: 'polygons'; plots: number; drawn: DrawnPlot[] };

export type Hit = { plot: number } | { cell: Cell };

function inView(x: number, y: number, v: View, margin: number): boolean {
  return x >= -margin && y >= -margin && x <= v.w + margin && y <= v.h + margin;
}

export class PlotPainter {
  /** Located plots in drawing order, per colouring (the last drawn on top). */
  private readonly orders = new Map<Colouring['by'], number[]>();

  constructor(
    private readonly ctx: CanvasRenderingContext2D,
    private readonly positions: PlotPositions,
    public colouring: Colouring,
  ) {}

  private order(): number[] {
    const c = this.colouring;
    let order = this.orders.get(c.by);
    if (!order) {
      order = [];
      const n = this.positions.located.length;
      for (const category of c.order)
        for (let j = 0; j < n; j++) if (this.positions.located[j] && c.category(j) === category) order.push(j);
      this.orders.set(c.by, order);
    }
    return order;
  }

  draw(v: View, zoom: number): Hits {
    if (zoom < CELL_ZOOM) return this.cells(v);
    if (zoom < POLYGON_ZOOM) return this.points(v, zoom < 10 ? 2.5 : 3.5);
    return this.polygons(v);
  }

  private cells(v: View): Hits {
    const { ctx, colouring } = this;
    const cells = new Map<number, Cell>();
    let plots = 0;
    for (const i of this.order()) {
      const s = this.positions.screen(i, v);
      if (!inView(s[0], s[1], v, GATHER)) continue;
      const key = (Math.floor(s[1] / GATHER) + 4) * 100000 + Math.floor(s[0] / GATHER) + 4;
      let c = cells.get(key);
      if (!c) {
        c = { x: 0, y: 0, r: 0, n: 0, counts: new Array<number>(colouring.categories).fill(0), colour: '' };
        cells.set(key, c);
      }
      c.x += s[0];
      c.y += s[1];
      c.counts[colouring.category(i)]!++;
      c.n++;
      plots++;
    }
    const list: Cell[] = [];
    for (const c of cells.values()) {
      c.x /= c.n;
      c.y /= c.n;
      c.r = Math.min(GATHER / 2 - 1, 3 + 1.3 * Math.log2(c.n + 1));
      c.colour = colouring.cellColour(c.counts);
      list.push(c);
    }
    list.sort((a, b) => a.n - b.n);
    ctx.globalAlpha = 0.85;
    ctx.lineWidth = 1;
    ctx.strokeStyle = '#ffffff';
    for (const c of list) {
      ctx.beginPath();
      ctx.arc(c.x, c.y, c.r, 0, 2 * Math.PI);
      ctx.fillStyle = c.colour;
      ctx.fill();
      ctx.stroke();
    }
    ctx.globalAlpha = 1;
    ctx.fillStyle = '#ffffff';
    ctx.font = 'bold 10px sans-serif';
    ctx.textAlign = 'center';
    ctx.textBaseline = 'middle';
    for (const c of list) if (c.r >= 11) ctx.fillText(c.n > 999 ? `${Math.round(c.n / 1000)}k` : String(c.n), c.x, c.y);
    return { mode: 'cells', plots, cells: list.length, list };
  }

  private points(v: View, radius: number): Hits {
    const { ctx, colouring } = this;
    const grid = new Map<number, number[]>();
    let plots = 0;
    let category = -1;
    for (const i of this.order()) {
      const s = this.positions.screen(i, v);
      if (!inView(s[0], s[1], v, radius)) continue;
      if (colouring.category(i) !== category) {
        if (category >= 0) ctx.fill();
        category = colouring.category(i);
        ctx.fillStyle = colouring.colours[category]!;
        ctx.beginPath();
      }
      ctx.moveTo(s[0] + radius, s[1]);
      ctx.arc(s[0], s[1], radius, 0, 2 * Math.PI);
      const key = Math.floor(s[1] / CELL) * 100000 + Math.floor(s[0] / CELL);
      let bucket = grid.get(key);
      if (!bucket) grid.set(key, (bucket = []));
      bucket.push(i, s[0], s[1]);
      plots++;
    }
    if (category >= 0) ctx.fill();
    return { mode: 'points', plots, grid, radius };
  }

  private polygons(v: View): Hits {
    const { ctx, colouring, positions } = this;
    const drawn: DrawnPlot[] = [];
    for (const i of this.order()) {
      const s = positions.screen(i, v);
      if (!inView(s[0], s[1], v, 300)) continue;
      const shape = onScreen(positions.ringsOf(i), v);
      const lines = onScreen(positions.linesOf(i), v);
      const box = bounds([...shape, ...lines], s);
      if (box[2] < -2 || box[3] < -2 || box[0] > v.w + 2 || box[1] > v.h + 2) continue;
      const tiny = box[2] - box[0] < 4 && box[3] - box[1] < 4;
      const dot = (shape.length === 0 && lines.length === 0) || tiny;
      const category = colouring.category(i);
      if (dot || shape.length > 0) {
        ctx.beginPath();
        if (dot) ctx.arc(s[0], s[1], 5, 0, 2 * Math.PI);
        else for (const ring of shape) this.trace(ring, true);
        ctx.fillStyle = colouring.fills[category]!;
        ctx.fill('evenodd');
        ctx.strokeStyle = colouring.colours[category]!;
        ctx.lineWidth = 1.5;
        ctx.stroke();
      }
      if (!dot && lines.length > 0) {
        ctx.beginPath();
        for (const line of lines) this.trace(line, false);
        ctx.strokeStyle = colouring.colours[category]!;
        ctx.lineWidth = 2.5;
        ctx.stroke();
      }
      drawn.push({ i, shape: dot || shape.length === 0 ? null : shape, lines: dot ? [] : lines, x: s[0], y: s[1] });
    }
    return { mode: 'polygons', plots: drawn.length, drawn };
  }

  private trace(part: Float64Array, closed: boolean): void {
    for (let q = 0; q + 1 < part.length; q += 2)
      if (q === 0) this.ctx.moveTo(part[q]!, part[q + 1]!);
      else this.ctx.lineTo(part[q]!, part[q + 1]!);
    if (closed) this.ctx.closePath();
  }

  /** The selected plot outlined in black: its shape when zoomed in, a ring around it otherwise. */
  drawSelection(i: number, v: View, zoom: number): void {
    const { ctx, positions } = this;
    const s = positions.screen(i, v);
    const rings = positions.ringsOf(i);
    const lines = positions.linesOf(i);
    ctx.lineWidth = 3;
    ctx.strokeStyle = '#111111';
    ctx.beginPath();
    if (zoom >= POLYGON_ZOOM && rings.length + lines.length > 0) {
      for (const ring of onScreen(rings, v)) this.trace(ring, true);
      for (const line of onScreen(lines, v)) this.trace(line, false);
    } else ctx.arc(s[0], s[1], 8, 0, 2 * Math.PI);
    ctx.stroke();
  }
}

/** What is under a container point, from what the last drawing recorded. */
export function hitAt(hits: Hits | null, x: number, y: number): Hit | null {
  if (!hits) return null;
  if (hits.mode === 'cells') {
    let best: Cell | null = null;
    for (const c of hits.list) if (Math.hypot(c.x - x, c.y - y) <= c.r + 2 && (!best || c.n > best.n)) best = c;
    return best ? { cell: best } : null;
  }
  if (hits.mode === 'points') {
    let found: number | null = null;
    let dist = hits.radius + 4;
    for (let gy = Math.floor(y / CELL) - 1; gy <= Math.floor(y / CELL) + 1; gy++)
      for (let gx = Math.floor(x / CELL) - 1; gx <= Math.floor(x / CELL) + 1; gx++) {
        const bucket = hits.grid.get(gy * 100000 + gx);
        if (!bucket) continue;
        for (let q = 0; q < bucket.length; q += 3) {
          const d = Math.hypot(bucket[q + 1]! - x, bucket[q + 2]! - y);
          if (d <= dist) {
            dist = d;
            found = bucket[q]!;
          }
        }
      }
    return found === null ? null : { plot: found };
  }
  for (let k = hits.drawn.length - 1; k >= 0; k--) {
    const e = hits.drawn[k]!;
    const onIt = e.shape
      ? e.shape.some((ring) => inside(x, y, ring)) || e.lines.some((line) => nearLine(x, y, line, 5))
      : e.lines.length > 0
        ? e.lines.some((line) => nearLine(x, y, line, 5))
        : Math.hypot(e.x - x, e.y - y) <= 7;
    if (onIt) return { plot: e.i };
  }
  return null;
}
