import * as serviceFacts from './upstream/service-facts.ts';
import { webhookUrlIssues } from './upstream/webhook-rules.ts';
import { ConfigError } from '../platform/config.ts';

/**
 * The webhooks ddsync keeps registered (DDSYNC_WEBHOOKS), checked before anything is sent: a name,
 * an http(s) URL whose host has a TLD (the service refuses others) of at most 2,048 characters, the
 * events, an optional description, and whether it is active. ddsync recognises its own webhooks at
 * the service by a marker it appends to their description, `[ddsync:<name>]`: every other webhook
 * is left alone.
 */
export interface DesiredWebhook {
  name: string;
  url: string;
  events: string[];
  description: string;
  active: boolean;
}

export const DEFAULT_EVENTS = ['transaction.updated'];

/** A configuration error like any other (exit code 2), naming the entry, the field and the rule. */
export class DesiredWebhooksError extends ConfigError {
  override name = 'DesiredWebhooksError';
  constructor(problems: string[]) {
    super(problems);
    this.message = `DDSYNC_WEBHOOKS is invalid:\n${problems.map((p) => `  - ${p}`).join('\n')}`;
  }
}

/**
 * A webhook's name: lower-case letters, digits and dashes, at most 63, not starting with a dash. The
 * one pattern of the name in DDSYNC_WEBHOOKS, in the marker, and in the receiver's path /hooks/<name>
 * (a regular-expression source, for those to build on).
 */
export const WEBHOOK_NAME_PATTERN = '[a-z0-9][a-z0-9-]{0,62}';
const NAME = new RegExp(`^${WEBHOOK_NAME_PATTERN}$`);
const MARKED = new RegExp(`\\[ddsync:(${WEBHOOK_NAME_PATTERN})\\]\\s*$`);

export function isWebhookName(name: unknown): name is string {
  return typeof name === 'string' && NAME.test(name);
}

export function marker(name: string): string {
  return `[ddsync:${name}]`;
}

/** The description ddsync writes: the configured text, then its marker. */
export function describedAs(w: DesiredWebhook): string {
  return w.description === '' ? marker(w.name) : `${w.description} ${marker(w.name)}`;
}

/** The name in a description's marker, or null for a webhook ddsync does not manage. */
export function managedName(description: unknown): string | null {
  if (typeof description !== 'string') return null;
  const m = MARKED.exec(description);
  return m ? m[1]! : null;
}

export function parseDesiredWebhooks(text: string): DesiredWebhook[] {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new DesiredWebhooksError([`not valid JSON (${(e as Error).message})`]);
  }
  if (!Array.isArray(raw))
    throw new DesiredWebhooksError(['must be a JSON array of {name, url, events?, description?, active?}']);
  const problems: string[] = [];
  const out: DesiredWebhook[] = [];
  const names = new Set<string>();
  raw.forEach((item, i) => {
    const at = `[${i}]`;
    if (typeof item !== 'object' || item === null || Array.isArray(item)) {
      problems.push(`${at}: must be an object {name, url, events?, description?, active?}`);
      return;
    }
    const o = item as Record<string, unknown>;
    for (const key of Object.keys(o))
      if (!['name', 'url', 'events', 'description', 'active'].includes(key))
        problems.push(`${at}.${key}: unknown field`);
    const name = o['name'];
    if (!isWebhookName(name))
      problems.push(
        `${at}.name: required, lower-case letters, digits and dashes (at most 63), got ${JSON.stringify(name)}`,
      );
    else if (names.has(name)) problems.push(`${at}.name: "${name}" is used twice`);
    else names.add(name);
    const url = o['url'];
    for (const i of webhookUrlIssues(url, `${at}.url`)) {
      problems.push(
        i.rule === 'webhookUrl.length'
          ? `${i.path}: ${i.message}`
          : `${i.path}: required, ${i.message}, got ${JSON.stringify(url)}`,
      );
    }
    const events = o['events'] ?? DEFAULT_EVENTS;
    if (!Array.isArray(events) || events.length === 0 || !events.every((e) => typeof e === 'string' && e !== ''))
      problems.push(`${at}.events: a non-empty list of event kinds (e.g. ["transaction.updated"])`);
    const description = o['description'] ?? '';
    const room = serviceFacts.WEBHOOK_DESCRIPTION_MAX_LENGTH - (typeof name === 'string' ? marker(name).length + 1 : 0);
    if (typeof description !== 'string') problems.push(`${at}.description: a string when given`);
    else if (description.length > room)
      problems.push(
        `${at}.description: at most ${room} characters (the service allows ${serviceFacts.WEBHOOK_DESCRIPTION_MAX_LENGTH}, ddsync's marker takes the rest)`,
      );
    const active = o['active'] ?? true;
    if (typeof active !== 'boolean') problems.push(`${at}.active: true or false when given`);
    // Each kind once: the service keeps a set, and a repeat would read as drift on every run.
    if (problems.length === 0)
      out.push({
        name: name as string,
        url: url as string,
        events: [...new Set(events as string[])],
        description: description as string,
        active: active as boolean,
      });
  });
  if (problems.length > 0) throw new DesiredWebhooksError(problems);
  return out;
}
