/**
 * A batch of rows as ONE JSON parameter for `json_to_recordset`: no bind-parameter limit, one parse
 * in Postgres. Columns that already hold JSON text (geometry, customData) are spliced in raw, so
 * Postgres parses them once as JSON instead of once as a string and again as jsonb.
 */
export function toJsonRecordset<T extends object>(rows: readonly T[], rawJsonColumns: ReadonlyArray<keyof T & string> = []): string {
  if (rawJsonColumns.length === 0) return storable(JSON.stringify(rows));
  const parts: string[] = [];
  for (const row of rows) {
    const plain: Record<string, unknown> = { ...(row as Record<string, unknown>) };
    let raw = '';
    for (const column of rawJsonColumns) {
      const value = plain[column];
      delete plain[column];
      // The value is JSON text produced by JSON.stringify in the mapping, so splicing it is safe.
      raw += `,${JSON.stringify(column)}:${typeof value === 'string' ? value : 'null'}`;
    }
    const text = JSON.stringify(plain);
    parts.push(text.length === 2 ? `{${raw.slice(1)}}` : `${text.slice(0, -1)}${raw}}`);
  }
  return storable(`[${parts.join(',')}]`);
}

// An escape preceded by an even number of backslashes is a real escape, not escaped text.
const NUL_ESCAPE = /(?<!\\)((?:\\\\)*)\\u0000/g;
const LONE_SURROGATE_ESCAPE = /(?<!\\)((?:\\\\)*)\\ud[89a-f][0-9a-f]{2}/gi;

/**
 * Postgres text cannot hold U+0000 and its JSON parser refuses unpaired surrogates, both of which
 * JSON.stringify emits as escapes. One odd string must not fail a page: NUL is dropped and an
 * unpaired surrogate becomes U+FFFD. (JSON.stringify writes paired surrogates as raw characters,
 * so every surrogate escape in its output is unpaired.)
 */
export function storable(json: string): string {
  let text = json;
  if (text.includes('\\u0000')) text = text.replace(NUL_ESCAPE, '$1');
  if (/\\u[dD][89a-fA-F]/.test(text)) text = text.replace(LONE_SURROGATE_ESCAPE, '$1\\ufffd');
  return text;
}
