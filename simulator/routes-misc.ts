// The token endpoint and survey response PDFs.
import { HttpError } from './http-errors.ts';
import { json, type Route } from './router.ts';
import type { SimState } from './state.ts';

export function miscRoutes(state: SimState): Route[] {
  return [
    {
      method: 'POST',
      path: '/auth/machine-to-machine-clients/token',
      public: true,
      handler: async ({ body }) => json(200, await state.auth.exchange(body)),
    },
    {
      method: 'GET',
      path: '/survey-responses/:id/pdf',
      handler: ({ params }) => {
        if (!state.settings.entitlements.canDownloadSurveyResponses)
          throw new HttpError(403, 'The business is not entitled to download survey responses');
        return {
          status: 200,
          bytes: state.surveys.pdf(params[0] ?? ''),
          contentType: 'application/pdf',
          headers: { 'content-disposition': `attachment; filename="survey-response-${params[0] ?? ''}.pdf"` },
        };
      },
    },
  ];
}
