import { decodeUtf8 } from './utf8.ts';
/**
 * A JSON array's elements found in its bytes, without parsing them: where each starts and ends, and
 * the `id` each object element carries at its top level. A page too large to parse whole is split
 * with this, and each element is then parsed alone (JSON.parse of one plot), so the page never has to
 * be whole in memory as objects. Scanning bytes is exact for UTF-8: every byte JSON's structure is
 * made of (`[]{}",:\` and whitespace) is ASCII, and no byte of a multi-byte character is below 0x80.
 *
 * The scan checks the structure only (strings closed, brackets paired, elements separated by
 * commas, nothing after the array): the values inside an element are checked by JSON.parse when the
 * element is read. Measured here on a 72 MB page of 500 plots of 5,000 vertices: the scan 0.36 s, its
 * 500 elements parsed one by one 0.54 s, the whole page parsed at once 0.86 s.
 */

/** Where the elements of an array are in its bytes, in order. */
export interface ArrayElements {
  /** Byte offset of each element's first byte. */
  readonly starts: readonly number[];
  /** Byte offset just past each element's last byte. */
  readonly ends: readonly number[];
  /**
   * Per element, its top-level `id` when the element is an object whose last `id` key has a string
   * value (JSON.parse keeps the last of repeated keys); otherwise null.
   */
  readonly ids: readonly (string | null)[];
}

/** The bytes are not one JSON array: `message` names what was found where (a byte offset). */
export class ArraySplitError extends Error {
  override name = 'ArraySplitError';
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;

function isSpace(b: number): boolean {
  return b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;
}

function describe(bytes: Uint8Array, at: number): string {
  if (at >= bytes.length) return `the end after ${bytes.length} bytes`;
  const b = bytes[at]!;
  const shown = b >= 0x20 && b < 0x7f ? `'${String.fromCharCode(b)}'` : `byte 0x${b.toString(16).padStart(2, '0')}`;
  return `${shown} at byte ${at}`;
}

/** Offset just past the string whose opening quote is at `at`. */
function skipString(bytes: Uint8Array, at: number): number {
  let i = at + 1;
  for (;;) {
    const close = bytes.indexOf(QUOTE, i);
    if (close < 0) throw new ArraySplitError(`a string opened at byte ${at} is not closed before the end`);
    // The quote is escaped when an odd number of backslashes stands right before it.
    let slashes = 0;
    for (let j = close - 1; j > at && bytes[j] === BACKSLASH; j--) slashes++;
    if (slashes % 2 === 0) return close + 1;
    i = close + 1;
  }
}

/** The text of a string token [from, to) as JSON reads it (escapes resolved). */
function stringValue(bytes: Uint8Array, from: number, to: number): string {
  const raw = decodeUtf8(bytes.subarray(from, to));
  return raw.includes('\\') ? (JSON.parse(raw) as string) : raw.slice(1, -1);
}

function isIdKey(bytes: Uint8Array, from: number, to: number): boolean {
  if (to - from === 4) return bytes[from + 1] === 0x69 && bytes[from + 2] === 0x64;
  // `"\u0069d"` and the like: rare, resolved exactly.
  return to - from > 4 && bytes.subarray(from, to).includes(BACKSLASH) && stringValue(bytes, from, to) === 'id';
}

/**
 * Splits the bytes of one JSON array into its elements. Throws ArraySplitError when the bytes are not
 * one array (truncated, garbled, or not an array at all), naming what was found and where.
 */
export function splitArrayElements(bytes: Uint8Array): ArrayElements {
  const starts: number[] = [];
  const ends: number[] = [];
  const ids: (string | null)[] = [];
  const n = bytes.length;
  let i = skipSpace(bytes, 0);
  // A byte-order mark is dropped, as the page's decoding drops it.
  if (bytes[i] === 0xef && bytes[i + 1] === 0xbb && bytes[i + 2] === 0xbf) i = skipSpace(bytes, i + 3);
  if (bytes[i] !== OPEN_ARRAY) throw new ArraySplitError(`expected '[' to open the array, found ${describe(bytes, i)}`);
  i = skipSpace(bytes, i + 1);
  if (bytes[i] === CLOSE_ARRAY) i++;
  else
    for (;;) {
      if (i >= n) throw new ArraySplitError(`the array is not closed: found ${describe(bytes, i)}`);
      const start = i;
      const b = bytes[i]!;
      let id: string | null = null;
      if (b === OPEN_OBJECT || b === OPEN_ARRAY) ({ end: i, id } = skipBracketed(bytes, i, starts.length));
      else if (b === QUOTE) i = skipString(bytes, i);
      else if (b === COMMA || b === CLOSE_ARRAY || b === COLON || b === CLOSE_OBJECT)
        throw new ArraySplitError(`expected element ${starts.length}, found ${describe(bytes, i)}`);
      // A number, true, false or null: JSON.parse checks it when the element is read.
      else while (i < n && !isSpace(bytes[i]!) && bytes[i] !== COMMA && bytes[i] !== CLOSE_ARRAY) i++;
      starts.push(start);
      ends.push(i);
      ids.push(id);
      i = skipSpace(bytes, i);
      if (bytes[i] === COMMA) {
        i = skipSpace(bytes, i + 1);
        continue;
      }
      if (bytes[i] === CLOSE_ARRAY) {
        i++;
        break;
      }
      throw new ArraySplitError(`expected ',' or ']' after element ${starts.length - 1}, found ${describe(bytes, i)}`);
    }
  i = skipSpace(bytes, i);
  if (i < n) throw new ArraySplitError(`unexpected ${describe(bytes, i)} after the array`);
  return { starts, ends, ids };
}

function skipSpace(bytes: Uint8Array, at: number): number {
  let i = at;
  while (i < bytes.length && isSpace(bytes[i]!)) i++;
  return i;
}

/**
 * Offset just past the object or array opened at `at` (element `index`), and, for an object, the
 * string value of its last top-level `id` key.
 */
function skipBracketed(bytes: Uint8Array, at: number, index: number): { end: number; id: string | null } {
  const n = bytes.length;
  // The brackets open, innermost last.
  const stack: number[] = [];
  let id: string | null = null;
  // At the element's own top level: a key comes next (after '{' or ','), or the value of `id` does.
  let keyNext = false;
  let idNext = false;
  let i = at;
  while (i < n) {
    const b = bytes[i]!;
    const top = stack.length === 1 && stack[0] === OPEN_OBJECT;
    if (b === QUOTE) {
      const end = skipString(bytes, i);
      if (top && keyNext) {
        const colon = skipSpace(bytes, end);
        if (bytes[colon] !== COLON)
          throw new ArraySplitError(`expected ':' after a key in element ${index}, found ${describe(bytes, colon)}`);
        idNext = isIdKey(bytes, i, end);
        keyNext = false;
        i = colon + 1;
        continue;
      }
      if (top && idNext) id = stringValue(bytes, i, end);
      idNext = false;
      i = end;
      continue;
    }
    if (b === OPEN_OBJECT || b === OPEN_ARRAY) {
      // A later `id` that is not a string wins over an earlier one that was (JSON.parse keeps the last).
      if (top && idNext) id = null;
      idNext = false;
      stack.push(b);
      keyNext = stack.length === 1 && b === OPEN_OBJECT;
    } else if (b === CLOSE_OBJECT || b === CLOSE_ARRAY) {
      if (stack.pop() !== (b === CLOSE_OBJECT ? OPEN_OBJECT : OPEN_ARRAY))
        throw new ArraySplitError(`unexpected ${describe(bytes, i)} in element ${index}`);
      if (stack.length === 0) return { end: i + 1, id };
    } else if (b === COMMA) {
      keyNext = top;
    } else if (top && idNext && !isSpace(b)) {
      id = null;
      idNext = false;
    }
    i++;
  }
  throw new ArraySplitError(`element ${index} is not closed: found ${describe(bytes, n)}`);
}

/** The text of element `index`, decoded as the whole page is: bytes that are not UTF-8 refused (NotUtf8Error). */
export function elementText(bytes: Uint8Array, elements: ArrayElements, index: number): string {
  return decodeUtf8(bytes.subarray(elements.starts[index]!, elements.ends[index]!));
}
