// dbt renders the strings of its YAML as Jinja (descriptions when it parses docs, test arguments and
// configs when it compiles): a comment that says `{{ … }}` or `{% … %}` would be run, not shown. Text
// from the warehouse goes into the package through jinjaLiteral, so that what dbt renders is the text.
// No I/O.

/**
 * `text` such that Jinja renders it as itself: each `{` that would open a Jinja tag (`{{`, `{%`, `{#`)
 * is written as the expression `{{ '{' }}`, which renders to `{`. What follows it no longer opens a tag,
 * and `}}` or `%}` alone are plain text to Jinja.
 */
export function jinjaLiteral(text: string): string {
  return text.replace(/\{(?=[{%#])/g, "{{ '{' }}");
}

/** A string for a SQL literal inside `'…'` that a dbt macro writes as it is given: quotes doubled. */
export function sqlQuoted(text: string): string {
  return text.replaceAll("'", "''");
}

/** `text` as a Jinja string literal (inside `{{ … }}`): in single quotes, backslashes and quotes escaped. */
export function jinjaString(text: string): string {
  return `'${text.replace(/[\\']/g, (c) => `\\${c}`)}'`;
}
