/**
 * A batch of rows as ONE JSON parameter for `json_to_recordset`: no bind-parameter limit, one parse
 * in Postgres. Columns that already hold JSON text (geometry, customData) are spliced in raw, so
 * Postgres parses them once as JSON instead of once as a string and again as jsonb.
 */
export function toJsonRecordset<T extends object>(rows: readonly T[], rawJsonColumns: ReadonlyArray<keyof T & string> = []): string {
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
