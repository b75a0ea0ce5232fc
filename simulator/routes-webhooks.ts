// Webhooks: CRUD, events, stats, attempts, example messages, secret (entitlement canManageWebhooks).
import { randomUUID } from 'node:crypto';
import { HttpError, badRequest } from './http-errors.ts';
import { json, noContent, type Route } from './router.ts';
import type { SimState } from './state.ts';
import { EVENT_TYPES, validateWebhook } from './webhook-input.ts';
import { webhookToWire } from './webhooks.ts';

export function webhookRoutes(state: SimState): Route[] {
  const { webhooks } = state;
  const guarded = (route: Route): Route => ({
    ...route,
    handler: (ctx) => {
      if (!state.settings.entitlements.canManageWebhooks)
        throw new HttpError(403, 'The business is not entitled to manage webhooks');
      return route.handler(ctx);
    },
  });
  const routes: Route[] = [
    { method: 'GET', path: '/webhooks', handler: () => json(200, webhooks.list().map(webhookToWire)) },
    {
      method: 'POST',
      path: '/webhooks',
      handler: ({ body }) => {
        const { value, messages } = validateWebhook(body, true);
        if (messages.length > 0) throw badRequest(messages);
        return json(201, webhookToWire(webhooks.create(value)));
      },
    },
    { method: 'GET', path: '/webhooks/events', handler: () => json(200, { events: [...EVENT_TYPES] }) },
    {
      method: 'GET',
      path: '/webhooks/:id',
      handler: ({ params }) => json(200, webhookToWire(webhooks.get(params[0] ?? ''))),
    },
    {
      method: 'PATCH',
      path: '/webhooks/:id',
      handler: ({ params, body }) => {
        webhooks.get(params[0] ?? '');
        const { value, messages } = validateWebhook(body, true);
        if (messages.length > 0) throw badRequest(messages);
        return json(200, webhookToWire(webhooks.patch(params[0] ?? '', value)));
      },
    },
    {
      method: 'DELETE',
      path: '/webhooks/:id',
      handler: ({ params }) => {
        webhooks.remove(params[0] ?? '');
        return noContent();
      },
    },
    {
      method: 'GET',
      path: '/webhooks/:id/stats',
      handler: ({ params }) => (webhooks.get(params[0] ?? ''), json(200, webhooks.stats(params[0] ?? ''))),
    },
    // The contract shows one object; like the hosted service's list endpoints we answer an array (newest first).
    {
      method: 'GET',
      path: '/webhooks/:id/attempts',
      handler: ({ params }) => (webhooks.get(params[0] ?? ''), json(200, webhooks.attemptsOf(params[0] ?? ''))),
    },
    {
      method: 'POST',
      path: '/webhooks/:id/send-example',
      handler: ({ params, body }) => {
        const hook = webhooks.get(params[0] ?? '');
        const eventType = (body as { eventType?: unknown } | undefined)?.eventType;
        if (typeof eventType !== 'string' || !(EVENT_TYPES as readonly string[]).includes(eventType)) {
          throw badRequest([`eventType must be one of the following values: ${EVENT_TYPES.join(', ')}`]);
        }
        const payload = {
          data: { id: randomUUID(), status: 'SUBMITTED' },
          event: eventType,
          timestamp: new Date().toISOString(),
        };
        return json(201, { messageId: state.delivery.send(hook, eventType, payload) });
      },
    },
    {
      method: 'GET',
      path: '/webhooks/:id/secret',
      handler: ({ params }) => json(200, webhooks.get(params[0] ?? '').secret),
    },
  ];
  return routes.map(guarded);
}
