import { z } from 'zod';

/**
 * Building blocks that normalise the contract's quirks at the boundary, so nothing downstream
 * sees them: `{}` for an unset value becomes null, text flags "true"/"false" become booleans,
 * open value sets stay plain strings (a new status never fails a parse).
 */

/** A plain object with no own keys: how the service writes "unset" for many fields. */
export function isEmptyObject(value: unknown): boolean {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  for (const key in value) if (Object.hasOwn(value, key)) return false;
  return true;
}

/** `{}` (and null) → null; anything else must match `inner`. */
export function unsetAsNull<T extends z.ZodType>(inner: T) {
  return z.preprocess((v) => (isEmptyObject(v) ? null : v), inner.nullable());
}

/** Text flag "true"/"false" (or a real boolean) → boolean. */
export function textFlag(value: unknown): unknown {
  if (value === 'true') return true;
  if (value === 'false') return false;
  return value;
}
export const flag = z.preprocess(textFlag, z.boolean());

/** A string whose value set is open: the known values type-check, any other string passes. */
export type Open<Known extends string> = Known | (string & {});
export function openEnum<const K extends readonly string[]>(_known: K): z.ZodType<Open<K[number]>> {
  return z.string() as z.ZodType<Open<K[number]>>;
}

/** ISO 8601 date-time; kept as the service's text (Postgres parses it; no lossy Date round trip). */
export const dateTime = z.string();
export type DateTime = string;

/** customData in responses: returned unchanged (contract rule 7), server-owned keys included. */
export type CustomDataValue = string | number | boolean;
export type CustomData = Record<string, unknown>;
export const customDataResponse = z.record(z.string(), z.unknown());

/** Optional and nullable: fields may be absent (select, relations not included) or null. */
export function opt<T extends z.ZodType>(inner: T) {
  return inner.nullish();
}
