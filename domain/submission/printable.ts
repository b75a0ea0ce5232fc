/**
 * Text from a shipments file as ddsync shows it (terminal, report, warehouse): every character that
 * could act on a terminal or hide what is written is shown as a `\uXXXX` escape instead: C0 and C1
 * control characters (ESC starts terminal commands, CR rewrites a line), DEL, line and paragraph
 * separators, the bidirectional controls that reorder what is displayed, and unpaired surrogates
 * (not characters: the warehouse's JSON refuses them). Everything else is left as it is, so the
 * function is idempotent: escaping escaped text changes nothing (a backslash is not escaped).
 */
const UNPRINTABLE =
  /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

export function printable(text: string): string {
  return text.replace(UNPRINTABLE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** `printable`, cut to `max` characters (an ellipsis says so), for a value quoted in a message. */
export function printableExcerpt(text: string, max = 60): string {
  const shown = printable(text);
  return shown.length > max ? `${printable(shown.slice(0, max))}…` : shown;
}
