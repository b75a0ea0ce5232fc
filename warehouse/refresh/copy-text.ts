import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { type RecordsetColumns, storable } from './json-recordset.ts';
import { REPLACEMENT_CHARACTER } from '../../domain/unstorable-text.ts';

/**
 * Rows as COPY's text format (tab-separated columns, \N for null, backslash escapes), the cheapest
 * way into Postgres: no per-row key names as in a JSON batch, and each JSON value parsed once (a
 * JSON batch parses it as part of the batch, then again into jsonb). Written in chunks of about
 * CHUNK_CHARS, so no one string is large (large strings go straight to V8's old space and force
 * full garbage collections in a worker with a small heap).
 */
const CHUNK_CHARS = 32_768;

const COPY_SPECIAL = /[\\\t\n\r\0]/;
const COPY_SPECIALS = /[\\\t\n\r\0]/g;
const COPY_ESCAPES: Record<string, string> = {
  '\\': '\\\\',
  '\t': '\\t',
  '\n': '\\n',
  '\r': '\\r',
  '\0': REPLACEMENT_CHARACTER,
};

/**
 * Text as a COPY field: backslash, tab and line breaks escaped; NUL, which Postgres text cannot hold,
 * stored as U+FFFD. A lone surrogate becomes U+FFFD too, when the stream encodes the text as UTF-8.
 * Neither happens unrecorded: the mappings report each value so changed (domain/unstorable-text.ts).
 */
export function escapeCopy(text: string): string {
  // Almost every value (ids, names, timestamps, GeoJSON) holds none of these: a test that finds
  // nothing costs about a third less than a replace with a callback that finds nothing.
  return COPY_SPECIAL.test(text) ? text.replace(COPY_SPECIALS, (c) => COPY_ESCAPES[c]!) : text;
}

/** A text[] literal: every element quoted, so commas, braces and spaces need no thought. */
function arrayLiteral(items: readonly unknown[]): string {
  return `{${items.map((item) => (item === null || item === undefined ? 'NULL' : `"${String(item).replace(/[\\"]/g, '\\$&')}"`)).join(',')}}`;
}

type Encode = (value: unknown) => string;

const NULL = '\\N';
const encoders: Record<string, Encode> = {
  boolean: (v) => (v ? 't' : 'f'),
  number: (v) => String(v),
  'text[]': (v) => escapeCopy(arrayLiteral(v as unknown[])),
  // The mapping made this JSON text with JSON.stringify; storable replaces what jsonb refuses, as for JSON batches.
  json: (v) => escapeCopy(storable(v as string)),
  text: (v) => escapeCopy(String(v)),
};

function encoderFor(type: string): Encode {
  if (type === 'boolean' || type === 'text[]') return encoders[type]!;
  if (type === 'json' || type === 'jsonb') return encoders['json']!;
  if (type === 'int2' || type === 'int4' || type === 'int8' || type === 'float8') return encoders['number']!;
  return encoders['text']!;
}

/** The rows' COPY text, chunk by chunk; `suffix` (already COPY text, starting with a tab) ends every line. */
export function* copyText<Row>(
  rows: readonly Row[],
  columns: RecordsetColumns<Row>,
  chunkChars = CHUNK_CHARS,
  suffix = '',
): Generator<string> {
  const fields = Object.entries(columns).map(([name, type]) => ({ name, encode: encoderFor(type as string) }));
  let chunk = '';
  for (const row of rows) {
    const values = row as Record<string, unknown>;
    let line = '';
    for (let i = 0; i < fields.length; i++) {
      const { name, encode } = fields[i]!;
      const value = values[name];
      const text = value === null || value === undefined ? NULL : encode(value);
      line += i === 0 ? text : `\t${text}`;
    }
    chunk += `${line}${suffix}\n`;
    if (chunk.length >= chunkChars) {
      yield chunk;
      chunk = '';
    }
  }
  if (chunk !== '') yield chunk;
}

/**
 * COPYs `rows` into `table` (the columns named by `columns`) over `client`, inside its current
 * transaction. `constants` are further columns with one value for every row, as COPY text (e.g.
 * 'now' for a timestamp: the transaction's start, as now() gives).
 */
export async function copyRows<Row>(
  client: pg.ClientBase,
  table: string,
  rows: readonly Row[],
  columns: RecordsetColumns<Row>,
  constants: Readonly<Record<string, string>> = {},
): Promise<void> {
  if (rows.length === 0) return;
  const names = [...Object.keys(columns), ...Object.keys(constants)];
  const suffix = Object.values(constants)
    .map((v) => `\t${escapeCopy(v)}`)
    .join('');
  const statement = `copy ${table} (${names.join(', ')}) from stdin`;
  await pipeline(Readable.from(copyText(rows, columns, CHUNK_CHARS, suffix)), client.query(copyFrom(statement)));
}
