// Validation of webhook bodies (pure).

export const EVENT_TYPES = ['transaction.updated'] as const;

export interface WebhookInput {
  url?: string;
  description?: string;
  isActive?: boolean;
  events?: string[];
}

/** A URL the service accepts: http(s), parsable, and a host name with a top-level domain. */
export function urlProblem(raw: unknown): string | undefined {
  if (typeof raw !== 'string' || raw.length === 0) return 'url must be a URL address';
  if (raw.length > 2048) return 'url must be shorter than or equal to 2048 characters';
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'url must be a URL address';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'url must be a URL address (http or https)';
  const labels = url.hostname.split('.');
  const tld = labels[labels.length - 1] ?? '';
  if (labels.length < 2 || !/^[a-z]{2,63}$/i.test(tld)) return 'url must be a URL address with a top-level domain (IP addresses and localhost are refused)';
  return undefined;
}

export function validateWebhook(raw: unknown, requireUrl: boolean): { value: WebhookInput; messages: string[] } {
  const m: string[] = [];
  const value: WebhookInput = {};
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return { value, messages: ['body must be a JSON object'] };
  const body = raw as Record<string, unknown>;
  if (body['url'] !== undefined || requireUrl) {
    const problem = urlProblem(body['url']);
    if (problem) m.push(problem);
    else value.url = body['url'] as string;
  }
  if (body['description'] !== undefined) {
    if (typeof body['description'] !== 'string') m.push('description must be a string');
    else if (body['description'].length > 1000) m.push('description must be shorter than or equal to 1000 characters');
    else value.description = body['description'];
  }
  if (body['isActive'] !== undefined) {
    if (typeof body['isActive'] !== 'boolean') m.push('isActive must be a boolean value');
    else value.isActive = body['isActive'];
  }
  if (body['events'] !== undefined) {
    const events = body['events'];
    if (!Array.isArray(events) || !events.every((e) => typeof e === 'string')) m.push('events must be an array of strings');
    else {
      const unknown = events.filter((e) => !(EVENT_TYPES as readonly string[]).includes(e));
      if (unknown.length > 0) m.push(`each value in events must be one of the following values: ${EVENT_TYPES.join(', ')} (unknown: ${unknown.join(', ')})`);
      else value.events = [...new Set(events as string[])];
    }
  }
  return { value, messages: m };
}
