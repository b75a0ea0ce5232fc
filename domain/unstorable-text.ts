/**
 * Text Postgres cannot hold, found in values from outside. Postgres text and jsonb cannot hold U+0000
 * (NUL), and UTF-8 cannot encode a lone UTF-16 surrogate, which a JavaScript string (and a JSON escape,
 * `\ud800`) can carry. The warehouse stores each such character as U+FFFD (`storableText`, and the
 * writers' encoders do the same on their text); every value so changed is found here, with its path and
 * its JSON text as sent (escapes and all), so the change is recorded, never silent (docs/warehouse.md).
 * Pure.
 */

/** What the warehouse stores in place of a character it cannot hold. */
export const REPLACEMENT_CHARACTER = '\ufffd';

/** One string (a value or a key) the warehouse stores otherwise than sent. */
export interface Replacement {
  /** Where it is, e.g. `name`, `customData.tags[2]`, `customData["a\u0000b"]` (a key: the path to its member). */
  field: string;
  /** What was replaced by what. */
  rule: string;
  /**
   * The value as sent, as JSON text (NUL and lone surrogates escaped); for a key, the key (its value is
   * stored under the key as replaced, and walked on its own: a member's text would repeat a subtree).
   */
  sent: string;
}

export const NUL_RULE = 'U+0000 (NUL), which Postgres text cannot hold, stored as U+FFFD';
export const SURROGATE_RULE = 'a lone UTF-16 surrogate, which UTF-8 cannot encode, stored as U+FFFD';
const BOTH_RULE = 'U+0000 (NUL) and a lone UTF-16 surrogate, which Postgres text cannot hold, stored as U+FFFD';

// Any surrogate, paired or not: a cheap first test; LONE_SURROGATE tells a lone one from a pair.
// (Without the u flag a pattern reads UTF-16 code units, so a lone surrogate is one to match.)
const SUSPECT_CHAR = /[\0\ud800-\udfff]/;
const NUL_CHARS = /\0/g;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const LONE_SURROGATES = new RegExp(LONE_SURROGATE.source, 'g');
/**
 * In JSON text, the only ways to write either: the escape `\u0000`, or a surrogate escape `\ud800`–
 * `\udfff` (raw, neither is JSON: a raw NUL is a control character, and a lone surrogate is not UTF-8).
 * A surrogate pair written as two escapes, or `\\u0000` (an escaped backslash, then "u0000"), passes the
 * test too: it only gates the walk, which looks at the parsed strings.
 */
const SUSPECT_ESCAPE = /\\u(?:0000|[dD][89a-fA-F])/;

/**
 * Whether JSON text may hold a string the warehouse cannot store: false for almost every page and
 * plot, so the walk (`findUnstorable`) runs only where it may find something.
 */
export function mayHoldUnstorable(json: string): boolean {
  // JSON.stringify escapes only control characters and lone surrogates: most texts hold no "\u" at all.
  return json.includes('\\u') && SUSPECT_ESCAPE.test(json);
}

/** The rule a string breaks (NUL, a lone surrogate, both), or null when the warehouse stores it as it is. */
export function unstorableRule(text: string): string | null {
  if (!SUSPECT_CHAR.test(text)) return null;
  const nul = text.includes('\0');
  const lone = LONE_SURROGATE.test(text);
  if (nul && lone) return BOTH_RULE;
  if (nul) return NUL_RULE;
  return lone ? SURROGATE_RULE : null;
}

/** The string as the warehouse stores it: every NUL and lone surrogate as U+FFFD. */
export function storableText(text: string): string {
  if (!SUSPECT_CHAR.test(text)) return text;
  return text.replace(NUL_CHARS, REPLACEMENT_CHARACTER).replace(LONE_SURROGATES, REPLACEMENT_CHARACTER);
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/** A path's step to a member: `.key` for a plain name, `["key"]` (JSON text, so storable) for any other. */
export function memberPath(path: string, key: string): string {
  if (IDENTIFIER.test(key)) return path === '' ? key : `${path}.${key}`;
  return `${path}[${JSON.stringify(key)}]`;
}

/**
 * Every string in `value` (at any depth, keys included) that the warehouse stores otherwise, appended
 * to `out` with its path under `path`. Numbers, booleans and null are skipped without a path made, so
 * a long coordinate list costs little.
 */
export function findUnstorable(value: unknown, path: string, out: Replacement[]): void {
  if (typeof value === 'string') {
    const rule = unstorableRule(value);
    if (rule !== null) out.push({ field: path, rule, sent: JSON.stringify(value) });
    return;
  }
  if (value === null || typeof value !== 'object') return;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      if (item !== null && (typeof item === 'string' || typeof item === 'object'))
        findUnstorable(item, `${path}[${i}]`, out);
    }
    return;
  }
  const members = value as Record<string, unknown>;
  for (const key of Object.keys(members)) {
    const item = members[key];
    const keyRule = unstorableRule(key);
    if (keyRule !== null) {
      out.push({ field: memberPath(path, key), rule: `key: ${keyRule}`, sent: JSON.stringify(key) });
    }
    if (item !== null && (typeof item === 'string' || typeof item === 'object'))
      findUnstorable(item, memberPath(path, key), out);
  }
}

/**
 * `findUnstorable` of the named members of `record` only: what the warehouse stores of it (a field it
 * does not keep is not altered, so not reported).
 */
export function findUnstorableFields(
  record: Readonly<Record<string, unknown>> | null | undefined,
  fields: readonly string[],
  path: string,
  out: Replacement[],
): void {
  if (!record) return;
  for (const field of fields) {
    const value = record[field];
    if (value !== null && (typeof value === 'string' || typeof value === 'object'))
      findUnstorable(value, memberPath(path, field), out);
  }
}

/** `findUnstorable` of one value, as a new list. */
export function unstorableIn(value: unknown, path = ''): Replacement[] {
  const out: Replacement[] = [];
  findUnstorable(value, path, out);
  return out;
}

/**
 * Replacements as kept on a stored row where no run records them (webhook events, transactions):
 * JSON text of `{"<field>": {"rule": …, "sent": …}}`, or null when there are none. Storable itself:
 * `sent` is JSON text whose escapes are plain characters.
 */
export function replacementsByField(found: readonly Replacement[]): string | null {
  if (found.length === 0) return null;
  const byField: Record<string, { rule: string; sent: string }> = {};
  for (const r of found) byField[r.field] = { rule: r.rule, sent: r.sent };
  return JSON.stringify(byField);
}
