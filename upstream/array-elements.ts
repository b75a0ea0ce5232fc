import { decodeUtf8 } from './utf8.ts';
/**
 * A JSON array's elements found in its bytes, without parsing them: where each starts and ends, and
 * the `id` each object element carries at its top level. A page too large to parse whole is split
 * with this, and each element is then parsed alone (JSON.parse of one plot), so the page never has to
 * be whole in memory as objects. Scanning bytes is exact for UTF-8: every byte JSON's structure is
 * made of (`[]{}",:\` and whitespace) is ASCII, and no byte of a multi-byte character is below 0x80.
 *
 * The scan is fed the bytes chunk by chunk as they arrive (ArrayScanner), so a page kept on disk
 * (spilled-page.ts) is split without ever being whole in memory; splitArrayElements scans bytes held
 * whole. Both are the same scan. It checks the structure only (strings closed, brackets paired,
 * elements separated by commas, nothing after the array): the values inside an element are checked by
 * JSON.parse when the element is read.
 */

/** Where the elements of an array are in its bytes, in order. */
export interface ArrayElements {
  /** Byte offset of each element's first byte. */
  readonly starts: readonly number[];
  /** Byte offset just past each element's last byte. */
  readonly ends: readonly number[];
  /**
   * Per element, its top-level `id` when the element is an object whose last `id` key has a string
   * value (JSON.parse keeps the last of repeated keys); otherwise null. An id of more than
   * MAX_SCANNED_ID_BYTES is not kept (null): the scan holds no more than that of any string.
   */
  readonly ids: readonly (string | null)[];
}

/** The bytes are not one JSON array: `message` names what was found where (a byte offset). */
export class ArraySplitError extends Error {
  override name = 'ArraySplitError';
}

/** The longest id the scan keeps (a plot's id is a UUID: 36 bytes). */
export const MAX_SCANNED_ID_BYTES = 64 * 1024;
/** A key longer than this cannot be `id`, however escaped (`"\u0069\u0064"` is 14 bytes). */
const MAX_ID_KEY_BYTES = 16;

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

function shown(b: number, at: number): string {
  const what = b >= 0x20 && b < 0x7f ? `'${String.fromCharCode(b)}'` : `byte 0x${b.toString(16).padStart(2, '0')}`;
  return `${what} at byte ${at}`;
}

/** Where the scan is, between two bytes. */
enum Where {
  /** Before the array's '[' (spaces, a byte-order mark). */
  Before,
  /** Inside the byte-order mark (its second or third byte next). */
  Bom,
  /** Just after '[': an element or ']'. */
  First,
  /** After a ',': an element. */
  Next,
  /** Inside an element that is an object or an array. */
  Bracketed,
  /** Inside an element that is a string. */
  StringElement,
  /** Inside an element that is a number, true, false or null. */
  Scalar,
  /** After an element: ',' or ']'. */
  After,
  /** After a top-level key of an object element: ':'. */
  Colon,
  /** After the array's ']': spaces only. */
  Done,
}

/** What the string being read inside an element is, at the element's own top level. */
enum Capture {
  None,
  Key,
  Id,
}

/**
 * The scan, fed chunk by chunk (`push`), ended by `end`. Holds the offsets and ids found and at most
 * MAX_SCANNED_ID_BYTES of any string: a page of any size is scanned in the memory of its chunks.
 */
export class ArrayScanner {
  private readonly starts: number[] = [];
  private readonly ends: number[] = [];
  private readonly ids: (string | null)[] = [];
  /** Elements found so far. */
  private count = 0;
  /** Offset of the next byte pushed. */
  private offset = 0;
  private where = Where.Before;
  private bomAt = 0;
  // Inside an element.
  private start = 0;
  /** The brackets open, innermost last. */
  private readonly stack: number[] = [];
  private inString = false;
  private escaped = false;
  private stringAt = 0;
  private id: string | null = null;
  /** At the element's own top level: a key comes next (after '{' or ','), or the value of `id` does. */
  private keyNext = false;
  private idNext = false;
  private capture = Capture.None;
  private captured: Uint8Array[] = [];
  private capturedBytes = 0;
  private capturedEscapes = false;
  /** The key read last at the top level, whose ':' is awaited: whether it was `id`. */
  private keyWasId = false;

  /**
   * `onElement`: told of each element as the scan finds its end, which the scan then forgets (an array of
   * any length scanned in constant memory; `end` then returns no elements). Without it, they are kept.
   */
  constructor(private readonly onElement?: (start: number, end: number, id: string | null) => void) {}

  /** Where the element being scanned began, while one is (its bytes so far: up to the last pushed). */
  get openElementStart(): number | undefined {
    const w = this.where;
    return w === Where.Bracketed || w === Where.StringElement || w === Where.Scalar || w === Where.Colon
      ? this.start
      : undefined;
  }

  /** Scans `chunk`, the bytes right after those pushed before. Throws ArraySplitError. */
  push(chunk: Uint8Array): void {
    const n = chunk.length;
    let i = 0;
    while (i < n) {
      const b = chunk[i]!;
      const at = this.offset + i;
      switch (this.where) {
        case Where.Before:
          if (isSpace(b)) break;
          if (b === 0xef && this.bomAt === 0) {
            this.where = Where.Bom;
            this.bomAt = 1;
            break;
          }
          if (b !== OPEN_ARRAY) throw new ArraySplitError(`expected '[' to open the array, found ${shown(b, at)}`);
          this.where = Where.First;
          break;
        case Where.Bom:
          // A byte-order mark is dropped, as the page's decoding drops it.
          if ((this.bomAt === 1 && b === 0xbb) || (this.bomAt === 2 && b === 0xbf)) {
            this.bomAt++;
            if (this.bomAt === 3) this.where = Where.Before;
            break;
          }
          throw new ArraySplitError(`expected '[' to open the array, found ${shown(0xef, at - this.bomAt)}`);
        case Where.First:
        case Where.Next:
          if (isSpace(b)) break;
          if (b === CLOSE_ARRAY && this.where === Where.First) {
            this.where = Where.Done;
            break;
          }
          i = this.beginElement(chunk, i, at);
          continue;
        case Where.Bracketed:
          i = this.bracketed(chunk, i);
          continue;
        case Where.StringElement:
          i = this.stringElement(chunk, i);
          continue;
        case Where.Scalar:
          // A number, true, false or null: JSON.parse checks it when the element is read.
          if (isSpace(b) || b === COMMA || b === CLOSE_ARRAY) {
            this.endElement(at);
            continue;
          }
          break;
        case Where.Colon:
          if (isSpace(b)) break;
          if (b !== COLON)
            throw new ArraySplitError(`expected ':' after a key in element ${this.count}, found ${shown(b, at)}`);
          this.idNext = this.keyWasId;
          this.where = Where.Bracketed;
          break;
        case Where.After:
          if (isSpace(b)) break;
          if (b === COMMA) this.where = Where.Next;
          else if (b === CLOSE_ARRAY) this.where = Where.Done;
          else throw new ArraySplitError(`expected ',' or ']' after element ${this.count - 1}, found ${shown(b, at)}`);
          break;
        case Where.Done:
          if (!isSpace(b)) throw new ArraySplitError(`unexpected ${shown(b, at)} after the array`);
          break;
      }
      i++;
    }
    this.offset += n;
  }

  /** The elements, once every byte was pushed. Throws ArraySplitError when the array is not complete. */
  end(): ArrayElements {
    const end = `the end after ${this.offset} bytes`;
    switch (this.where) {
      case Where.Before:
      case Where.Bom:
        throw new ArraySplitError(`expected '[' to open the array, found ${end}`);
      case Where.First:
      case Where.Next:
        throw new ArraySplitError(`the array is not closed: found ${end}`);
      case Where.Scalar:
      case Where.After:
        throw new ArraySplitError(
          `expected ',' or ']' after element ${this.count - (this.where === Where.After ? 1 : 0)}, found ${end}`,
        );
      case Where.StringElement:
      case Where.Bracketed:
      case Where.Colon:
        if (this.inString || this.where === Where.StringElement)
          throw new ArraySplitError(`a string opened at byte ${this.stringAt} is not closed before the end`);
        if (this.where === Where.Colon)
          throw new ArraySplitError(`expected ':' after a key in element ${this.count}, found ${end}`);
        throw new ArraySplitError(`element ${this.count} is not closed: found ${end}`);
      case Where.Done:
        return { starts: this.starts, ends: this.ends, ids: this.ids };
    }
  }

  private beginElement(chunk: Uint8Array, i: number, at: number): number {
    const b = chunk[i]!;
    if (b === COMMA || b === CLOSE_ARRAY || b === COLON || b === CLOSE_OBJECT)
      throw new ArraySplitError(`expected element ${this.count}, found ${shown(b, at)}`);
    this.start = at;
    this.id = null;
    if (b === OPEN_OBJECT || b === OPEN_ARRAY) {
      this.where = Where.Bracketed;
      return i;
    }
    if (b === QUOTE) {
      this.where = Where.StringElement;
      this.inString = true;
      this.escaped = false;
      this.stringAt = at;
      return i + 1;
    }
    this.where = Where.Scalar;
    return i + 1;
  }

  private endElement(end: number): void {
    this.count++;
    this.where = Where.After;
    if (this.onElement) this.onElement(this.start, end, this.id);
    else {
      this.starts.push(this.start);
      this.ends.push(end);
      this.ids.push(this.id);
    }
  }

  /** A string element's bytes from `i`: its closing quote ends the element. */
  private stringElement(chunk: Uint8Array, from: number): number {
    const close = this.skipInString(chunk, from);
    if (close < 0) return chunk.length;
    this.inString = false;
    this.endElement(this.offset + close + 1);
    return close + 1;
  }

  /**
   * Inside a string from `from`: the index of its closing quote in `chunk`, or -1 when the chunk ends
   * first (the escape state kept for the next chunk).
   */
  private skipInString(chunk: Uint8Array, from: number): number {
    const n = chunk.length;
    let escaped = this.escaped;
    for (let i = from; i < n; i++) {
      const b = chunk[i]!;
      if (escaped) escaped = false;
      else if (b === BACKSLASH) escaped = true;
      else if (b === QUOTE) {
        this.escaped = false;
        return i;
      }
    }
    this.escaped = escaped;
    return -1;
  }

  /** Bytes of an object or array element from `from`, until it closes or the chunk ends. */
  private bracketed(chunk: Uint8Array, from: number): number {
    const stack = this.stack;
    const n = chunk.length;
    let i = from;
    while (i < n) {
      if (this.inString) {
        const close = this.skipInString(chunk, i);
        if (this.capture !== Capture.None) this.keep(chunk, i, close < 0 ? n : close);
        if (close < 0) return n;
        this.inString = false;
        i = close + 1;
        if (this.capture === Capture.Key) {
          this.keyWasId = this.capturedIsId();
          this.capture = Capture.None;
          this.where = Where.Colon;
          return i;
        }
        if (this.capture === Capture.Id) {
          this.id = this.capturedString();
          this.capture = Capture.None;
        }
        continue;
      }
      const b = chunk[i]!;
      const top = stack.length === 1 && stack[0] === OPEN_OBJECT;
      if (b === QUOTE) {
        this.inString = true;
        this.escaped = false;
        this.stringAt = this.offset + i;
        if (top && this.keyNext) {
          this.keyNext = false;
          this.startCapture(Capture.Key);
        } else if (top && this.idNext) {
          this.idNext = false;
          this.startCapture(Capture.Id);
        } else this.idNext = false;
        i++;
        continue;
      }
      if (b === OPEN_OBJECT || b === OPEN_ARRAY) {
        // A later `id` that is not a string wins over an earlier one that was (JSON.parse keeps the last).
        if (top && this.idNext) this.id = null;
        this.idNext = false;
        stack.push(b);
        this.keyNext = stack.length === 1 && b === OPEN_OBJECT;
      } else if (b === CLOSE_OBJECT || b === CLOSE_ARRAY) {
        if (stack.pop() !== (b === CLOSE_OBJECT ? OPEN_OBJECT : OPEN_ARRAY))
          throw new ArraySplitError(`unexpected ${shown(b, this.offset + i)} in element ${this.count}`);
        if (stack.length === 0) {
          this.endElement(this.offset + i + 1);
          return i + 1;
        }
      } else if (b === COMMA) {
        this.keyNext = top;
      } else if (top && this.idNext && !isSpace(b)) {
        this.id = null;
        this.idNext = false;
      }
      i++;
    }
    return n;
  }

  private startCapture(kind: Capture): void {
    this.capture = kind;
    this.captured = [];
    this.capturedBytes = 0;
    this.capturedEscapes = false;
  }

  /** Keeps a string's bytes [from, to) of `chunk` (its opening quote not included), up to the cap. */
  private keep(chunk: Uint8Array, from: number, to: number): void {
    const cap = this.capture === Capture.Key ? MAX_ID_KEY_BYTES : MAX_SCANNED_ID_BYTES;
    if (this.capturedBytes > cap) return;
    const part = chunk.slice(from, Math.min(to, from + cap + 1 - this.capturedBytes));
    this.captured.push(part);
    this.capturedBytes += part.length;
    if (!this.capturedEscapes && part.includes(BACKSLASH)) this.capturedEscapes = true;
  }

  /** The string captured, as JSON reads it (escapes resolved), or null when longer than kept. */
  private capturedString(): string | null {
    const cap = this.capture === Capture.Key ? MAX_ID_KEY_BYTES : MAX_SCANNED_ID_BYTES;
    if (this.capturedBytes > cap) return null;
    const bytes = this.captured.length === 1 ? this.captured[0]! : Buffer.concat(this.captured);
    const raw = decodeUtf8(bytes);
    if (!this.capturedEscapes) return raw;
    try {
      return JSON.parse(`"${raw}"`) as string;
    } catch {
      // Not a JSON string (a control character, a bad escape): the element's own parse says so.
      return null;
    }
  }

  private capturedIsId(): boolean {
    if (this.capturedBytes === 2 && !this.capturedEscapes) {
      const [part] = this.captured;
      const bytes = this.captured.length === 1 ? part! : Buffer.concat(this.captured);
      return bytes[0] === 0x69 && bytes[1] === 0x64;
    }
    // `"\u0069d"` and the like: rare, resolved exactly.
    return this.capturedEscapes && this.capturedString() === 'id';
  }
}

/**
 * Splits the bytes of one JSON array into its elements. Throws ArraySplitError when the bytes are not
 * one array (truncated, garbled, or not an array at all), naming what was found and where.
 */
export function splitArrayElements(bytes: Uint8Array): ArrayElements {
  const scanner = new ArrayScanner();
  scanner.push(bytes);
  return scanner.end();
}

/** The text of element `index`, decoded as the whole page is: bytes that are not UTF-8 refused (NotUtf8Error). */
export function elementText(bytes: Uint8Array, elements: ArrayElements, index: number): string {
  return decodeUtf8(bytes.subarray(elements.starts[index]!, elements.ends[index]!));
}
