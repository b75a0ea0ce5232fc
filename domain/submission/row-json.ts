import { printableExcerpt } from './printable.ts';
import type { RowError } from './shipment-rules.ts';

/**
 * One row of a shipments file (an NDJSON line or an item of a JSON array) from its text to a value,
 * or the reasons it cannot be sent as written. The grammar is JSON's (RFC 8259), exactly what
 * JSON.parse accepts; on top of it a row is refused, naming the field, when:
 * - a member name appears twice in one object (JSON.parse keeps the last: the first would vanish);
 * - a string holds U+0000 (PostgreSQL text cannot store it: it would be dropped) or half of a
 *   surrogate pair written as `\uD800` (not a character: it would be replaced by U+FFFD);
 * - a number cannot be held exactly as what is written (more digits than a double keeps, or beyond
 *   its range): it would be sent as another number;
 * - it nests deeper than MAX_ROW_DEPTH (a shipment needs 5 levels).
 * Iterative, never recursive: no input can exhaust the stack. Pure.
 */

export const MAX_ROW_DEPTH = 64;

export interface ParsedRow {
  /** The row's value; absent when its text is not JSON (past the depth limit, containers are left empty). */
  value?: unknown;
  /** Why the row cannot be sent as written (empty when it can). */
  errors: RowError[];
  /** True when the text is not JSON at all (for a JSON array: the file is broken, not just this row). */
  syntax: boolean;
  /** With `locate`: the field whose text covers that character, or null (not inside a string). */
  located?: { field: string; memberName: boolean } | null;
}

interface Frame {
  array: boolean;
  value: Record<string, unknown> | unknown[];
  /** How its container reaches it: a member name or a position ('' for the row). */
  at: string | number;
  /** The member whose value is being read (objects). */
  key: string;
}

const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
/** A run of string characters with nothing to look at: no quote, backslash, control or surrogate. */
const PLAIN = /[^"\\\u0000-\u001f\ud800-\udfff]*/y;

const fieldOf = (path: string) => (path === '' ? '(row)' : path);
/** The path of a child of `parent` (a path), reached by `at` in an array or an object. */
const childPath = (parent: string, inArray: boolean, at: string | number) =>
  inArray
    ? `${parent}[${at}]`
    : parent === ''
      ? printableExcerpt(at as string)
      : `${parent}.${printableExcerpt(at as string)}`;

/** The character at pos as a message names it: "x" when it is plain ASCII, else U+XXXX. */
function describeChar(text: string, pos: number): string {
  if (pos >= text.length) return 'the end of the row';
  const code = text.codePointAt(pos)!;
  return code >= 0x20 && code < 0x7f ? `"${text[pos]}"` : `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
}

class SyntaxFailure extends Error {}

export function parseRowText(text: string, locate?: number): ParsedRow {
  return new RowParser(text, locate).parse();
}

/** One row's parse: its state on an instance (no closures per row: each costs where tsx keeps names). */
class RowParser {
  private readonly errors: RowError[] = [];
  private located: ParsedRow['located'];
  private tooDeep = false;
  private pos = 0;
  private readonly stack: Frame[] = [];
  // Past the limit the row is refused: containers there are only checked for syntax, each one of
  // these two frames, which keep nothing (a 16 MiB row of brackets must not become 8 million arrays).
  private readonly deepArray: Frame = { array: true, value: [], at: '', key: '' };
  private readonly deepObject: Frame = { array: false, value: {}, at: '', key: '' };

  constructor(
    private readonly text: string,
    private readonly locate: number | undefined,
  ) {
    this.located = locate === undefined ? undefined : null;
  }

  parse(): ParsedRow {
    const { text, stack } = this;
    let value: unknown;
    try {
      // Each turn reads one value at pos, then closes every container it completes.
      for (;;) {
        this.skipWs();
        const c = text.charCodeAt(this.pos);
        let complete = true;
        if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
          const array = c === 0x5b;
          const frame = this.open(array);
          this.pos++;
          this.skipWs();
          if (text.charCodeAt(this.pos) === (array ? 0x5d : 0x7d)) {
            this.pos++;
            stack.pop();
            value = frame.value;
          } else {
            if (!array) this.readMemberName(frame);
            complete = false;
          }
        } else if (c === 0x22) value = this.readString(false);
        else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) value = this.readNumber();
        else if (text.startsWith('true', this.pos)) (value = true), (this.pos += 4);
        else if (text.startsWith('false', this.pos)) (value = false), (this.pos += 5);
        else if (text.startsWith('null', this.pos)) (value = null), (this.pos += 4);
        else this.fail('a value');
        if (!complete) continue;
        // A value is complete: put it in its container, then see what follows.
        let next = false;
        while (!next) {
          const top = stack[stack.length - 1];
          if (!top) {
            this.skipWs();
            if (this.pos < text.length) this.fail('the end of the row after its value');
            return this.result({ value, errors: this.errors, syntax: false });
          }
          if (this.isDeep(top)) {
            // nothing is kept past the depth limit
          } else if (top.array) (top.value as unknown[]).push(value);
          else if (top.key === '__proto__')
            Object.defineProperty(top.value, top.key, { value, writable: true, enumerable: true, configurable: true });
          else (top.value as Record<string, unknown>)[top.key] = value;
          this.skipWs();
          const d = text.charCodeAt(this.pos);
          if (d === 0x2c /* , */) {
            this.pos++;
            if (!top.array) this.readMemberName(top);
            next = true;
          } else if (d === (top.array ? 0x5d : 0x7d)) {
            this.pos++;
            stack.pop();
            value = top.value;
          } else this.fail(top.array ? '"," or "]" after an item' : '"," or "}" after a member');
        }
      }
    } catch (error) {
      if (!(error instanceof SyntaxFailure)) throw error;
      return this.result({ errors: [{ field: '(row)', rule: error.message }], syntax: true });
    }
  }

  private result(row: ParsedRow): ParsedRow {
    return this.located === undefined ? row : { ...row, located: this.located };
  }

  private fail(expected: string): never {
    throw new SyntaxFailure(
      `not valid JSON: ${expected} at column ${this.pos + 1}, found ${describeChar(this.text, this.pos)}`,
    );
  }

  private skipWs(): void {
    const { text } = this;
    for (;;) {
      const c = text.charCodeAt(this.pos);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) this.pos++;
      else return;
    }
  }

  // Paths are made only for a message: the stack is the chain of containers from the row down.
  /** The path of the container at this depth of the stack (past the depth limit: of the last one kept). */
  private containerPath(depth: number): string {
    const { stack } = this;
    let path = '';
    for (let j = 1; j <= Math.min(depth, MAX_ROW_DEPTH - 1); j++)
      path = childPath(path, stack[j - 1]!.array, stack[j]!.at);
    return path;
  }

  /** The path of the value about to be read. */
  private valuePath(): string {
    const { stack } = this;
    const top = stack[stack.length - 1];
    if (!top) return '';
    if (stack.length > MAX_ROW_DEPTH) return this.containerPath(MAX_ROW_DEPTH - 1);
    return childPath(
      this.containerPath(stack.length - 1),
      top.array,
      top.array ? (top.value as unknown[]).length : top.key,
    );
  }

  private refuse(memberName: boolean, rule: string): void {
    this.errors.push({
      field: fieldOf(memberName ? this.containerPath(this.stack.length - 1) : this.valuePath()),
      rule,
    });
  }

  /** A string at pos (on its opening quote): a member name of the innermost container, or a value. */
  private readString(memberName: boolean): string {
    const { text } = this;
    const start = this.pos;
    let pos = start + 1;
    let out = '';
    for (;;) {
      PLAIN.lastIndex = pos;
      PLAIN.test(text);
      if (PLAIN.lastIndex > pos) {
        out += text.slice(pos, PLAIN.lastIndex);
        pos = PLAIN.lastIndex;
      }
      const c = text.charCodeAt(pos);
      this.pos = pos;
      if (Number.isNaN(c)) this.fail('a string that ends with "');
      if (c === 0x22) break;
      if (c < 0x20) this.fail('a control character written as an escape (e.g. \\n) inside a string');
      if (c >= 0xd800 && c <= 0xdfff) {
        // Raw surrogates: only from a JavaScript string, never from UTF-8 text.
        const next = text.charCodeAt(pos + 1);
        if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
          out += text.slice(pos, pos + 2);
          pos += 2;
        } else {
          this.refuse(memberName, 'holds half of a surrogate pair: not a character');
          out += text[pos];
          pos++;
        }
        continue;
      }
      // A backslash.
      const e = text[pos + 1];
      if (e === 'u') {
        const unit = this.readHex(pos + 2);
        pos += 6;
        if (unit >= 0xd800 && unit <= 0xdbff && text.startsWith('\\u', pos)) {
          const low = this.readHex(pos + 2);
          if (low >= 0xdc00 && low <= 0xdfff) {
            out += String.fromCharCode(unit, low);
            pos += 6;
            continue;
          }
        }
        if (unit >= 0xd800 && unit <= 0xdfff) {
          this.refuse(
            memberName,
            `holds \\u${unit.toString(16).padStart(4, '0')}, half of a surrogate pair without its other half: not a character (it could only be sent as U+FFFD)`,
          );
        } else if (unit === 0) {
          this.refuse(
            memberName,
            'holds \\u0000 (NUL): a text cannot hold it (PostgreSQL refuses it, so it could not be sent as written); remove it',
          );
        }
        out += String.fromCharCode(unit);
        continue;
      }
      const simple = e === undefined ? undefined : ESCAPES[e];
      this.pos = pos + 1;
      if (simple === undefined) this.fail('an escape of ", \\, /, b, f, n, r, t or uXXXX after a backslash');
      out += simple;
      pos += 2;
    }
    this.pos = pos + 1;
    const { locate } = this;
    if (locate !== undefined && this.located === null && locate >= start && locate < this.pos) {
      this.located = {
        field: fieldOf(memberName ? this.containerPath(this.stack.length - 1) : this.valuePath()),
        memberName,
      };
    }
    return out;
  }

  private readHex(at: number): number {
    const hex = this.text.slice(at, at + 4);
    if (!/^[0-9a-fA-F]{4}$/.test(hex)) {
      this.pos = at;
      this.fail('4 hexadecimal digits after \\u');
    }
    return Number.parseInt(hex, 16);
  }

  private readNumber(): number {
    NUMBER.lastIndex = this.pos;
    const m = NUMBER.exec(this.text);
    if (!m) return this.fail('a value');
    this.pos = NUMBER.lastIndex;
    const written = m[0];
    const n = Number(written);
    if (!Number.isFinite(n)) {
      this.refuse(
        false,
        `${printableExcerpt(written)} is beyond the range of a number (about ±1.8e308): it cannot be sent as written`,
      );
    } else if (String(n) !== written && !sameDecimal(written, String(n))) {
      this.refuse(
        false,
        `${printableExcerpt(written)} has more digits than a number holds (about 15 significant): it would be sent as ${n}; write it with fewer digits`,
      );
    }
    return n;
  }

  /** Reads the member name after `{` or `,` and its colon. */
  private readMemberName(frame: Frame): void {
    this.skipWs();
    if (this.text.charCodeAt(this.pos) !== 0x22) this.fail('a member name in double quotes');
    const key = this.readString(true);
    if (!this.isDeep(frame) && Object.hasOwn(frame.value, key)) {
      this.errors.push({
        field: fieldOf(childPath(this.containerPath(this.stack.length - 1), false, key)),
        rule: 'given twice in one object: only one could be sent; keep one',
      });
    }
    this.skipWs();
    if (this.text.charCodeAt(this.pos) !== 0x3a) this.fail('":" after a member name');
    this.pos++;
    frame.key = key;
  }

  private isDeep(frame: Frame): boolean {
    return frame === this.deepArray || frame === this.deepObject;
  }

  private open(array: boolean): Frame {
    const { stack } = this;
    if (stack.length >= MAX_ROW_DEPTH) {
      if (!this.tooDeep) {
        this.tooDeep = true;
        // Named by the member it is in: a path of 60 list positions ([0][0]…) says less.
        this.errors.push({
          field: fieldOf(this.valuePath().replace(/(\[\d+\])+$/, '')),
          rule: `nested deeper than ${MAX_ROW_DEPTH} levels (a shipment row needs 5)`,
        });
      }
      const frame = array ? this.deepArray : this.deepObject;
      stack.push(frame);
      return frame;
    }
    const top = stack[stack.length - 1];
    const at = top === undefined ? '' : top.array ? (top.value as unknown[]).length : top.key;
    const frame: Frame = { array, value: array ? [] : {}, at, key: '' };
    stack.push(frame);
    return frame;
  }
}

const ESCAPES: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };

/** A decimal as (sign, significant digits, exponent): 1.50e2 → (+, "15", 3), meaning 0.15 × 10^3. */
function decimal(text: string): { negative: boolean; digits: string; exponent: number } {
  const m = /^(-?)([0-9]+)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?$/.exec(text)!;
  const all = m[2]! + (m[3] ?? '');
  let exponent = m[2]!.length + (m[4] === undefined ? 0 : Number(m[4]));
  const lead = /^0*/.exec(all)![0].length;
  exponent -= lead;
  const digits = all.slice(lead).replace(/0+$/, '');
  // Zero has no sign worth keeping: -0 is sent as 0, the same number.
  return digits === '' ? { negative: false, digits: '', exponent: 0 } : { negative: m[1] === '-', digits, exponent };
}

/** Whether two decimal numerals name the same number (1.50 and 1.5e0 do; 0.1 and 0.1000000000000000055 do not). */
export function sameDecimal(a: string, b: string): boolean {
  const x = decimal(a);
  const y = decimal(b);
  return x.negative === y.negative && x.digits === y.digits && x.exponent === y.exponent;
}
