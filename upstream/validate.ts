import type { z } from 'zod';
import { ResponseValidationError, type ValidationIssue } from './errors.ts';

/** At most this many issues are reported: the first few name the problem, the rest is noise. */
const MAX_ISSUES = 5;

/** `[12].geometry.coordinates` from zod's `[12, 'geometry', 'coordinates']`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else out += out === '' ? String(seg) : `.${String(seg)}`;
  }
  return out;
}

/** A short rule text: `expected array` rather than zod's "Invalid input: expected array, received object". */
export function ruleOf(issue: z.core.$ZodIssue): string {
  if (issue.code === 'invalid_type') {
    const missing = issue.message.includes('received undefined');
    return missing ? `required ${issue.expected}, missing` : `expected ${issue.expected}`;
  }
  return issue.message;
}

export function issuesFrom(error: z.ZodError, prefix: readonly PropertyKey[] = []): ValidationIssue[] {
  return error.issues
    .slice(0, MAX_ISSUES)
    .map((i) => ({ path: formatPath([...prefix, ...i.path]), message: ruleOf(i) }));
}

/**
 * Validates and normalises a response body; a mismatch raises ResponseValidationError naming the
 * endpoint, the field path and the rule. Unknown extra fields are kept (loose objects).
 */
export function parseResponse<T>(schema: z.ZodType<T>, body: unknown, endpoint: string, status?: number): T {
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  throw new ResponseValidationError(endpoint, issuesFrom(result.error), status);
}
