import { z } from 'zod';
import {
  SendExampleResultSchema,
  WebhookAttemptSchema,
  WebhookEventsSchema,
  WebhookSchema,
  WebhookStatsSchema,
  type CreateWebhookInput,
  type UpdateWebhookInput,
  type Webhook,
  type WebhookAttempt,
  type WebhookStats,
} from '../../schema/upstream.ts';
import { type CallOptions, type UpstreamHttp, endpointName } from '../client-core.ts';
import { ResponseValidationError } from '../errors.ts';
import { CreateWebhookSchema, UpdateWebhookSchema, checkRequest } from '../request-checks.ts';
import { PATHS } from '../../schema/upstream/service-facts.ts';
import { jsonBody, noBody, textBody } from '../transport.ts';
import { parseResponse } from '../validate.ts';

/** Webhooks of the business: registration, delivery attempts, statistics, example sends, secret. */

/**
 * The contract shows the attempts response "as a single object"; a list is what a delivery log
 * is in practice (Svix pages it as {data: [...]}). All three shapes are read as a list.
 */
const AttemptsSchema = z.union([
  z.array(WebhookAttemptSchema),
  z.looseObject({ data: z.array(WebhookAttemptSchema) }).transform((r) => r.data),
  WebhookAttemptSchema.transform((a) => [a]),
]);

export function webhookEndpoints(http: UpstreamHttp) {
  const E = {
    list: endpointName('GET', PATHS.webhooks),
    create: endpointName('POST', PATHS.webhooks),
    get: endpointName('GET', PATHS.webhook),
    patch: endpointName('PATCH', PATHS.webhook),
    events: endpointName('GET', PATHS.webhookEvents),
    stats: endpointName('GET', PATHS.webhookStats),
    attempts: endpointName('GET', PATHS.webhookAttempts),
    sendExample: endpointName('POST', PATHS.webhookSendExample),
    secret: endpointName('GET', PATHS.webhookSecret),
  };

  return {
    async listWebhooks(opts: CallOptions = {}): Promise<Webhook[]> {
      const res = await http.request({ method: 'GET', template: PATHS.webhooks }, jsonBody, opts);
      return parseResponse(z.array(WebhookSchema), res, E.list);
    },

    async createWebhook(input: CreateWebhookInput, opts: CallOptions = {}): Promise<Webhook> {
      const body = checkRequest(CreateWebhookSchema, input, E.create);
      const res = await http.request({ method: 'POST', template: PATHS.webhooks, body }, jsonBody, opts);
      return parseResponse(WebhookSchema, res, E.create);
    },

    async getWebhook(id: string, opts: CallOptions = {}): Promise<Webhook> {
      const res = await http.request({ method: 'GET', template: PATHS.webhook, params: { id } }, jsonBody, opts);
      return parseResponse(WebhookSchema, res, E.get);
    },

    /** `url` is required by the service even when unchanged. */
    async updateWebhook(id: string, input: UpdateWebhookInput, opts: CallOptions = {}): Promise<Webhook> {
      const body = checkRequest(UpdateWebhookSchema, input, E.patch);
      const res = await http.request(
        { method: 'PATCH', template: PATHS.webhook, params: { id }, body },
        jsonBody,
        opts,
      );
      return parseResponse(WebhookSchema, res, E.patch);
    },

    async deleteWebhook(id: string, opts: CallOptions = {}): Promise<void> {
      await http.request({ method: 'DELETE', template: PATHS.webhook, params: { id } }, noBody, opts);
    },

    /** Supported event kinds (transaction.updated is the only one that occurs). */
    async listWebhookEventTypes(opts: CallOptions = {}): Promise<string[]> {
      const res = await http.request({ method: 'GET', template: PATHS.webhookEvents }, jsonBody, opts);
      return parseResponse(WebhookEventsSchema, res, E.events).events;
    },

    async getWebhookStats(id: string, opts: CallOptions = {}): Promise<WebhookStats> {
      const res = await http.request({ method: 'GET', template: PATHS.webhookStats, params: { id } }, jsonBody, opts);
      return parseResponse(WebhookStatsSchema, res, E.stats);
    },

    async listWebhookAttempts(id: string, opts: CallOptions = {}): Promise<WebhookAttempt[]> {
      const res = await http.request(
        { method: 'GET', template: PATHS.webhookAttempts, params: { id } },
        jsonBody,
        opts,
      );
      return parseResponse(AttemptsSchema, res, E.attempts);
    },

    /** Sends an example message; returns its message id (the de-duplication key of deliveries). */
    async sendExampleWebhookEvent(
      id: string,
      eventType: string,
      opts: CallOptions = {},
    ): Promise<{ messageId: string }> {
      const body = checkRequest(z.looseObject({ eventType: z.string().min(1) }), { eventType }, E.sendExample);
      const res = await http.request(
        { method: 'POST', template: PATHS.webhookSendExample, params: { id }, body },
        jsonBody,
        opts,
      );
      return { messageId: parseResponse(SendExampleResultSchema, res, E.sendExample).messageId };
    },

    /**
     * The endpoint's signing secret ("a string": read as a JSON string, a {secret|key} object or
     * plain text). Registered with the redactor: it never appears in logs or errors afterwards.
     */
    async getWebhookSecret(id: string, opts: CallOptions = {}): Promise<string> {
      const { text } = await http.request(
        { method: 'GET', template: PATHS.webhookSecret, params: { id } },
        textBody,
        opts,
      );
      const secret = secretFrom(text);
      if (!secret)
        throw new ResponseValidationError(
          E.secret,
          [{ path: '', message: 'expected a non-empty string (the secret)' }],
          200,
        );
      http.registerSecret(secret);
      return secret;
    },
  };
}

/** The secret from the body, whatever its wrapping; undefined when there is none. */
export function secretFrom(text: string): string | undefined {
  const trimmed = text.trim();
  if (trimmed === '') return undefined;
  try {
    const body: unknown = JSON.parse(trimmed);
    if (typeof body === 'string') return body || undefined;
    if (body && typeof body === 'object') {
      const { secret, key } = body as { secret?: unknown; key?: unknown };
      const value = typeof secret === 'string' ? secret : typeof key === 'string' ? key : undefined;
      return value || undefined;
    }
    return undefined;
  } catch {
    return trimmed;
  }
}
