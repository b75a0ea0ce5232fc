import { z } from 'zod';
import { dateTime, opt, openEnum, unsetAsNull, type DateTime, type Open } from './primitives.ts';

/** Webhooks, their delivery attempts and statistics (contract: Webhook, Webhook attempt, Webhook stats). */

export interface Webhook {
  id: string;
  url: string;
  /** `{}` in the contract when unset; null here. */
  description: string | null;
  events: string[];
  isActive: boolean;
  createdAt?: DateTime | null;
  updatedAt?: DateTime | null;
}

export interface WebhookMessage {
  eventType: string;
  payload: Record<string, unknown>;
  id: string;
  timestamp: DateTime;
}

export interface WebhookAttempt {
  id: string;
  msgId: string;
  url: string;
  /** The body the endpoint answered. */
  response: string;
  responseStatusCode: number;
  status: Open<'SUCCESS'>;
  timestamp: DateTime;
  msg: WebhookMessage;
}

export interface WebhookStats {
  successfulMessages: number;
  failedMessages: number;
}

export interface CreateWebhookInput {
  url: string;
  description?: string;
  isActive?: boolean;
  events?: string[];
}
export interface UpdateWebhookInput {
  url: string;
  description?: string;
  isActive?: boolean;
  events?: string[];
}

export const WebhookSchema: z.ZodType<Webhook> = z.looseObject({
  id: z.string(),
  url: z.string(),
  description: unsetAsNull(z.string())
    .optional()
    .transform((v) => v ?? null),
  events: z
    .array(z.string())
    .nullish()
    .transform((v) => v ?? []),
  isActive: z.boolean(),
  createdAt: opt(dateTime),
  updatedAt: opt(dateTime),
});

export const WebhookMessageSchema: z.ZodType<WebhookMessage> = z.looseObject({
  eventType: z.string(),
  payload: z.record(z.string(), z.unknown()),
  id: z.string(),
  timestamp: dateTime,
});

export const WebhookAttemptSchema: z.ZodType<WebhookAttempt> = z.looseObject({
  id: z.string(),
  msgId: z.string(),
  url: z.string(),
  response: z.string(),
  responseStatusCode: z.number(),
  status: openEnum(['SUCCESS']),
  timestamp: dateTime,
  msg: WebhookMessageSchema,
});

export const WebhookStatsSchema: z.ZodType<WebhookStats> = z.looseObject({
  successfulMessages: z.number(),
  failedMessages: z.number(),
});

export const WebhookEventsSchema = z.looseObject({ events: z.array(z.string()) });
export const SendExampleResultSchema = z.looseObject({ messageId: z.string() });
