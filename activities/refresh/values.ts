/**
 * Turning upstream values into values Postgres accepts. A value that cannot be stored as its column's
 * type is stored as null and reported (never fails the page); see `ValueIssue`.
 */
export interface ValueIssue {
  field: string;
  rule: string;
}

/** An ISO 8601 timestamp Postgres can read, or null (reported) when the text is not one. */
export function timestampOrNull(value: string | null | undefined, field: string, issues: ValueIssue[]): string | null {
  if (value === null || value === undefined || value === '') return null;
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) {
    issues.push({ field, rule: 'expected an ISO 8601 date-time' });
    return null;
  }
  return new Date(ms).toISOString();
}

const DATE_PREFIX = /^(\d{4})-(\d{2})-(\d{2})/;

/** The calendar date (YYYY-MM-DD) of a date or date-time text, or null (reported) when it is not one. */
export function dateOrNull(value: string | null | undefined, field: string, issues: ValueIssue[]): string | null {
  if (value === null || value === undefined || value === '') return null;
  const m = DATE_PREFIX.exec(value);
  if (m) {
    const [, y, mo, d] = m;
    const date = new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d)));
    // Rejects 2024-02-30 and the like, which Date would silently roll over.
    if (date.getUTCFullYear() === Number(y) && date.getUTCMonth() === Number(mo) - 1 && date.getUTCDate() === Number(d)) return `${y}-${mo}-${d}`;
  }
  issues.push({ field, rule: 'expected a date (YYYY-MM-DD)' });
  return null;
}

export function textOrNull(value: string | null | undefined): string | null {
  return value === undefined || value === null ? null : value;
}

export function numberOrNull(value: number | null | undefined): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

/** JSON text of an object, or null for null / absent / empty. */
export function jsonOrNull(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  return JSON.stringify(value);
}
