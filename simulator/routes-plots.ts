// GET /businesses/{id}/plots (paged, filtered, projected) and GET /plots (own plots, streamed).
import { CALLER } from './connections.ts';
import { HttpError, badRequest, notFound } from './http-errors.ts';
import { matchesFilters, parsePlotQuery } from './plot-query.ts';
import type { PlotState } from './plot-factory.ts';
import { json, type Route } from './router.ts';
import { businessIndexOf, plotForCaller, type SimState } from './state.ts';

const OWN_PLOTS_CHUNK = 200;

export function plotRoutes(state: SimState): Route[] {
  return [
    {
      method: 'GET',
      path: '/businesses/:businessId/plots',
      handler: async ({ params, query }) => {
        const businessId = params[0] ?? '';
        const index = businessIndexOf(state, businessId);
        if (index === undefined) throw notFound(`Business ${businessId}`);
        const reach = state.layout.reach.get(index);
        if (!reach || !state.connections.supplierIndices().has(index)) {
          throw new HttpError(403, `Business ${businessId} is not a direct supplier of the calling business`);
        }
        const parsed = parsePlotQuery(query);
        if (!parsed.ok) throw badRequest(parsed.messages);
        const { page, limit, filters } = parsed.query;
        for (const hook of state.plotPageHooks) await hook({ supplierId: businessId, page, limit });
        const offset = (page - 1) * limit;
        let plots: PlotState[];
        if (filters.length === 0) plots = state.plots.page(reach, offset, limit);
        else {
          plots = [];
          let skipped = 0;
          for (const plot of state.plots.scan(reach)) {
            if (!matchesFilters(filters, plot)) continue;
            if (skipped < offset) skipped++;
            else if (plots.push(plot) >= limit) break;
          }
        }
        return json(
          200,
          plots.map((p) => plotForCaller(state, p, parsed.query)),
        );
      },
    },
    {
      method: 'GET',
      path: '/plots',
      // Own plots may be many: the body is streamed in chunks, never built as one string.
      handler: () => ({
        status: 200,
        *stream() {
          yield '[';
          let first = true;
          let batch: string[] = [];
          for (const plot of state.plots.ofBusiness(CALLER)) {
            batch.push(JSON.stringify(plotForCaller(state, plot)));
            if (batch.length < OWN_PLOTS_CHUNK) continue;
            yield (first ? '' : ',') + batch.join(',');
            first = false;
            batch = [];
          }
          if (batch.length > 0) yield (first ? '' : ',') + batch.join(',');
          yield ']';
        },
      }),
    },
  ];
}
