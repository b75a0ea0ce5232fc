// Validation of client-supplied customData per the contract's eight rules (pure).

const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);
/** Keys in this server-owned namespace are stripped on input (rule 6) rather than rejected. */
export const RESERVED_PREFIX = 'sim.';

export type CustomDataResult = { ok: true; value: Record<string, string | number | boolean> } | { ok: false; messages: string[] };

export function validateCustomData(input: unknown, field = 'customData'): CustomDataResult {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    return { ok: false, messages: [`${field} must be an object`] };
  }
  const messages: string[] = [];
  const value: Record<string, string | number | boolean> = {};
  const entries = Object.entries(input as Record<string, unknown>);
  for (const [key, v] of entries) {
    if (FORBIDDEN_KEYS.has(key)) {
      messages.push(`${field} keys must not be __proto__, constructor or prototype (rule 5)`);
      continue;
    }
    if (key.startsWith(RESERVED_PREFIX)) continue;
    if (key.length > 255) messages.push(`${field} key length must be at most 255 characters (rule 2)`);
    if (typeof v === 'string') {
      if (v.length > 255) messages.push(`${field}.${key.slice(0, 40)} string value must be at most 255 characters (rule 3)`);
    } else if (typeof v !== 'number' && typeof v !== 'boolean') {
      messages.push(`${field}.${key.slice(0, 40)} must be a string, number or boolean; nested objects are not allowed (rule 4)`);
      continue;
    }
    Object.defineProperty(value, key, { value: v, enumerable: true, writable: true, configurable: true });
  }
  if (Object.keys(value).length > 10) messages.push(`${field} must have at most 10 keys (rule 1)`);
  return messages.length > 0 ? { ok: false, messages: [...new Set(messages)] } : { ok: true, value };
}
