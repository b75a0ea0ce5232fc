import type { Plot } from '../schema/upstream.ts';
import { UpstreamHttp, type UpstreamClientOptions } from './client-core.ts';
import { networkEndpoints } from './endpoints/network.ts';
import { surveyResponseEndpoints } from './endpoints/survey-responses.ts';
import { transactionEndpoints } from './endpoints/transactions.ts';
import { webhookEndpoints } from './endpoints/webhooks.ts';
import {
  getSupplierPlotsPage,
  getSupplierPlotsPageText,
  supplierPlotPages,
  supplierPlots,
  type PlotPage,
  type PlotPageOptions,
  type RawPlotPage,
} from './paging.ts';
import { ownPlots, type OwnPlotsOptions } from './plot-stream.ts';
import { emptyStats, type ClientStats } from './stats.ts';

/**
 * The upstream client: one object with a typed function per endpoint, sharing one token, one
 * rate-control queue and one set of counters. Built once per worker process.
 */
export function createUpstreamClient(options: UpstreamClientOptions) {
  const http = new UpstreamHttp(options);
  return {
    /** Totals since creation (a snapshot). Pass `stats` per call to count one run's work. */
    get stats(): ClientStats {
      return { ...http.stats };
    },
    /** Obtains a token now (e.g. a health check); reuses a valid one. */
    authenticate: (): Promise<void> => http.auth.token().then(() => undefined),
    /** Drops the cached token (after a client secret rotation). */
    forgetToken: (): void => http.auth.invalidate(),

    /** One page of a direct supplier's plots (and its upstream's): `{plots, more}`. */
    getSupplierPlotsPage: (businessId: string, page: number, opts?: PlotPageOptions): Promise<PlotPage> =>
      getSupplierPlotsPage(http, businessId, page, opts),
    /** One page as text, unparsed (parseSupplierPlotsPage parses it): a page equal to one read before need not be parsed. */
    getSupplierPlotsPageText: (businessId: string, page: number, opts?: PlotPageOptions): Promise<RawPlotPage> =>
      getSupplierPlotsPageText(http, businessId, page, opts),
    /** Pages of a supplier's plots until the last one. */
    supplierPlotPages: (
      businessId: string,
      opts?: PlotPageOptions & { startPage?: number },
    ): AsyncGenerator<PlotPage> => supplierPlotPages(http, businessId, opts),
    /** A supplier's plots, one by one, across pages. */
    supplierPlots: (businessId: string, opts?: PlotPageOptions): AsyncGenerator<Plot> =>
      supplierPlots(http, businessId, opts),
    /** The business's own plots (GET /plots), streamed. */
    ownPlots: (opts?: OwnPlotsOptions): AsyncGenerator<Plot> => ownPlots(http, opts),

    ...networkEndpoints(http),
    ...transactionEndpoints(http),
    ...webhookEndpoints(http),
    ...surveyResponseEndpoints(http),
  };
}

export type UpstreamClient = ReturnType<typeof createUpstreamClient>;
export { emptyStats };
