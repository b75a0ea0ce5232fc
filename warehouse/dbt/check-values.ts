// The values a CHECK constraint allows in one column, read from its definition as Postgres prints it
// (pg_get_constraintdef). No I/O. Only the plain enumerations are read: `col in ('a', 'b')`, which Postgres
// prints as `CHECK ((col = ANY (ARRAY['a'::text, 'b'::text])))`, and `col = 'a'`. Anything else (a
// pattern, a rule over two columns, a string with backslash escapes) is not an enumeration: null.

const IDENTIFIER = `(?:"((?:[^"]|"")+)"|([a-z_][a-z0-9_$]*))`;
const CAST = String.raw`(?:::[a-z ]+(?:\(\d+\))?)`;
const LITERAL = String.raw`'((?:[^'\\]|'')*)'${CAST}?`;
const EQUALS_ANY = new RegExp(String.raw`^\(?${IDENTIFIER}\)?${CAST}? = ANY \(\(?ARRAY\[(.*?)\](?:\)${CAST}\[\])?\)$`);
const EQUALS_ONE = new RegExp(String.raw`^\(?${IDENTIFIER}\)?${CAST}? = ${LITERAL}$`);
const LIST_ITEM = new RegExp(`^${LITERAL}$`);

/** `CHECK ((x))` → `x`: the CHECK keyword and every pair of parentheses around the whole. */
function body(definition: string): string | null {
  const check = /^CHECK \((.*)\)(?: NOT VALID)?$/s.exec(definition.trim());
  if (!check) return null;
  let text = check[1]!;
  while (text.startsWith('(') && text.endsWith(')') && wraps(text)) text = text.slice(1, -1);
  return text;
}

/** Whether the first parenthesis of `text` closes at its very end (outside string literals). */
function wraps(text: string): boolean {
  let depth = 0;
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === "'") quoted = !quoted;
    if (quoted) continue;
    if (c === '(') depth++;
    if (c === ')' && --depth === 0) return i === text.length - 1;
  }
  return false;
}

/** Splits `'a'::text, 'b, c'::text` at the commas between items (not those inside a literal). */
function items(list: string): string[] | null {
  const parts: string[] = [];
  let start = 0;
  let quoted = false;
  for (let i = 0; i < list.length; i++) {
    if (list[i] === "'") quoted = !quoted;
    else if (!quoted && list[i] === ',') {
      parts.push(list.slice(start, i).trim());
      start = i + 1;
    }
  }
  parts.push(list.slice(start).trim());
  const values: string[] = [];
  for (const part of parts) {
    const literal = LIST_ITEM.exec(part);
    if (!literal) return null;
    values.push(literal[1]!.replaceAll("''", "'"));
  }
  return values;
}

/**
 * The values `definition` allows in `column`, in the order it lists them; null when it is not a plain
 * enumeration of that one column.
 */
export function checkedValues(definition: string, column: string): string[] | null {
  const text = body(definition);
  if (text === null) return null;
  const any = EQUALS_ANY.exec(text);
  const one = any ? null : EQUALS_ONE.exec(text);
  const match = any ?? one;
  if (!match) return null;
  const name = match[1] !== undefined ? match[1].replaceAll('""', '"') : match[2];
  if (name !== column) return null;
  if (one) return [one[3]!.replaceAll("''", "'")];
  return items(any![3]!);
}
