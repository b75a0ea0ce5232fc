/**
 * Turning upstream values into values Postgres accepts. A value that cannot be stored as its column's
 * type is stored as null and reported (never fails the page); see `ValueIssue`.
 */
export interface ValueIssue {
  field: string;
  rule: string;
  /**
   * `replaced` for text stored with U+FFFD for what Postgres cannot hold (domain/unstorable-text.ts),
   * with the value as sent; absent for a value stored as null.
   */
  action?: 'replaced';
  sent?: string;
}

// The form the service uses (…T…Z with milliseconds): checked without capture groups (no match
// array per timestamp: a page has thousands), the calendar day read from fixed positions.
const CANONICAL_UTC = /^\d{4}-\d\d-\d\dT(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d{1,6})?Z$/;
const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function isCalendarDay(year: number, month: number, day: number): boolean {
  if (month < 1 || month > 12 || day < 1 || day > DAYS_IN_MONTH[month - 1]!) return false;
  return month !== 2 || day < 29 || (year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0));
}

/** The number written by the ASCII digits at [from, to) of `text` (the regex has checked they are digits). */
function digitsAt(text: string, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) n = n * 10 + (text.charCodeAt(i) - 48);
  return n;
}

function isCanonicalUtc(value: string): boolean {
  return (
    CANONICAL_UTC.test(value) && isCalendarDay(digitsAt(value, 0, 4), digitsAt(value, 5, 7), digitsAt(value, 8, 10))
  );
}

/** An ISO 8601 timestamp Postgres can read, or null (reported) when the text is not one. */
export function timestampOrNull(value: string | null | undefined, field: string, issues: ValueIssue[]): string | null {
  if (value === null || value === undefined || value === '') return null;
  if (isCanonicalUtc(value)) return value;
  const ms = Date.parse(value);
  // Date rolls 2023-02-29 over to March 1st: a day that does not exist is refused, not moved.
  const day = DATE_PREFIX.exec(value);
  if (Number.isNaN(ms) || (day && !isCalendarDay(Number(day[1]), Number(day[2]), Number(day[3])))) {
    issues.push({ field, rule: 'expected an ISO 8601 date-time' });
    return null;
  }
  return new Date(ms).toISOString();
}

const DATE_PREFIX = /^(\d{4})-(\d{2})-(\d{2})/;

/** The calendar date (YYYY-MM-DD) of a date or date-time text, or null (reported) when it is not one. */
export function dateOrNull(value: string | null | undefined, field: string, issues: ValueIssue[]): string | null {
  if (value === null || value === undefined || value === '') return null;
  const day = calendarDay(value);
  if (day !== null) return day;
  issues.push({ field, rule: 'expected a date (YYYY-MM-DD)' });
  return null;
}

/**
 * The YYYY-MM-DD a date or date-time text starts with, or null when it does not start with a real
 * calendar day (2024-02-30 and the like, which Date would silently roll over, are refused; so is
 * padding). What the warehouse stores for a date, so the EUDR checks read dates the same way.
 */
export function calendarDay(value: string): string | null {
  const m = DATE_PREFIX.exec(value);
  return m && isCalendarDay(Number(m[1]), Number(m[2]), Number(m[3])) ? `${m[1]}-${m[2]}-${m[3]}` : null;
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
