import { type RawBuilder, sql } from 'kysely';

/**
 * A batch of rows as ONE JSON parameter for `json_to_recordset`: no bind-parameter limit, one parse
 * in Postgres. Columns that already hold JSON text (geometry, customData) are spliced in raw, so
 * Postgres parses them once as JSON instead of once as a string and again as jsonb.
 */
export function toJsonRecordset<T extends object>(
  rows: readonly T[],
  rawJsonColumns: ReadonlyArray<keyof T & string> = [],
): string {
  if (rawJsonColumns.length === 0) return storable(JSON.stringify(rows));
  const raw = new Set<string>(rawJsonColumns);
  const keyText = new Map<string, string>();
  const parts: string[] = [];
  for (const row of rows) {
    // Written field by field: copying the row and deleting the raw columns would turn it into a
    // slow dictionary object, and this runs for every row of every page.
    let text = '';
    for (const key in row) {
      let k = keyText.get(key);
      if (k === undefined) keyText.set(key, (k = `${JSON.stringify(key)}:`));
      const value = (row as Record<string, unknown>)[key];
      // A raw column holds JSON text made by JSON.stringify in the mapping, so splicing it is safe.
      const v = raw.has(key) ? (typeof value === 'string' ? value : 'null') : (JSON.stringify(value) ?? 'null');
      text += text === '' ? `{${k}${v}` : `,${k}${v}`;
    }
    parts.push(text === '' ? '{}' : `${text}}`);
  }
  return storable(`[${parts.join(',')}]`);
}

/** The Postgres types a recordset column may take, by the value the writers send in it. */
type RecordsetType<Value> = [NonNullable<Value>] extends [boolean]
  ? 'boolean'
  : [NonNullable<Value>] extends [number]
    ? 'int2' | 'int4' | 'int8' | 'float8'
    : [NonNullable<Value>] extends [readonly string[]]
      ? 'text[]'
      : [NonNullable<Value>] extends [string]
        ? 'text' | 'uuid' | 'date' | 'timestamptz' | 'json' | 'jsonb'
        : never;

/**
 * The column list of `json_to_recordset(...) as r(...)` for rows of type `Row`, one entry per field
 * in order: `{ id: 'text', ... }`. Typed from the row, so the list names exactly the row's fields
 * (and through rows.ts the table's generated columns).
 */
export type RecordsetColumns<Row> = { readonly [Field in keyof Row]-?: RecordsetType<Row[Field]> };

/** `id text, name text, ...` */
export function recordsetDefinition<Row>(columns: RecordsetColumns<Row>): string {
  return Object.entries(columns)
    .map(([name, type]) => `${name} ${type as string}`)
    .join(', ');
}

/** The json and jsonb columns: the mapping made their JSON text, so toJsonRecordset splices them raw. */
export function jsonColumnsOf<Row>(columns: RecordsetColumns<Row>): Array<keyof Row & string> {
  return Object.entries(columns)
    .filter(([, type]) => type === 'json' || type === 'jsonb')
    .map(([name]) => name as keyof Row & string);
}

/**
 * `json_to_recordset(<the rows as one JSON parameter>) as <alias>(<columns>)`: a batch read as a table
 * in a statement, its column list typed by the rows (RecordsetColumns), json and jsonb values spliced raw.
 */
export function jsonRecordset<Row extends object>(
  rows: readonly Row[],
  columns: RecordsetColumns<Row>,
  alias = 'r',
): RawBuilder<unknown> {
  const batch = toJsonRecordset(rows, jsonColumnsOf(columns));
  return sql`json_to_recordset(${batch}::json) as ${sql.raw(alias)}(${sql.raw(recordsetDefinition(columns))})`;
}

// An escape preceded by an even number of backslashes is a real escape, not escaped text.
const NUL_ESCAPE = /(?<!\\)((?:\\\\)*)\\u0000/g;
const LONE_SURROGATE_ESCAPE = /(?<!\\)((?:\\\\)*)\\ud[89a-f][0-9a-f]{2}/gi;

/**
 * Postgres text cannot hold U+0000 and its JSON parser refuses unpaired surrogates, both of which
 * JSON.stringify emits as escapes. One odd string must not fail a page: each becomes U+FFFD, as in
 * COPY text (domain/unstorable-text.ts), and the mappings report every value so changed.
 * (JSON.stringify writes paired surrogates as raw characters, so every surrogate escape in its
 * output is unpaired.)
 */
export function storable(json: string): string {
  let text = json;
  if (text.includes('\\u0000')) text = text.replace(NUL_ESCAPE, '$1\\ufffd');
  if (/\\u[dD][89a-fA-F]/.test(text)) text = text.replace(LONE_SURROGATE_ESCAPE, '$1\\ufffd');
  return text;
}
