// The control API over HTTP under /_sim/ (no authentication, never faulted), for tests and demos.
import type { SimulatorControl } from './control.ts';
import type { InterceptRule } from './intercepts.ts';
import { badRequest } from './http-errors.ts';
import type { PlotPatch } from './plot-store.ts';
import { json, noContent, type Route } from './router.ts';

const obj = (body: unknown): Record<string, unknown> => {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw badRequest(['body must be a JSON object']);
  return body as Record<string, unknown>;
};

const str = (body: Record<string, unknown>, key: string): string => {
  const v = body[key];
  if (typeof v !== 'string' || v === '') throw badRequest([`${key} must be a non-empty string`]);
  return v;
};

export function controlRoutes(control: SimulatorControl): Route[] {
  const route = (method: string, path: string, handler: Route['handler']): Route => ({
    method,
    path: `/_sim${path}`,
    handler,
    public: true,
  });
  return [
    route('GET', '/state', () =>
      json(200, {
        callerBusinessId: control.callerBusinessId(),
        suppliers: control.suppliers(),
        plots: control.countPlots(),
        oddRecords: control.oddRecords(),
        surveyResponses: control.surveyResponses(),
        invitations: control.invitations(),
      }),
    ),
    route('GET', '/suppliers', () => json(200, control.suppliers())),
    route('GET', '/plots/count', ({ query }) =>
      json(200, { count: control.countPlots({ includeOwn: query.get('includeOwn') !== 'false' }) }),
    ),
    route('GET', '/plots/:id', ({ params }) => {
      const plot = control.getPlot(params[0] ?? '');
      return plot ? json(200, plot) : json(404, { statusCode: 404, message: 'Plot not found', error: 'Not Found' });
    }),
    route('PATCH', '/plots/:id', ({ params, body }) =>
      json(200, control.editPlot(params[0] ?? '', obj(body) as PlotPatch)),
    ),
    route('DELETE', '/plots/:id', ({ params }) => (control.removePlot(params[0] ?? ''), noContent())),
    route('POST', '/plots/:id/restore', ({ params }) => (control.restorePlot(params[0] ?? ''), noContent())),
    route('GET', '/suppliers/:id/plot-ids', ({ params }) => json(200, control.supplierPlotIds(params[0] ?? ''))),
    route('POST', '/plots/:id/analyses', ({ params, body }) =>
      json(201, control.addAnalysis(params[0] ?? '', (body ?? {}) as Record<string, never>)),
    ),
    route(
      'POST',
      '/suppliers/:id/disconnect',
      ({ params }) => (control.disconnectSupplier(params[0] ?? ''), noContent()),
    ),
    route('POST', '/reset', () => (control.reset(), noContent())),
    route('GET', '/transactions/counts', () => json(200, control.transactionCountsByCustomId())),
    route('PUT', '/transactions/:id/status', ({ params, body }) =>
      json(200, control.setTransactionStatus(params[0] ?? '', str(obj(body), 'status'))),
    ),
    route('GET', '/webhooks', () => json(200, control.webhooks())),
    route('GET', '/webhooks/:id/attempts', ({ params }) => json(200, control.attempts(params[0] ?? ''))),
    route('POST', '/webhooks/:id/rotate-secret', ({ params }) =>
      json(200, control.rotateWebhookSecret(params[0] ?? '')),
    ),
    route(
      'PUT',
      '/survey-responses/:id/status',
      ({ params, body }) => (control.setSurveyResponseStatus(params[0] ?? '', str(obj(body), 'status')), noContent()),
    ),
    route('PUT', '/survey-responses/:id/pdf', ({ params, body }) => {
      const base64 = obj(body)['base64'];
      if (base64 !== null && typeof base64 !== 'string')
        throw badRequest(['base64 must be a string (the document, base64) or null (the rendered PDF)']);
      control.setSurveyResponsePdf(params[0] ?? '', base64 === null ? null : Buffer.from(base64, 'base64'));
      return noContent();
    }),
    route('POST', '/survey-responses/:id/pdf-failures', ({ params, body }) => {
      const b = obj(body);
      const times = b['times'];
      const status = b['status'] ?? 500;
      if (typeof times !== 'number' || !Number.isInteger(times) || times < 0)
        throw badRequest(['times must be a non-negative integer']);
      if (typeof status !== 'number' || !Number.isInteger(status) || status < 500 || status > 599)
        throw badRequest(['status must be an integer from 500 to 599']);
      control.failSurveyResponsePdf(params[0] ?? '', times, status);
      return noContent();
    }),
    route('PUT', '/entitlements', ({ body }) => json(200, control.setEntitlements(obj(body)))),
    route('PUT', '/invitations-enabled', ({ body }) => {
      const enabled = obj(body)['enabled'];
      if (typeof enabled !== 'boolean') throw badRequest(['enabled must be a boolean']);
      control.setInvitationsEnabled(enabled);
      return noContent();
    }),
    route('PUT', '/faults', ({ body }) => {
      try {
        return json(200, control.setFaults(typeof body === 'string' ? body : obj(body)));
      } catch (error) {
        throw badRequest([(error as Error).message]);
      }
    }),
    route('PUT', '/transaction-error-ratio', ({ body }) => {
      const ratio = obj(body)['ratio'];
      if (typeof ratio !== 'number' || ratio < 0 || ratio > 1)
        throw badRequest(['ratio must be a number between 0 and 1']);
      control.setTransactionErrorRatio(ratio);
      return noContent();
    }),
    route('POST', '/intercepts', ({ body }) => {
      try {
        return json(201, control.intercept(obj(body) as unknown as InterceptRule));
      } catch (error) {
        throw badRequest((error as Error).message.split('; '));
      }
    }),
    route('DELETE', '/intercepts', () => (control.clearIntercepts(), noContent())),
    route('GET', '/held', () => json(200, { held: control.heldRequests() })),
    route('POST', '/held/release', async () => json(200, { released: await control.releaseHeld() })),
    route('GET', '/requests/counts', () => json(200, control.requestCounts())),
    route('POST', '/token', async ({ body }) => {
      const lifetime = (body as { lifetimeSeconds?: unknown } | undefined)?.lifetimeSeconds ?? 86_400;
      if (typeof lifetime !== 'number' || !Number.isInteger(lifetime))
        throw badRequest(['lifetimeSeconds must be an integer']);
      return json(200, { access_token: await control.mintToken(lifetime), token_type: 'Bearer', expires_in: lifetime });
    }),
  ];
}
