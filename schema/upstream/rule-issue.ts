/**
 * A broken rule of the contract (or of upstream-facts), as every rule of schema/upstream/ reports it:
 * where (the field path the caller gave), which rule (a stable id, for a caller that words its own
 * answer, e.g. the simulator), and the rule in words. The client, the file intake and the simulator
 * all take their verdict from these rules, so they cannot disagree on what is valid.
 */
export interface RuleIssue {
  path: string;
  rule: string;
  message: string;
}

/** A value as a rule message quotes it: strings quoted and cut at 40 characters. */
export function describeValue(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return typeof v === 'string'
    ? `"${v.length > 40 ? `${v.slice(0, 40)}…` : v}"`
    : typeof v === 'object'
      ? 'an object'
      : String(v);
}
