// Validation of client-supplied customData per the contract's eight rules (pure).
// The server-owned namespace (rule 6) is the client's documented assumption, imported from its
// single source (schema/upstream/service-facts.ts), so simulator and client can never disagree.
import { RESERVED_CUSTOM_DATA_KEY } from '../schema/upstream/service-facts.ts';

const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** Keys in the server-owned namespace (`_…`, `$…`) are stripped on input (rule 6) rather than rejected. */
export const isServerOwnedKey = (key: string): boolean => RESERVED_CUSTOM_DATA_KEY.test(key);

/** Written by the service itself on invitations created through the API (rule 7: it appears in responses). */
export const SERVER_SOURCE_KEY = '_source';

/** Text length as the service's validator counts it: Unicode code points, not UTF-16 units. */
const codePoints = (s: string): number => {
  let n = 0;
  for (const _ of s) n++;
  return n;
};

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
    if (isServerOwnedKey(key)) continue;
    if (codePoints(key) > 255) messages.push(`${field} key length must be at most 255 characters (rule 2)`);
    if (typeof v === 'string') {
      if (codePoints(v) > 255) messages.push(`${field}.${key.slice(0, 40)} string value must be at most 255 characters (rule 3)`);
    } else if (typeof v !== 'number' && typeof v !== 'boolean') {
      messages.push(`${field}.${key.slice(0, 40)} must be a string, number or boolean; nested objects are not allowed (rule 4)`);
      continue;
    }
    Object.defineProperty(value, key, { value: v, enumerable: true, writable: true, configurable: true });
  }
  if (Object.keys(value).length > 10) messages.push(`${field} must have at most 10 keys (rule 1)`);
  return messages.length > 0 ? { ok: false, messages: [...new Set(messages)] } : { ok: true, value };
}

/**
 * The stored customData after a client update: the client's (validated) keys replace the client's
 * previous ones; the server-owned keys already stored are kept (the client cannot set or remove them).
 */
export function withServerKeys(stored: Record<string, unknown>, client: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(stored)) {
    if (isServerOwnedKey(key)) Object.defineProperty(out, key, { value: v, enumerable: true, writable: true, configurable: true });
  }
  for (const [key, v] of Object.entries(client)) Object.defineProperty(out, key, { value: v, enumerable: true, writable: true, configurable: true });
  return out;
}
