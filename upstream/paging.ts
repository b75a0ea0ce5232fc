import { decodeUtf8, NotUtf8Error } from './utf8.ts';
import type { Plot } from '../schema/upstream.ts';
import { type CallOptions, type UpstreamHttp, endpointName } from './client-core.ts';
import { NetworkError, ResponseValidationError } from './errors.ts';
import { hasMorePages, isRepeatedPage } from './page-rule.ts';
import { normalisePlots, normalisePlotsSkippingInvalid, type InvalidRecord } from './plot-validator.ts';
import { buildPlotQuery, effectiveLimit, type PlotQuery } from './plot-query.ts';
import { PATHS, PLOT_PAGE_DEFAULT_LIMIT } from '../schema/upstream/service-facts.ts';
import { pooledBody } from './transport.ts';
import { type PageBody, PageBufferPool } from './page-buffers.ts';

/**
 * GET /businesses/{businessId}/plots, one page at a time or as an async iterator. The client
 * owns `page` (a positive integer, never anything the service would serve as page 1) and stops
 * by the page-size rule (page-rule.ts) against the limit the service actually applies.
 */

export interface PlotPageOptions extends CallOptions, PlotQuery {
  /** Items per page; the service serves at most 500 (default 500 for ddsync). */
  limit?: number;
  /** Leave out plots that do not match (reported in `invalid`) instead of failing the page. */
  skipInvalid?: boolean;
}

export interface PlotPage {
  page: number;
  /** The limit the service applied: min(requested, 500). */
  limit: number;
  plots: Plot[];
  /** Plots left out because they did not match (only with `skipInvalid`). */
  invalid: InvalidRecord[];
  /** Whether a next page may hold more plots. */
  more: boolean;
}

const ENDPOINT = endpointName('GET', PATHS.supplierPlots);

function callOptions(o: PlotPageOptions): CallOptions {
  return {
    ...(o.signal ? { signal: o.signal } : {}),
    ...(o.stats ? { stats: o.stats } : {}),
    ...(o.repeatable !== undefined ? { repeatable: o.repeatable } : {}),
  };
}

/**
 * A page as the service sent it, before parsing: callers may compare it with a page read before. Its
 * bytes are in a buffer lent by the process's page pool (page-buffers.ts): `release` once the page
 * has been hashed and parsed, or found unchanged. A page never released is only garbage; after its
 * release its bytes cannot be read (its text still can, if it was decoded before).
 */
export interface RawPlotPage {
  page: number;
  /** The limit the service applied: min(requested, 500). */
  limit: number;
  /** The body as received: a page is compared by a hash of these bytes. */
  readonly bytes: Uint8Array;
  /** The body decoded as UTF-8, on first use (a page found unchanged is never decoded). */
  readonly text: string;
  release(): void;
}

/** The buffers every page body of this process is read into. */
const pagePool = new PageBufferPool();

function rawPage(page: number, limit: number, body: PageBody): RawPlotPage {
  let text: string | undefined;
  return {
    page,
    limit,
    get bytes() {
      return body.bytes();
    },
    get text() {
      // Bytes that are not UTF-8 are refused, never replaced (utf8.ts): parseSupplierPlotsPage says so.
      text ??= decodeUtf8(body.bytes());
      return text;
    },
    release: () => body.release(),
  };
}

export async function getSupplierPlotsPageText(
  http: UpstreamHttp,
  businessId: string,
  page: number,
  opts: PlotPageOptions = {},
): Promise<RawPlotPage> {
  const requested = opts.limit ?? PLOT_PAGE_DEFAULT_LIMIT;
  // Validates page, limit, filter, select and includes before anything is sent.
  const query = buildPlotQuery(opts, page, requested);
  const { body } = await http.request(
    { method: 'GET', template: PATHS.supplierPlots, params: { businessId }, query },
    pooledBody(pagePool),
    callOptions(opts),
  );
  return rawPage(page, effectiveLimit(requested), body);
}

/** Parses and validates a page read as text (see getSupplierPlotsPage for `skipInvalid`). */
export function parseSupplierPlotsPage(raw: RawPlotPage, opts: Pick<PlotPageOptions, 'skipInvalid'> = {}): PlotPage {
  let body: unknown;
  try {
    body = JSON.parse(raw.text) as unknown;
  } catch (e) {
    // A complete response that is not JSON (or not UTF-8): asking again is the only remedy.
    const what = e instanceof NotUtf8Error ? 'UTF-8' : 'JSON';
    throw new NetworkError(ENDPOINT, `page ${raw.page}: response body is not ${what} (${(e as Error).message})`, {
      cause: e,
      status: 200,
    });
  }
  if (opts.skipInvalid) {
    const { plots, invalid, received } = normalisePlotsSkippingInvalid(body, ENDPOINT, 200);
    // The stop rule counts what the service sent, valid or not.
    return { page: raw.page, limit: raw.limit, plots, invalid, more: hasMorePages(received, raw.limit) };
  }
  const plots = normalisePlots(body, ENDPOINT, 200);
  return { page: raw.page, limit: raw.limit, plots, invalid: [], more: hasMorePages(plots.length, raw.limit) };
}

export async function getSupplierPlotsPage(
  http: UpstreamHttp,
  businessId: string,
  page: number,
  opts: PlotPageOptions = {},
): Promise<PlotPage> {
  const raw = await getSupplierPlotsPageText(http, businessId, page, opts);
  try {
    return parseSupplierPlotsPage(raw, opts);
  } finally {
    raw.release();
  }
}

/** Every page from `startPage` on, until the stop rule says done. */
export async function* supplierPlotPages(
  http: UpstreamHttp,
  businessId: string,
  opts: PlotPageOptions & { startPage?: number } = {},
): AsyncGenerator<PlotPage> {
  let previous: Plot[] | undefined;
  for (let page = opts.startPage ?? 1; ; page++) {
    const result = await getSupplierPlotsPage(http, businessId, page, opts);
    if (isRepeatedPage(previous, result.plots)) {
      throw new ResponseValidationError(ENDPOINT, [
        { path: `page ${page}`, message: `repeats page ${page - 1}: the service ignored the page parameter` },
      ]);
    }
    yield result;
    if (!result.more) return;
    previous = result.plots;
  }
}

/** Every plot of a supplier and its upstream businesses, page by page. */
export async function* supplierPlots(
  http: UpstreamHttp,
  businessId: string,
  opts: PlotPageOptions = {},
): AsyncGenerator<Plot> {
  for await (const page of supplierPlotPages(http, businessId, opts)) yield* page.plots;
}
