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
  /** The container's own path ('' for the row). */
  path: string;
  /** The member whose value is being read (objects). */
  key: string;
}

const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
/** A run of string characters with nothing to look at: no quote, backslash, control or surrogate. */
const PLAIN = /[^"\\\u0000-\u001f\ud800-\udfff]*/y;

const fieldOf = (path: string) => (path === '' ? '(row)' : path);
const memberPath = (parent: string, key: string) =>
  parent === '' ? printableExcerpt(key) : `${parent}.${printableExcerpt(key)}`;

/** The character at pos as a message names it: "x" when it is plain ASCII, else U+XXXX. */
function describeChar(text: string, pos: number): string {
  if (pos >= text.length) return 'the end of the row';
  const code = text.codePointAt(pos)!;
  return code >= 0x20 && code < 0x7f ? `"${text[pos]}"` : `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
}

class SyntaxFailure extends Error {}

export function parseRowText(text: string, locate?: number): ParsedRow {
  const errors: RowError[] = [];
  let located: ParsedRow['located'] = locate === undefined ? undefined : null;
  let tooDeep = false;
  let pos = 0;
  const stack: Frame[] = [];

  const fail = (expected: string): never => {
    throw new SyntaxFailure(`not valid JSON: ${expected} at column ${pos + 1}, found ${describeChar(text, pos)}`);
  };
  const skipWs = () => {
    for (;;) {
      const c = text.charCodeAt(pos);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) pos++;
      else return;
    }
  };
  /** The path of the value about to be read. */
  const valuePath = (): string => {
    const top = stack[stack.length - 1];
    if (!top) return '';
    return top.array ? `${top.path}[${(top.value as unknown[]).length}]` : memberPath(top.path, top.key);
  };

  /** A string at pos (on its opening quote); `path` names it in errors. */
  const readString = (path: () => string, memberName: boolean): string => {
    const start = pos;
    pos++;
    let out = '';
    for (;;) {
      PLAIN.lastIndex = pos;
      PLAIN.test(text);
      if (PLAIN.lastIndex > pos) {
        out += text.slice(pos, PLAIN.lastIndex);
        pos = PLAIN.lastIndex;
      }
      const c = text.charCodeAt(pos);
      if (Number.isNaN(c)) fail('a string that ends with "');
      if (c === 0x22) break;
      if (c < 0x20) fail('a control character written as an escape (e.g. \\n) inside a string');
      if (c >= 0xd800 && c <= 0xdfff) {
        // Raw surrogates: only from a JavaScript string, never from UTF-8 text.
        const next = text.charCodeAt(pos + 1);
        if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
          out += text.slice(pos, pos + 2);
          pos += 2;
        } else {
          errors.push({ field: fieldOf(path()), rule: 'holds half of a surrogate pair: not a character' });
          out += text[pos];
          pos++;
        }
        continue;
      }
      // A backslash.
      const e = text[pos + 1];
      if (e === 'u') {
        const unit = readHex(pos + 2);
        pos += 6;
        if (unit >= 0xd800 && unit <= 0xdbff && text.startsWith('\\u', pos)) {
          const low = readHex(pos + 2);
          if (low >= 0xdc00 && low <= 0xdfff) {
            out += String.fromCharCode(unit, low);
            pos += 6;
            continue;
          }
        }
        if (unit >= 0xd800 && unit <= 0xdfff) {
          errors.push({
            field: fieldOf(path()),
            rule: `holds \\u${unit.toString(16).padStart(4, '0')}, half of a surrogate pair without its other half: not a character (it could only be sent as U+FFFD)`,
          });
        } else if (unit === 0) {
          errors.push({
            field: fieldOf(path()),
            rule: 'holds \\u0000 (NUL): a text cannot hold it (PostgreSQL refuses it, so it could not be sent as written); remove it',
          });
        }
        out += String.fromCharCode(unit);
        continue;
      }
      const simple = e === undefined ? undefined : ESCAPES[e];
      pos++;
      if (simple === undefined) fail('an escape of ", \\, /, b, f, n, r, t or uXXXX after a backslash');
      out += simple;
      pos++;
    }
    pos++;
    if (locate !== undefined && located === null && locate >= start && locate < pos) {
      located = { field: fieldOf(path()), memberName };
    }
    return out;
  };
  const readHex = (at: number): number => {
    const hex = text.slice(at, at + 4);
    if (!/^[0-9a-fA-F]{4}$/.test(hex)) {
      pos = at;
      fail('4 hexadecimal digits after \\u');
    }
    return Number.parseInt(hex, 16);
  };
  const readNumber = (path: () => string): number => {
    NUMBER.lastIndex = pos;
    const m = NUMBER.exec(text);
    if (!m) return fail('a value');
    pos = NUMBER.lastIndex;
    const written = m[0];
    const n = Number(written);
    if (!Number.isFinite(n)) {
      errors.push({
        field: fieldOf(path()),
        rule: `${printableExcerpt(written)} is beyond the range of a number (about ±1.8e308): it cannot be sent as written`,
      });
    } else if (!sameDecimal(written, String(n))) {
      errors.push({
        field: fieldOf(path()),
        rule: `${printableExcerpt(written)} has more digits than a number holds (about 15 significant): it would be sent as ${n}; write it with fewer digits`,
      });
    }
    return n;
  };
  /** Reads the member name after `{` or `,` and its colon. */
  const readMemberName = (frame: Frame) => {
    skipWs();
    if (text.charCodeAt(pos) !== 0x22) fail('a member name in double quotes');
    const key = readString(() => frame.path, true);
    if (!isDeep(frame) && Object.hasOwn(frame.value, key)) {
      errors.push({
        field: fieldOf(memberPath(frame.path, key)),
        rule: 'given twice in one object: only one could be sent; keep one',
      });
    }
    skipWs();
    if (text.charCodeAt(pos) !== 0x3a) fail('":" after a member name');
    pos++;
    frame.key = key;
  };
  // Past the limit the row is refused: containers there are only checked for syntax, each one of
  // these two frames, which keep nothing (a 16 MiB row of brackets must not become 8 million arrays).
  const deepArray: Frame = { array: true, value: [], path: '', key: '' };
  const deepObject: Frame = { array: false, value: {}, path: '', key: '' };
  const isDeep = (frame: Frame) => frame === deepArray || frame === deepObject;
  const open = (array: boolean): Frame => {
    if (stack.length >= MAX_ROW_DEPTH) {
      if (!tooDeep) {
        tooDeep = true;
        // Named by the member it is in: a path of 60 list positions ([0][0]…) says less.
        errors.push({
          field: fieldOf(valuePath().replace(/(\[\d+\])+$/, '')),
          rule: `nested deeper than ${MAX_ROW_DEPTH} levels (a shipment row needs 5)`,
        });
      }
      const frame = array ? deepArray : deepObject;
      stack.push(frame);
      return frame;
    }
    const frame: Frame = { array, value: array ? [] : {}, path: valuePath(), key: '' };
    stack.push(frame);
    return frame;
  };

  let value: unknown;
  try {
    // Each turn reads one value at pos, then closes every container it completes.
    for (;;) {
      skipWs();
      const c = text.charCodeAt(pos);
      let complete = true;
      if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
        const array = c === 0x5b;
        const frame = open(array);
        pos++;
        skipWs();
        if (text.charCodeAt(pos) === (array ? 0x5d : 0x7d)) {
          pos++;
          stack.pop();
          value = frame.value;
        } else {
          if (!array) readMemberName(frame);
          complete = false;
        }
      } else if (c === 0x22) value = readString(valuePath, false);
      else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) value = readNumber(valuePath);
      else if (text.startsWith('true', pos)) (value = true), (pos += 4);
      else if (text.startsWith('false', pos)) (value = false), (pos += 5);
      else if (text.startsWith('null', pos)) (value = null), (pos += 4);
      else fail('a value');
      if (!complete) continue;
      // A value is complete: put it in its container, then see what follows.
      let next = false;
      while (!next) {
        const top = stack[stack.length - 1];
        if (!top) {
          skipWs();
          if (pos < text.length) fail('the end of the row after its value');
          return {
            value,
            errors,
            syntax: false,
            ...(located === undefined ? {} : { located }),
          };
        }
        if (isDeep(top)) {
          // nothing is kept past the depth limit
        } else if (top.array) (top.value as unknown[]).push(value);
        else if (top.key === '__proto__')
          Object.defineProperty(top.value, top.key, { value, writable: true, enumerable: true, configurable: true });
        else (top.value as Record<string, unknown>)[top.key] = value;
        skipWs();
        const d = text.charCodeAt(pos);
        if (d === 0x2c /* , */) {
          pos++;
          if (!top.array) readMemberName(top);
          next = true;
        } else if (d === (top.array ? 0x5d : 0x7d)) {
          pos++;
          stack.pop();
          value = top.value;
        } else fail(top.array ? '"," or "]" after an item' : '"," or "}" after a member');
      }
    }
  } catch (error) {
    if (!(error instanceof SyntaxFailure)) throw error;
    return {
      errors: [{ field: '(row)', rule: error.message }],
      syntax: true,
      ...(located === undefined ? {} : { located }),
    };
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
