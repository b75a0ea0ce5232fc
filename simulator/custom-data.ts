// Validation of client-supplied customData per the contract's eight rules (pure). The rules are the
// client's own (schema/upstream/custom-data.ts, and the server-owned namespace of rule 6 from
// schema/upstream/service-facts.ts), so simulator and client can never disagree; only the wording of
// the answers is the service's.
import { checkCustomData } from '../schema/upstream/custom-data.ts';
import type { RuleIssue } from '../schema/upstream/rule-issue.ts';
import {
  CUSTOM_DATA_MAX_KEY_LENGTH,
  CUSTOM_DATA_MAX_KEYS,
  CUSTOM_DATA_MAX_STRING_LENGTH,
  RESERVED_CUSTOM_DATA_KEY,
} from '../schema/upstream/service-facts.ts';

/** Keys in the server-owned namespace (`_…`, `$…`) are stripped on input (rule 6) rather than rejected. */
export const isServerOwnedKey = (key: string): boolean => RESERVED_CUSTOM_DATA_KEY.test(key);

/** Written by the service itself on invitations created through the API (rule 7: it appears in responses). */
export const SERVER_SOURCE_KEY = '_source';

export type CustomDataResult =
  | { ok: true; value: Record<string, string | number | boolean> }
  | { ok: false; messages: string[] };

/** The service's answer to a broken rule; the key, where the rule names one, is cut at 40 characters. */
function answer(i: RuleIssue, field: string): string {
  const key = i.path.slice(field.length + 1, field.length + 41);
  switch (i.rule) {
    case 'customData.rule1':
      return `${field} must have at most ${CUSTOM_DATA_MAX_KEYS} keys (rule 1)`;
    case 'customData.rule2':
      return `${field} key length must be at most ${CUSTOM_DATA_MAX_KEY_LENGTH} characters (rule 2)`;
    case 'customData.rule3':
      return `${field}.${key} string value must be at most ${CUSTOM_DATA_MAX_STRING_LENGTH} characters (rule 3)`;
    case 'customData.rule4':
      return `${field}.${key} must be a string, number or boolean; nested objects are not allowed (rule 4)`;
    case 'customData.rule5':
      return `${field} keys must not be __proto__, constructor or prototype (rule 5)`;
    case 'customData.object':
      return `${field} must be an object`;
    default:
      return `${i.path} ${i.message}`;
  }
}

export function validateCustomData(input: unknown, field = 'customData'): CustomDataResult {
  const { data, issues } = checkCustomData(input, field);
  return issues.length > 0
    ? { ok: false, messages: [...new Set(issues.map((i) => answer(i, field)))] }
    : { ok: true, value: data };
}

/**
 * The stored customData after a client update: the client's (validated) keys replace the client's
 * previous ones; the server-owned keys already stored are kept (the client cannot set or remove them).
 */
export function withServerKeys(
  stored: Record<string, unknown>,
  client: Record<string, unknown>,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(stored)) {
    if (isServerOwnedKey(key))
      Object.defineProperty(out, key, { value: v, enumerable: true, writable: true, configurable: true });
  }
  for (const [key, v] of Object.entries(client))
    Object.defineProperty(out, key, { value: v, enumerable: true, writable: true, configurable: true });
  return out;
}
