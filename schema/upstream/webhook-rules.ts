import type { RuleIssue } from './rule-issue.ts';
import { WEBHOOK_URL_MAX_LENGTH } from './service-facts.ts';

/**
 * A webhook's url as the service takes it (contract: "valid URL with a TLD, max 2048 characters";
 * upstream-facts: http://127.0.0.1 is refused): an http(s) URL whose host name ends in a top-level
 * domain of letters. The one rule for DDSYNC_WEBHOOKS (schema/desired-webhooks.ts), the client's
 * request checks (upstream/request-checks.ts) and the simulator (simulator/webhook-input.ts). Pure.
 */

/** The last label of a host name, when it is a TLD: 2 to 63 letters (so no IP address, no `localhost`). */
const TLD = /^[a-z]{2,63}$/i;

const HTTP_URL_WITH_TLD =
  'expected a valid http(s) URL whose host has a TLD (the service refuses e.g. http://127.0.0.1 and http://localhost)';

export function webhookUrlIssues(value: unknown, field = 'url'): RuleIssue[] {
  const issue = (rule: string, message: string): RuleIssue[] => [{ path: field, rule, message }];
  if (typeof value !== 'string' || value === '') return issue('webhookUrl.format', HTTP_URL_WITH_TLD);
  // The length first: a 3,000-character text is refused for its length, whatever it holds.
  if (value.length > WEBHOOK_URL_MAX_LENGTH)
    return issue('webhookUrl.length', `at most ${WEBHOOK_URL_MAX_LENGTH} characters, got ${value.length}`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return issue('webhookUrl.format', HTTP_URL_WITH_TLD);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return issue('webhookUrl.protocol', HTTP_URL_WITH_TLD);
  const labels = url.hostname.split('.');
  if (labels.length < 2 || !TLD.test(labels[labels.length - 1] ?? ''))
    return issue('webhookUrl.tld', HTTP_URL_WITH_TLD);
  return [];
}
