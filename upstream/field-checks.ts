import { isEmptyObject, textFlag } from '../schema/upstream/primitives.ts';
import { geometryIssue } from '../schema/upstream/geometry.ts';

/**
 * Small, allocation-free field checks for hand-written validators on hot paths. They normalise
 * in place (the object is a fresh JSON.parse result owned by the caller) and throw FieldFailure
 * with the field path on the first problem; paths are built only on failure.
 */

export type Path = readonly (string | number)[];
export type Obj = Record<string, unknown>;

export class FieldFailure extends Error {
  constructor(
    readonly path: Path,
    readonly rule: string,
  ) {
    super(rule);
  }
}

export function isObject(v: unknown): v is Obj {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

export function requireObject(v: unknown, at: Path): Obj {
  if (!isObject(v)) throw new FieldFailure(at, 'expected object');
  return v;
}

export function requiredString(o: Obj, key: string, at: Path): void {
  const v = o[key];
  if (typeof v !== 'string')
    throw new FieldFailure([...at, key], v === undefined ? 'required string, missing' : 'expected string');
}

export function optionalString(o: Obj, key: string, at: Path): void {
  const v = o[key];
  if (v != null && typeof v !== 'string') throw new FieldFailure([...at, key], 'expected string');
}

export function optionalNumber(o: Obj, key: string, at: Path): void {
  const v = o[key];
  if (v != null && (typeof v !== 'number' || !Number.isFinite(v)))
    throw new FieldFailure([...at, key], 'expected number');
}

export function optionalStrings(o: Obj, keys: readonly string[], at: Path): void {
  for (const key of keys) optionalString(o, key, at);
}

/** Text flag "true"/"false" → boolean, in place. */
export function optionalFlag(o: Obj, key: string, at: Path): void {
  const v = o[key];
  if (v == null) return;
  const b = textFlag(v);
  if (typeof b !== 'boolean') throw new FieldFailure([...at, key], 'expected boolean');
  o[key] = b;
}

/** `{}` → null in place; returns the value when it is set (for further checks). */
export function unsetToNull(o: Obj, key: string): unknown {
  const v = o[key];
  if (v == null) return null;
  if (isEmptyObject(v)) {
    o[key] = null;
    return null;
  }
  return v;
}

export function optionalUnsetString(o: Obj, key: string, at: Path): void {
  const v = unsetToNull(o, key);
  if (v !== null && typeof v !== 'string') throw new FieldFailure([...at, key], 'expected string');
}

export function optionalRecord(o: Obj, key: string, at: Path): void {
  const v = o[key];
  if (v != null && !isObject(v)) throw new FieldFailure([...at, key], 'expected record');
}

export function optionalStringArray(o: Obj, key: string, at: Path): void {
  const v = o[key];
  if (v == null) return;
  if (!Array.isArray(v)) throw new FieldFailure([...at, key], 'expected array');
  for (let i = 0; i < v.length; i++) {
    if (typeof v[i] !== 'string') throw new FieldFailure([...at, key, i], 'expected string');
  }
}

export function optionalGeometry(o: Obj, key: string, at: Path): void {
  const v = unsetToNull(o, key);
  if (v === null) return;
  const issue = geometryIssue(v);
  if (issue) throw new FieldFailure([...at, key, ...issue.path], issue.message);
}
