import { open, type FileHandle } from 'node:fs/promises';
import { printable } from '../../domain/submission/printable.ts';
import { parseRowText } from '../../domain/submission/row-json.ts';
import type { RowError } from '../../domain/submission/shipment-rules.ts';

/**
 * The rows of a shipments file, read once as a stream of bytes (so a named pipe works, and a file of
 * any length is read in bounded memory): NDJSON (one JSON object per line; blank lines ignored) or
 * one JSON array, told apart by the first character that is not whitespace (after a UTF-8 byte order
 * mark, which is skipped at the very start only).
 *
 * Each row's bytes are decoded as UTF-8 that must be valid (never with U+FFFD in place of what is
 * not) and parsed by parseRowText (row-json.ts). A row whose bytes are not UTF-8, whose JSON is
 * broken, or that is longer than MAX_ROW_BYTES is a row with errors, named by its line; the other rows
 * go on. In a JSON array the rows are its items, numbered from 1; an item whose JSON is broken, or an
 * array that breaks off, makes the whole file a FileFormatError: where one item ends and the next
 * begins is then a guess, and nothing of a file that is not what its author meant may be sent.
 */

export interface FileRow {
  /** Line of an NDJSON file, or position (1-based) of the item in a JSON array. */
  line: number;
  /** The row's value; absent when its bytes are not JSON. */
  value?: unknown;
  /** Why the row cannot be sent as written; absent or empty when it can (the shipment rules come next). */
  errors?: RowError[];
}

/** A file ddsync cannot take rows from; the message names the file. Nothing of it is kept or sent. */
export class ShipmentFileError extends Error {
  constructor(
    readonly path: string,
    reason: string,
  ) {
    super(`${printable(path)}: ${reason}`);
  }
}
/** The file's bytes are no shipments file: a JSON array that breaks off, or no row at all. */
export class FileFormatError extends ShipmentFileError {
  override name = 'FileFormatError';
}
/** The file cannot be opened or read (missing, a directory, no permission, an I/O error). */
export class FileReadError extends ShipmentFileError {
  override name = 'FileReadError';
}

/** A row (line or item) longer than this is refused unread: no shipment comes near it. */
export const MAX_ROW_BYTES = 16 * 1024 * 1024;

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const utf8Lenient = new TextDecoder('utf-8', { ignoreBOM: true });
const NEWLINE = 0x0a;
const isWhitespace = (b: number) => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;

export async function* readShipmentFile(path: string): AsyncGenerator<FileRow> {
  const handle = await openInput(path);
  const stream = handle.createReadStream({ highWaterMark: 1 << 16 });
  const rows = new ShipmentRows(path);
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) yield* rows.push(chunk);
    yield* rows.end();
  } catch (error) {
    throw error instanceof ShipmentFileError || !isSystemError(error)
      ? error
      : new FileReadError(path, reasonOf(error));
  } finally {
    stream.destroy();
  }
}

/** The rows of a file's bytes, given in chunks however they are cut: what readShipmentFile yields. */
export function* shipmentRowsOf(chunks: Iterable<Uint8Array>, path = '(bytes)'): Generator<FileRow> {
  const rows = new ShipmentRows(path);
  for (const chunk of chunks) yield* rows.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
  yield* rows.end();
}

async function openInput(path: string): Promise<FileHandle> {
  let handle: FileHandle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    throw isSystemError(error) ? new FileReadError(path, reasonOf(error)) : error;
  }
  try {
    if ((await handle.stat()).isDirectory()) throw new FileReadError(path, 'is a directory, not a file of shipments');
    return handle;
  } catch (error) {
    await handle.close();
    throw isSystemError(error) ? new FileReadError(path, reasonOf(error)) : error;
  }
}

const isSystemError = (e: unknown): e is NodeJS.ErrnoException =>
  e instanceof Error && typeof (e as NodeJS.ErrnoException).code === 'string' && 'syscall' in e;

const REASONS: Record<string, string> = {
  ENOENT: 'no such file',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EISDIR: 'is a directory, not a file of shipments',
  ENOTDIR: 'a part of the path is not a directory',
  ELOOP: 'too many symbolic links',
  EIO: 'an input/output error while reading it',
};
const reasonOf = (e: NodeJS.ErrnoException) =>
  `cannot be read: ${REASONS[e.code!] ?? `${e.syscall} failed`} (${e.code})`;

/** A file's bytes → its rows: decides the format at its first character, then splits lines or items. */
class ShipmentRows {
  private start: Buffer | null = Buffer.alloc(0);
  /** Until the format is known: lines and whitespace seen (a file may begin with blank lines). */
  private lines = 0;
  private column = 0;
  private splitter: NdjsonLines | ArrayItems | undefined;

  constructor(private readonly path: string) {}

  *push(chunk: Buffer): Generator<FileRow> {
    if (this.start) {
      // The byte order mark is skipped at the very start only; gather its 3 bytes first.
      const bytes = Buffer.concat([this.start, chunk]);
      if (bytes.length < 3) {
        this.start = bytes;
        return;
      }
      this.start = null;
      yield* this.split(bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? bytes.subarray(3) : bytes);
    } else yield* this.split(chunk);
  }

  *end(): Generator<FileRow> {
    if (this.start) yield* this.split(this.start);
    this.start = null;
    if (this.splitter) yield* this.splitter.end();
  }

  private *split(bytes: Buffer): Generator<FileRow> {
    let rest = bytes;
    if (!this.splitter) {
      let i = 0;
      while (i < rest.length && isWhitespace(rest[i]!)) {
        if (rest[i] === NEWLINE) {
          this.lines++;
          this.column = 0;
        } else this.column++;
        i++;
      }
      if (i === rest.length) return;
      this.splitter =
        rest[i] === 0x5b /* [ */ ? new ArrayItems(this.path, this.lines) : new NdjsonLines(this.lines, this.column);
      rest = rest.subarray(i);
    }
    yield* this.splitter.push(rest);
  }
}

/** NDJSON: a row per line (lines end at \n; a \r before it is whitespace). */
class NdjsonLines {
  private parts: Buffer[] = [];
  private size: number;
  private line: number;

  constructor(linesBefore: number, indent: number) {
    this.line = linesBefore;
    // The first row's indentation is kept as spaces, so its columns stay right.
    this.size = indent;
    if (indent > 0 && indent <= MAX_ROW_BYTES) this.parts.push(Buffer.alloc(indent, 0x20));
  }

  *push(bytes: Buffer): Generator<FileRow> {
    let from = 0;
    for (;;) {
      const newline = bytes.indexOf(NEWLINE, from);
      this.add(bytes.subarray(from, newline < 0 ? bytes.length : newline));
      if (newline < 0) return;
      const row = this.finish();
      if (row) yield row;
      from = newline + 1;
    }
  }

  *end(): Generator<FileRow> {
    if (this.size > 0) {
      const row = this.finish();
      if (row) yield row;
    }
  }

  private add(bytes: Buffer) {
    this.size += bytes.length;
    if (this.size <= MAX_ROW_BYTES) this.parts.push(bytes);
    else this.parts = [];
  }

  private finish(): FileRow | undefined {
    this.line++;
    const size = this.size;
    const bytes = this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts);
    this.parts = [];
    this.size = 0;
    if (size > MAX_ROW_BYTES) return { line: this.line, errors: [tooLong(size, 'line')] };
    if (bytes.every(isWhitespace)) return undefined;
    return readRow(this.line, bytes, 'line').row;
  }
}

/** One JSON array: a row per item, found by their brackets and strings at the byte level. */
class ArrayItems {
  private state: 'before' | 'first' | 'next' | 'item' | 'after' = 'before';
  private items = 0;
  private line: number;
  private itemLine = 0;
  private parts: Buffer[] = [];
  private size = 0;
  private depth = 0;
  private inString = false;
  private escaped = false;

  constructor(
    private readonly path: string,
    linesBefore: number,
  ) {
    this.line = linesBefore + 1;
  }

  *push(bytes: Buffer): Generator<FileRow> {
    let itemFrom = this.state === 'item' ? 0 : -1;
    for (let i = 0; i < bytes.length; i++) {
      const b = bytes[i]!;
      if (this.state === 'item') {
        if (this.inString) {
          if (this.escaped) this.escaped = false;
          else if (b === 0x5c) this.escaped = true;
          else if (b === 0x22) this.inString = false;
        } else if (b === 0x22) this.inString = true;
        else if (b === 0x7b || b === 0x5b) this.depth++;
        else if ((b === 0x7d || b === 0x5d) && this.depth > 0) this.depth--;
        else if (this.depth === 0 && (b === 0x2c || b === 0x5d)) {
          this.add(bytes.subarray(itemFrom, i));
          itemFrom = -1;
          yield this.finish();
          this.state = b === 0x2c ? 'next' : 'after';
        }
      } else if (!isWhitespace(b)) {
        if (this.state === 'before' && b === 0x5b) this.state = 'first';
        else if (this.state === 'first' && b === 0x5d) this.state = 'after';
        else if ((this.state === 'first' || this.state === 'next') && b !== 0x2c && b !== 0x5d) {
          this.state = 'item';
          this.itemLine = this.line;
          this.depth = 0;
          this.inString = false;
          this.escaped = false;
          itemFrom = i;
          i--; // read this byte again as the item's first
          continue;
        } else
          throw this.broken(
            this.state === 'after'
              ? `there is more after the array's closing ] (line ${this.line})`
              : `the JSON array is broken at line ${this.line}: ${b === 0x2c ? 'an item is missing before ","' : 'a "," is followed by "]"'}`,
          );
      }
      if (b === NEWLINE) this.line++;
    }
    if (itemFrom >= 0) this.add(bytes.subarray(itemFrom));
  }

  end(): Iterable<FileRow> {
    if (this.state !== 'after')
      throw this.broken(
        `the JSON array breaks off after item ${this.items}: the file ends ${this.state === 'item' ? `inside item ${this.items + 1} (from line ${this.itemLine})` : 'before its closing ]'}`,
      );
    return [];
  }

  private add(bytes: Buffer) {
    this.size += bytes.length;
    if (this.size <= MAX_ROW_BYTES) this.parts.push(bytes);
    else this.parts = [];
  }

  private finish(): FileRow {
    this.items++;
    const size = this.size;
    const bytes = Buffer.concat(this.parts);
    this.parts = [];
    this.size = 0;
    if (size > MAX_ROW_BYTES) return { line: this.items, errors: [tooLong(size, 'item')] };
    const { row, syntax } = readRow(this.items, bytes, 'item');
    if (syntax)
      throw this.broken(
        `item ${this.items} (from line ${this.itemLine}) is broken (${row.errors!.map((e) => e.rule).join('; ')}), so where it ends is a guess`,
      );
    return row;
  }

  private broken(reason: string): FileFormatError {
    return new FileFormatError(this.path, `${reason}; nothing of the file is sent`);
  }
}

function tooLong(size: number, what: 'line' | 'item'): RowError {
  return {
    field: '(row)',
    rule: `the ${what} is ${size} bytes long, more than the ${MAX_ROW_BYTES / 1024 / 1024} MiB a row may have: not read`,
  };
}

/** A row's bytes → its value, or why it cannot be sent as written; `syntax`: its JSON is broken. */
function readRow(line: number, bytes: Uint8Array, what: 'line' | 'item'): { row: FileRow; syntax: boolean } {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return notUtf8(line, bytes, what);
  }
  const parsed = parseRowText(text);
  const row: FileRow = { line, ...('value' in parsed ? { value: parsed.value } : {}) };
  if (parsed.errors.length > 0) row.errors = parsed.errors;
  return { row, syntax: parsed.syntax };
}

/** Bytes that are not UTF-8: the row is refused, naming the first such bytes and the field they are in. */
function notUtf8(line: number, bytes: Uint8Array, what: 'line' | 'item'): { row: FileRow; syntax: boolean } {
  const at = firstInvalidUtf8(bytes);
  const shown: string[] = [];
  for (let i = at; i < bytes.length && shown.length < 4 && bytes[i]! >= 0x80; i++)
    shown.push(`0x${bytes[i]!.toString(16).toUpperCase().padStart(2, '0')}`);
  if (shown.length === 0) shown.push(`0x${bytes[at]!.toString(16).toUpperCase().padStart(2, '0')}`);
  // Where they are: the same text with U+FFFD in their place, only to find the field.
  const parsed = parseRowText(utf8Lenient.decode(bytes), utf8.decode(bytes.subarray(0, at)).length);
  const where = parsed.located;
  const errors: RowError[] = [
    {
      field: where?.field ?? '(row)',
      rule: `${where?.memberName ? 'a member name holds ' : ''}bytes that are not UTF-8 (${shown.join(' ')} at byte ${at + 1} of the ${what}): a shipments file must be UTF-8 text, and what they mean is a guess; this row is not sent`,
    },
  ];
  // Broken JSON as well (perhaps where those bytes are): said too; in a JSON array it breaks the file.
  if (parsed.syntax) errors.push(...parsed.errors);
  return { row: { line, errors }, syntax: parsed.syntax };
}

/** The offset of the first byte that does not begin a valid UTF-8 sequence (WHATWG's rules), or -1. */
export function firstInvalidUtf8(b: Uint8Array): number {
  let i = 0;
  while (i < b.length) {
    const c = b[i]!;
    if (c < 0x80) {
      i++;
      continue;
    }
    let length: number;
    if (c >= 0xc2 && c <= 0xdf) length = 2;
    else if (c >= 0xe0 && c <= 0xef) length = 3;
    else if (c >= 0xf0 && c <= 0xf4) length = 4;
    else return i;
    const low = c === 0xe0 ? 0xa0 : c === 0xf0 ? 0x90 : 0x80;
    const high = c === 0xed ? 0x9f : c === 0xf4 ? 0x8f : 0xbf;
    if (i + 1 >= b.length || b[i + 1]! < low || b[i + 1]! > high) return i;
    for (let k = 2; k < length; k++) if (i + k >= b.length || (b[i + k]! & 0xc0) !== 0x80) return i;
    i += length;
  }
  return -1;
}
