// Deterministic hashing and pseudo-random streams: every generated value is a pure function of
// (seed, entity, index), so the dataset needs no storage and is identical across runs.

function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** 32-bit hash of a string (FNV-1a followed by a murmur finaliser). */
export function hashString(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return fmix32(h);
}

/** 32-bit hash of a tuple of integers (and strings, hashed first). */
export function hash(...parts: Array<number | string>): number {
  let h = 0x9e3779b9;
  for (const part of parts) {
    const p = typeof part === 'string' ? hashString(part) : part;
    // Split numbers above 2^32 so large indices still hash distinctly.
    h = fmix32((h ^ Math.imul((p >>> 0) + 0x7f4a7c15, 0x27d4eb2f)) + Math.floor(p / 0x100000000));
  }
  return h;
}

/** Uniform float in [0, 1) derived from the parts. */
export function unit(...parts: Array<number | string>): number {
  return hash(...parts) / 0x100000000;
}

/** A mulberry32 stream for code that needs many values from one (seed, entity, index). */
export class Rand {
  private state: number;
  constructor(...parts: Array<number | string>) {
    this.state = hash(...parts);
  }
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 0x100000000;
  }
  int(minInclusive: number, maxInclusive: number): number {
    return minInclusive + Math.floor(this.next() * (maxInclusive - minInclusive + 1));
  }
  pick<T>(items: readonly T[]): T {
    const item = items[Math.floor(this.next() * items.length)];
    if (item === undefined) throw new Error('pick from an empty list');
    return item;
  }
  chance(probability: number): boolean {
    return this.next() < probability;
  }
}

function hex8(n: number): string {
  return (n >>> 0).toString(16).padStart(8, '0');
}

/** A version-4-shaped UUID derived from the parts. */
export function uuidFor(...parts: Array<number | string>): string {
  const a = hex8(hash(...parts, 1));
  const b = hex8(hash(...parts, 2));
  const c = hex8(hash(...parts, 3));
  const d = hex8(hash(...parts, 4));
  const variant = ((parseInt(c[0] ?? '0', 16) & 0x3) | 0x8).toString(16);
  return `${a}-${b.slice(0, 4)}-4${b.slice(5, 8)}-${variant}${c.slice(1, 4)}-${c.slice(4)}${d}`;
}

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

/** Upper-case alphanumerics derived from the parts (DDS reference and verification numbers). */
export function codeFor(length: number, ...parts: Array<number | string>): string {
  const rand = new Rand(...parts);
  let out = '';
  for (let i = 0; i < length; i++) out += ALPHANUMERIC[Math.floor(rand.next() * ALPHANUMERIC.length)];
  return out;
}
