/** The upstream API client: what activities, the CLI and the contract tests import. */
export { createUpstreamClient, type UpstreamClient } from './client.ts';
export type { UpstreamClientOptions, CallOptions } from './client-core.ts';
export type { PlotPage, PlotPageOptions, RawPlotPage, SplitPlotPage } from './paging.ts';
export {
  parsedHeapEstimate,
  parseSupplierPlotsPage,
  PLOT_MAX_BYTES,
  splitSupplierPlotsPage,
  supplierPlotsPageIds,
  WHOLE_PAGE_MAX_BYTES,
} from './paging.ts';
export type { PdfDownload } from './endpoints/survey-responses.ts';
export type { TransactionInclude } from './endpoints/transactions.ts';
export type { UpdateInvitationInput } from './endpoints/network.ts';
export { emptyStats, type ClientStats } from './stats.ts';
export type { UpstreamObserver } from './observer.ts';
export * from './errors.ts';
export {
  buildPlotQuery,
  effectiveLimit,
  type PlotQuery,
  type PlotFilter,
  type FilterCondition,
  type PlotRelation,
  type PlotFilterField,
} from './plot-query.ts';
export { hasMorePages } from './page-rule.ts';
export { checkCustomData, prepareCustomData, parseCustomDataJson, type CustomDataInput } from './custom-data.ts';
export { normalisePlots, normalisePlot, normalisePlotsSkippingInvalid, type InvalidRecord } from './plot-validator.ts';
export { parseRetryAfter } from './retry-after.ts';
export { backoffDelay, backoffCeiling } from '../platform/backoff.ts';
export { provesNotApplied, shouldRetry } from './retry-policy.ts';
export * as serviceFacts from '../schema/upstream/service-facts.ts';
