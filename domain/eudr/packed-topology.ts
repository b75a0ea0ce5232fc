/**
 * A TopoJSON topology with its arcs packed into typed arrays. Pure.
 *
 * Why: JSON.parse of Natural Earth 1:10m (3.6 MB, 477,000 positions) builds half a million two-number
 * arrays, +62 MB of RSS kept for the life of the worker, whose peak-RSS budget has 40 MB to spare
 * (docs/benchmarks.md). Packed, the same arcs take 3.8 MB: `readPackedTopology` reads the file's
 * bytes, decoding the arcs straight into an Int32Array and handing JSON.parse only the small rest
 * (the objects, about 100 KB, and the transform). Synchronous on purpose: the outlines are read on
 * first use inside the pure, synchronous `plotFindings`, and a single pass over a buffer needs no
 * stream (stream-json would make every caller await a load for the same few milliseconds).
 */

export interface Topology {
  transform?: Transform;
  arcs: number[][][];
  objects: Record<string, { geometries: TopoGeometry[] }>;
}
export interface Transform {
  scale: [number, number];
  translate: [number, number];
}
export interface TopoGeometry {
  type: string;
  id?: string | number;
  arcs?: number[][] | number[][][];
}

export interface PackedTopology {
  transform?: Transform;
  /**
   * Every arc's positions as x, y pairs, absolute (TopoJSON's deltas already summed): quantised
   * integers when there is a transform, coordinates as written when there is none.
   */
  positions: Int32Array | Float64Array;
  /** Arc i is positions[2 * arcStart[i]] up to, not including, positions[2 * arcStart[i + 1]]. */
  arcStart: Int32Array;
  objects: Topology['objects'];
}

/** The positions of arc `index` in longitude, latitude (the transform applied); empty when there is no such arc. */
export function arcPositions(topology: PackedTopology, index: number): Float64Array {
  const { positions, arcStart, transform: t } = topology;
  if (index < 0 || index + 1 >= arcStart.length) return new Float64Array(0);
  const from = 2 * arcStart[index]!;
  const to = 2 * arcStart[index + 1]!;
  const out = new Float64Array(to - from);
  for (let i = from; i < to; i += 2) {
    // The same arithmetic as decoding the JSON straightforwardly, so the same doubles.
    out[i - from] = t ? positions[i]! * t.scale[0] + t.translate[0] : positions[i]!;
    out[i - from + 1] = t ? positions[i + 1]! * t.scale[1] + t.translate[1] : positions[i + 1]!;
  }
  return out;
}

/** Packs an already parsed topology (hand-written ones in tests; the reference for the byte reader). */
export function packTopology(topology: Topology): PackedTopology {
  const count = topology.arcs.reduce((sum, arc) => sum + arc.length, 0);
  const positions = topology.transform ? new Int32Array(2 * count) : new Float64Array(2 * count);
  const arcStart = new Int32Array(topology.arcs.length + 1);
  let at = 0;
  topology.arcs.forEach((arc, index) => {
    arcStart[index] = at;
    let x = 0;
    let y = 0;
    for (const [dx, dy] of arc) {
      x = topology.transform ? x + dx! : dx!;
      y = topology.transform ? y + dy! : dy!;
      positions[2 * at] = x;
      positions[2 * at + 1] = y;
      at++;
    }
  });
  arcStart[topology.arcs.length] = at;
  return { transform: topology.transform, positions, arcStart, objects: topology.objects };
}

const SPACE = new Set([0x20, 0x09, 0x0a, 0x0d]);
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const MINUS = 0x2d;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;

/** Reads a TopoJSON file's bytes (UTF-8) without building its arcs as arrays. Throws on what is not a topology. */
export function readPackedTopology(bytes: Uint8Array): PackedTopology {
  const text = (from: number, to: number) => Buffer.from(bytes.buffer, bytes.byteOffset + from, to - from).toString();
  // First the top level's members, each by its extent, so the transform is known before the arcs
  // are decoded wherever it is written (world-atlas writes it last).
  const members = new Map<string, [number, number]>();
  let i = skipSpace(bytes, 0);
  expect(bytes, i, OPEN_BRACE);
  i = skipSpace(bytes, i + 1);
  while (bytes[i] !== CLOSE_BRACE) {
    expect(bytes, i, QUOTE);
    const keyEnd = skipString(bytes, i);
    const key = JSON.parse(text(i, keyEnd)) as string;
    i = skipSpace(bytes, keyEnd);
    expect(bytes, i, COLON);
    const start = skipSpace(bytes, i + 1);
    const end = skipValue(bytes, start);
    members.set(key, [start, end]);
    i = skipSpace(bytes, end);
    if (bytes[i] === COMMA) i = skipSpace(bytes, i + 1);
    else expect(bytes, i, CLOSE_BRACE);
  }
  const parse = (key: string) => {
    const extent = members.get(key);
    return extent ? JSON.parse(text(extent[0], extent[1])) : undefined;
  };
  const arcs = members.get('arcs');
  if (!arcs || bytes[arcs[0]] !== OPEN_BRACKET) throw new Error('not a TopoJSON topology: no arcs array');
  const transform = parse('transform') as Transform | undefined;
  const { positions, arcStart } = readArcs(bytes, arcs[0], arcs[1], transform !== undefined);
  return { transform, positions, arcStart, objects: (parse('objects') ?? {}) as Topology['objects'] };
}

/**
 * The arcs array ([[[x, y], ...], ...], numbers only) in two passes over its bytes: one counts
 * arcs and positions so the arrays are allocated once at their size, one decodes.
 */
function readArcs(bytes: Uint8Array, from: number, to: number, quantised: boolean) {
  let arcs = 0;
  let count = 0;
  let depth = 0;
  for (let i = from; i < to; i++) {
    const c = bytes[i];
    if (c === OPEN_BRACKET) {
      depth++;
      if (depth === 2) arcs++;
      else if (depth === 3) count++;
      else if (depth > 3) throw new Error(`arcs: nested too deep at byte ${i}`);
    } else if (c === CLOSE_BRACKET) depth--;
  }
  const positions = quantised ? new Int32Array(2 * count) : new Float64Array(2 * count);
  const arcStart = new Int32Array(arcs + 1);
  let arc = -1;
  let at = 0;
  let x = 0;
  let y = 0;
  depth = 0;
  for (let i = from; i < to; ) {
    const c = bytes[i]!;
    if (c === OPEN_BRACKET) {
      depth++;
      if (depth === 2) {
        arcStart[++arc] = at;
        x = 0;
        y = 0;
      } else if (depth === 3) {
        // One position: two numbers, deltas from the previous position when quantised.
        const first = readNumber(bytes, skipSpace(bytes, i + 1));
        let j = skipSpace(bytes, first.end);
        expect(bytes, j, COMMA);
        const second = readNumber(bytes, skipSpace(bytes, j + 1));
        j = skipSpace(bytes, second.end);
        // A third number (an elevation) is allowed by GeoJSON and ignored, as before.
        while (bytes[j] === COMMA) j = skipSpace(bytes, readNumber(bytes, skipSpace(bytes, j + 1)).end);
        expect(bytes, j, CLOSE_BRACKET);
        x = quantised ? x + first.value : first.value;
        y = quantised ? y + second.value : second.value;
        positions[2 * at] = x;
        positions[2 * at + 1] = y;
        if (quantised && (positions[2 * at] !== x || positions[2 * at + 1] !== y)) {
          throw new Error(`arcs: position ${at} is not a quantised integer`);
        }
        at++;
        i = j + 1;
        depth--;
        continue;
      }
    } else if (c === CLOSE_BRACKET) depth--;
    else if (c !== COMMA && !SPACE.has(c)) throw new Error(`arcs: unexpected byte ${c} at ${i}`);
    i++;
  }
  arcStart[arc + 1] = at;
  return { positions, arcStart };
}

/** A JSON number: integers (all of a quantised topology) digit by digit, anything else by Number. */
function readNumber(bytes: Uint8Array, from: number): { value: number; end: number } {
  let i = bytes[from] === MINUS ? from + 1 : from;
  const digits = i;
  let value = 0;
  while (bytes[i]! >= ZERO && bytes[i]! <= NINE) value = value * 10 + (bytes[i++]! - ZERO);
  if (i === digits) throw new Error(`arcs: not a number at byte ${from}`);
  if (bytes[i] === DOT || bytes[i] === 0x65 || bytes[i] === 0x45) {
    while (i < bytes.length && /[-+0-9.eE]/.test(String.fromCharCode(bytes[i]!))) i++;
    value = Number(Buffer.from(bytes.buffer, bytes.byteOffset + from, i - from).toString());
    if (Number.isNaN(value)) throw new Error(`arcs: not a number at byte ${from}`);
    return { value, end: i };
  }
  return { value: bytes[from] === MINUS ? -value : value, end: i };
}

function skipSpace(bytes: Uint8Array, i: number): number {
  while (i < bytes.length && SPACE.has(bytes[i]!)) i++;
  return i;
}

function skipString(bytes: Uint8Array, i: number): number {
  for (let j = i + 1; j < bytes.length; j++) {
    if (bytes[j] === BACKSLASH) j++;
    else if (bytes[j] === QUOTE) return j + 1;
  }
  throw new Error(`unterminated string at byte ${i}`);
}

/** The index just after the JSON value starting at `i` (its content is checked later, by whoever parses it). */
function skipValue(bytes: Uint8Array, i: number): number {
  const c = bytes[i];
  if (c === QUOTE) return skipString(bytes, i);
  if (c === OPEN_BRACE || c === OPEN_BRACKET) {
    let depth = 0;
    for (let j = i; j < bytes.length; j++) {
      const b = bytes[j];
      if (b === QUOTE) j = skipString(bytes, j) - 1;
      else if (b === OPEN_BRACE || b === OPEN_BRACKET) depth++;
      else if ((b === CLOSE_BRACE || b === CLOSE_BRACKET) && --depth === 0) return j + 1;
    }
    throw new Error(`unterminated value at byte ${i}`);
  }
  let j = i;
  while (j < bytes.length && !SPACE.has(bytes[j]!) && bytes[j] !== COMMA && bytes[j] !== CLOSE_BRACE) j++;
  if (j === i) throw new Error(`a value expected at byte ${i}`);
  return j;
}

function expect(bytes: Uint8Array, i: number, byte: number): void {
  if (bytes[i] !== byte) {
    const found = i < bytes.length ? `'${String.fromCharCode(bytes[i]!)}'` : 'the end';
    throw new Error(`not a TopoJSON topology: '${String.fromCharCode(byte)}' expected at byte ${i}, found ${found}`);
  }
}
