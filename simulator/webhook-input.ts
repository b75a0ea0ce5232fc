// Validation of webhook bodies (pure). The url rule is the client's (schema/upstream/webhook-rules.ts);
// the answers keep the live service's class-validator wording.
import { WEBHOOK_DESCRIPTION_MAX_LENGTH, WEBHOOK_URL_MAX_LENGTH } from '../schema/upstream/service-facts.ts';
import { webhookUrlIssues } from '../schema/upstream/webhook-rules.ts';

export const EVENT_TYPES = ['transaction.updated'] as const;

export interface WebhookInput {
  url?: string;
  description?: string;
  isActive?: boolean;
  events?: string[];
}

const URL_ANSWERS: Record<string, string> = {
  'webhookUrl.format': 'url must be a URL address',
  'webhookUrl.length': `url must be shorter than or equal to ${WEBHOOK_URL_MAX_LENGTH} characters`,
  'webhookUrl.protocol': 'url must be a URL address (http or https)',
  'webhookUrl.tld': 'url must be a URL address with a top-level domain (IP addresses and localhost are refused)',
};

/** Why the service refuses `raw` as a webhook url, in its words; undefined when it accepts it. */
export function urlProblem(raw: unknown): string | undefined {
  const [issue] = webhookUrlIssues(raw);
  return issue ? (URL_ANSWERS[issue.rule] ?? `url ${issue.message}`) : undefined;
}

export function validateWebhook(raw: unknown, requireUrl: boolean): { value: WebhookInput; messages: string[] } {
  const m: string[] = [];
  const value: WebhookInput = {};
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    return { value, messages: ['body must be a JSON object'] };
  const body = raw as Record<string, unknown>;
  if (body['url'] !== undefined || requireUrl) {
    const problem = urlProblem(body['url']);
    if (problem) m.push(problem);
    else value.url = body['url'] as string;
  }
  if (body['description'] !== undefined) {
    if (typeof body['description'] !== 'string') m.push('description must be a string');
    else if (body['description'].length > WEBHOOK_DESCRIPTION_MAX_LENGTH)
      m.push(`description must be shorter than or equal to ${WEBHOOK_DESCRIPTION_MAX_LENGTH} characters`);
    else value.description = body['description'];
  }
  if (body['isActive'] !== undefined) {
    if (typeof body['isActive'] !== 'boolean') m.push('isActive must be a boolean value');
    else value.isActive = body['isActive'];
  }
  if (body['events'] !== undefined) {
    const events = body['events'];
    if (!Array.isArray(events) || !events.every((e) => typeof e === 'string'))
      m.push('events must be an array of strings');
    else {
      const unknown = events.filter((e) => !(EVENT_TYPES as readonly string[]).includes(e));
      if (unknown.length > 0)
        m.push(
          `each value in events must be one of the following values: ${EVENT_TYPES.join(', ')} (unknown: ${unknown.join(', ')})`,
        );
      else value.events = [...new Set(events as string[])];
    }
  }
  return { value, messages: m };
}
