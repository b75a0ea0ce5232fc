// Registered webhooks, their secrets (with rotation), messages, attempts and stats.
import { randomBytes } from 'node:crypto';
import { notFound } from './http-errors.ts';
import { uuidFor } from './rng.ts';
import type { WebhookInput } from './webhook-input.ts';

export interface Webhook {
  id: string;
  url: string;
  description?: string;
  events: string[];
  isActive: boolean;
  createdAt: string;
  updatedAt: string;
  secret: string;
  /** Previous secret still used to sign until `previousUntil` (epoch ms) after a rotation. */
  previousSecret?: string;
  previousUntil?: number;
}

export interface Message {
  id: string;
  eventType: string;
  payload: Record<string, unknown>;
  timestamp: string;
}

export interface Attempt {
  id: string;
  msgId: string;
  url: string;
  response: string;
  responseStatusCode: number;
  status: 'SUCCESS' | 'FAIL';
  timestamp: string;
  msg: Message;
}

const newSecret = (): string => `whsec_${randomBytes(24).toString('base64')}`;

export class WebhookStore {
  private hooks = new Map<string, Webhook>();
  private attempts = new Map<string, Attempt[]>();
  /** Per webhook: message id → last outcome, for stats. */
  private outcomes = new Map<string, Map<string, 'SUCCESS' | 'FAIL'>>();
  private counter = 0;

  constructor(private seed: number) {}

  list(): Webhook[] {
    return [...this.hooks.values()];
  }

  get(id: string): Webhook {
    const hook = this.hooks.get(id);
    if (!hook) throw notFound(`Webhook ${id}`);
    return hook;
  }

  create(input: WebhookInput): Webhook {
    const now = new Date().toISOString();
    const hook: Webhook = {
      id: uuidFor(this.seed, 'webhook', this.counter++),
      url: input.url ?? '',
      events: input.events ?? ['transaction.updated'],
      isActive: input.isActive ?? true,
      createdAt: now,
      updatedAt: now,
      secret: newSecret(),
    };
    if (input.description !== undefined) hook.description = input.description;
    this.hooks.set(hook.id, hook);
    return hook;
  }

  patch(id: string, input: WebhookInput): Webhook {
    const hook = this.get(id);
    Object.assign(hook, input, { updatedAt: new Date().toISOString() });
    return hook;
  }

  remove(id: string): void {
    this.get(id);
    this.hooks.delete(id);
  }

  /** Starts a rotation: new secret now, both signatures for `graceMs` of real time. */
  rotateSecret(id: string, graceMs: number): Webhook {
    const hook = this.get(id);
    hook.previousSecret = hook.secret;
    hook.previousUntil = Date.now() + graceMs;
    hook.secret = newSecret();
    return hook;
  }

  /** Secrets to sign with right now (current first). */
  signingSecrets(hook: Webhook): string[] {
    return hook.previousSecret && (hook.previousUntil ?? 0) > Date.now()
      ? [hook.secret, hook.previousSecret]
      : [hook.secret];
  }

  record(webhookId: string, attempt: Attempt): void {
    const list = this.attempts.get(webhookId) ?? [];
    list.push(attempt);
    this.attempts.set(webhookId, list);
    const outcomes = this.outcomes.get(webhookId) ?? new Map<string, 'SUCCESS' | 'FAIL'>();
    if (outcomes.get(attempt.msgId) !== 'SUCCESS') outcomes.set(attempt.msgId, attempt.status);
    this.outcomes.set(webhookId, outcomes);
  }

  /** Newest first, like the hosted service. */
  attemptsOf(webhookId: string): Attempt[] {
    return [...(this.attempts.get(webhookId) ?? [])].reverse();
  }

  /** A message counts as failed while its latest attempt failed, successful once one succeeded. */
  stats(webhookId: string): { successfulMessages: number; failedMessages: number } {
    let successfulMessages = 0;
    let failedMessages = 0;
    for (const outcome of this.outcomes.get(webhookId)?.values() ?? []) {
      if (outcome === 'SUCCESS') successfulMessages++;
      else failedMessages++;
    }
    return { successfulMessages, failedMessages };
  }

  reset(): void {
    this.hooks.clear();
    this.attempts.clear();
    this.outcomes.clear();
  }
}

export function webhookToWire(hook: Webhook): Record<string, unknown> {
  return {
    id: hook.id,
    url: hook.url,
    description: hook.description ?? {},
    events: hook.events,
    isActive: hook.isActive,
    createdAt: hook.createdAt,
    updatedAt: hook.updatedAt,
  };
}
