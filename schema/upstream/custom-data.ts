import {
  CUSTOM_DATA_MAX_KEY_LENGTH,
  CUSTOM_DATA_MAX_KEYS,
  CUSTOM_DATA_MAX_STRING_LENGTH,
  FORBIDDEN_CUSTOM_DATA_KEYS,
  RESERVED_CUSTOM_DATA_KEY,
} from './service-facts.ts';
import type { RuleIssue } from './rule-issue.ts';

export type { RuleIssue };

/**
 * customData on input (business invitations, connections, transactions): the contract's eight
 * rules, checked before anything is sent so a bad value fails with the field and the rule.
 *   1. at most 10 keys                 5. keys __proto__, constructor, prototype refused
 *   2. key length at most 255          6. reserved server-owned keys stripped (not stored)
 *   3. string values at most 255       7. responses are returned unchanged: never checked here
 *   4. values string, number, boolean  8. visibility to record owners is enforced by the server
 * Lengths count Unicode code points, as the service's validator does for text.
 */

export type CustomDataInput = Record<string, string | number | boolean>;

const length = (s: string): number => {
  let n = 0;
  for (const _ of s) n++;
  return n;
};

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'a nested object' : typeof value;
}

/** The issues with `input` as customData, and the data as it will be sent (reserved keys stripped). */
export function checkCustomData(input: unknown, field = 'customData'): { data: CustomDataInput; issues: RuleIssue[] } {
  const issues: RuleIssue[] = [];
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    return {
      data: {},
      issues: [
        {
          path: field,
          rule: 'customData.object',
          message: `must be an object of key/value pairs, got ${describe(input)}`,
        },
      ],
    };
  }
  // Own keys, including a `__proto__` that JSON.parse creates as an own property.
  const keys = Object.keys(input);
  const data: CustomDataInput = {};
  let kept = 0;
  for (const key of keys) {
    const at = `${field}.${key}`;
    if (FORBIDDEN_CUSTOM_DATA_KEYS.has(key)) {
      issues.push({
        path: at,
        rule: 'customData.rule5',
        message: `rule 5: key "${key}" is forbidden (__proto__, constructor and prototype are refused)`,
      });
      continue;
    }
    if (RESERVED_CUSTOM_DATA_KEY.test(key)) continue; // rule 6: server-owned, the service ignores it
    kept++;
    if (length(key) > CUSTOM_DATA_MAX_KEY_LENGTH) {
      issues.push({
        path: `${field}.${key.slice(0, 20)}…`,
        rule: 'customData.rule2',
        message: `rule 2: key is ${length(key)} characters, at most ${CUSTOM_DATA_MAX_KEY_LENGTH} allowed`,
      });
      continue;
    }
    const value: unknown = (input as Record<string, unknown>)[key];
    if (typeof value === 'string') {
      if (length(value) > CUSTOM_DATA_MAX_STRING_LENGTH) {
        issues.push({
          path: at,
          rule: 'customData.rule3',
          message: `rule 3: string value is ${length(value)} characters, at most ${CUSTOM_DATA_MAX_STRING_LENGTH} allowed`,
        });
        continue;
      }
    } else if (typeof value === 'number') {
      if (!Number.isFinite(value)) {
        issues.push({
          path: at,
          rule: 'customData.rule4',
          message: 'rule 4: number must be finite (NaN and Infinity are not JSON)',
        });
        continue;
      }
    } else if (typeof value !== 'boolean') {
      issues.push({
        path: at,
        rule: 'customData.rule4',
        message: `rule 4: value must be a string, number or boolean, got ${describe(value)}`,
      });
      continue;
    }
    // Safe: forbidden keys never reach this assignment.
    data[key] = value;
  }
  if (kept > CUSTOM_DATA_MAX_KEYS) {
    issues.unshift({
      path: field,
      rule: 'customData.rule1',
      message: `rule 1: ${kept} keys, at most ${CUSTOM_DATA_MAX_KEYS} allowed`,
    });
  }
  return { data, issues };
}
