import { decodeUtf8, NotUtf8Error } from './utf8.ts';
import type { Plot } from '../schema/upstream.ts';
import { type CallOptions, type UpstreamHttp, endpointName } from './client-core.ts';
import { NetworkError, ResponseValidationError } from './errors.ts';
import { hasMorePages, isRepeatedPage } from './page-rule.ts';
import {
  checkPlotLeniently,
  normalisePlots,
  normalisePlotsSkippingInvalid,
  type InvalidRecord,
} from './plot-validator.ts';
import { buildPlotQuery, effectiveLimit, type PlotQuery } from './plot-query.ts';
import { PATHS, PLOT_PAGE_DEFAULT_LIMIT } from '../schema/upstream/service-facts.ts';
import { type BodyReader, decodedLength, pooledBody } from './transport.ts';
import { type PageBody, PageBufferPool } from './page-buffers.ts';
import { ArraySplitError, elementText, splitArrayElements } from './array-elements.ts';
import { ByteBudget } from '../platform/byte-budget.ts';

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

/**
 * The bytes of supplier page bodies this process holds at once, from before a page is asked for until
 * it is released: the read-ahead bounded by bytes as well as by pages. Ordinary pages (about 1.4 MB)
 * never wait: 32 MB holds more than the refresh reads at once (four suppliers, two pages each, and
 * their verification reads). Pages of 12 MB are held two at a time, and a page of more than 32 MB is
 * read alone, after every other page was released (a page of 5,000-vertex plots weighs 60 MB: four
 * suppliers' pages of it at once, each with a page read ahead, took the worker to 1,390 MB).
 */
export const PAGE_BODY_BYTES = 32 * 1024 * 1024;
const bodyBytes = new ByteBudget(PAGE_BODY_BYTES);

/**
 * What a page will weigh is not known before it is read (and waiting for room with its response
 * half read would run into the request's timeout), so room is asked for by an estimate: the size of
 * the same page when this process read it last (a refresh reads the pages a refresh before it read),
 * else of the supplier's page read last, else of any page read last, else the whole budget (the
 * process's first page is read alone). Once read, the page is counted at its real size: a page larger
 * than its estimate (one plot far larger than the others on a page not read before) is counted past
 * the budget, and no further page is asked for until enough were released.
 */
const lastPageBytes = new Map<string, number>();
let lastAnyPageBytes: number | undefined;
/** Pages and suppliers whose size is remembered: more are forgotten at once (only estimates are lost). */
const REMEMBERED_PAGES = 20_000;

function estimatedPageBytes(businessId: string, page: number): number {
  const known = lastPageBytes.get(`${businessId}#${page}`) ?? lastPageBytes.get(businessId) ?? lastAnyPageBytes;
  return Math.min(known ?? PAGE_BODY_BYTES, PAGE_BODY_BYTES);
}

function rememberPageBytes(businessId: string, page: number, bytes: number): void {
  if (lastPageBytes.size >= REMEMBERED_PAGES) lastPageBytes.clear();
  lastPageBytes.set(`${businessId}#${page}`, bytes);
  lastPageBytes.set(businessId, bytes);
  lastAnyPageBytes = bytes;
}

/** Bytes of page bodies held now and page reads waiting for room (for tests and figures). */
export function pageBodyBytes(): { inUse: number; queued: number } {
  return { inUse: bodyBytes.inUse, queued: bodyBytes.queued };
}

function rawPage(page: number, limit: number, body: PageBody, giveBack: () => void): RawPlotPage {
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
    release: () => {
      body.release();
      giveBack();
    },
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
  const room = { bytes: estimatedPageBytes(businessId, page), giveBack: () => {} };
  room.giveBack = await bodyBytes.acquire(room.bytes, opts.signal);
  let body: PageBody;
  try {
    ({ body } = await http.request(
      { method: 'GET', template: PATHS.supplierPlots, params: { businessId }, query },
      roomForBody(room, opts.signal),
      callOptions(opts),
    ));
  } catch (e) {
    room.giveBack();
    throw e;
  }
  const size = body.bytes().byteLength;
  rememberPageBytes(businessId, page, size);
  // Counted at its real size from now on, until released.
  const held = bodyBytes.take(size);
  room.giveBack();
  return rawPage(page, effectiveLimit(requested), body, held);
}

/**
 * The page's body read into the pool, once there is room for the length its headers announce: a page
 * announced larger than its estimate gives the estimate back and waits for room for all of it before
 * its body is read (the sender held back by TCP meanwhile). A waiting page holds no room, so pages
 * waiting for each other cannot block the budget. The wait counts against the request's timeout: a
 * page that waits longer is asked for again (a retry), by then with room.
 */
function roomForBody(
  room: { bytes: number; giveBack: () => void },
  signal: AbortSignal | undefined,
): BodyReader<{ body: PageBody; contentType: string | null }> {
  const read = pooledBody(pagePool);
  return {
    async read(res) {
      const announced = decodedLength(res.headers);
      if (announced !== undefined && announced > room.bytes) {
        room.giveBack();
        room.bytes = 0;
        room.giveBack = () => {};
        room.giveBack = await bodyBytes.acquire(announced, signal);
        room.bytes = announced;
      }
      return read.read(res);
    },
  };
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

/**
 * Pages of more bytes than this are not parsed whole but plot by plot (splitSupplierPlotsPage). An
 * ordinary page of 500 plots weighs about 1.4 MB and keeps the whole-page JSON.parse (the fastest
 * way to read it); a page of plots drawn with a thousand vertices weighs about 12 MB, and about 2.6
 * times that as objects, at 5,000 vertices 60 MB (docs/benchmarks.md, "A page of any size").
 */
export const WHOLE_PAGE_MAX_BYTES = 4 * 1024 * 1024;
/**
 * One plot of more bytes of JSON than this is not parsed at all: it is refused, reported with its id
 * and this rule, and the rest of its page is stored (docs/refresh.md, "A page of any size"). Parsed,
 * mapped and written, a plot takes about six times its JSON in the worker's memory (its coordinates
 * as arrays, its geometry's text again in its row and in the COPY): 16 MB of JSON is the most that
 * fits beside a page's bytes within the worker's 300 MB. A boundary of 16 MB has about 600,000
 * vertices, finer than any survey of a farm or a concession needs.
 */
export const PLOT_MAX_BYTES = 16 * 1024 * 1024;

/** A page split into its plots, each parsed and checked only when asked for. */
export interface SplitPlotPage {
  page: number;
  /** The limit the service applied: min(requested, 500). */
  limit: number;
  /** Plots the service sent, valid or not. */
  received: number;
  /** Whether a next page may hold more plots. */
  more: boolean;
  /** Per plot on the page, the id its JSON carries at its top level (as scanned, before any check). */
  ids: readonly (string | null)[];
  /** Bytes of JSON of plot `index`. */
  sizeOf(index: number): number;
  /**
   * Plot `index` parsed and checked alone, with the same rules as a whole page's plots; a plot of more
   * than the plot limit (PLOT_MAX_BYTES unless told) is refused unparsed. A plot that is not JSON raises a retryable NetworkError
   * naming the page and the plot (asking again is the only remedy, as for a page that is not JSON).
   */
  plotAt(index: number): { plot: Plot } | { invalid: InvalidRecord };
}

/**
 * A page split into its plots by a scan of its bytes (array-elements.ts), for pages too large to
 * parse whole: the bytes must stay lent (not released) while plots are read. A body that is not one
 * JSON array raises a retryable NetworkError naming the page and where the scan stopped.
 */
export function splitSupplierPlotsPage(raw: RawPlotPage, plotMaxBytes = PLOT_MAX_BYTES): SplitPlotPage {
  const bytes = raw.bytes;
  let elements: ReturnType<typeof splitArrayElements>;
  try {
    elements = splitArrayElements(bytes);
  } catch (e) {
    if (e instanceof NotUtf8Error)
      throw new NetworkError(ENDPOINT, `page ${raw.page}: response body is not UTF-8 (${e.message})`, {
        cause: e,
        status: 200,
      });
    if (!(e instanceof ArraySplitError)) throw e;
    throw new NetworkError(ENDPOINT, `page ${raw.page}: response body is not a JSON array (${e.message})`, {
      cause: e,
      status: 200,
    });
  }
  const { starts, ends, ids } = elements;
  const sizeOf = (index: number) => ends[index]! - starts[index]!;
  return {
    page: raw.page,
    limit: raw.limit,
    received: starts.length,
    more: hasMorePages(starts.length, raw.limit),
    ids,
    sizeOf,
    plotAt(index) {
      const size = sizeOf(index);
      if (size > plotMaxBytes) {
        const mb = (n: number) => `${Math.round((n / 1024 / 1024) * 10) / 10} MB`;
        return {
          invalid: {
            index,
            id: ids[index] ?? null,
            path: `[${index}]`,
            message: `a plot of ${mb(size)} of JSON is larger than the ${mb(plotMaxBytes)} one plot may have`,
          },
        };
      }
      let value: unknown;
      try {
        value = JSON.parse(elementText(raw.bytes, elements, index)) as unknown;
      } catch (e) {
        const what = e instanceof NotUtf8Error ? 'UTF-8' : 'JSON';
        throw new NetworkError(ENDPOINT, `page ${raw.page}: plot #${index} is not ${what} (${(e as Error).message})`, {
          cause: e,
          status: 200,
        });
      }
      return checkPlotLeniently(value, index);
    },
  };
}

/**
 * The plots of a page as a reader of ids needs them (the scan's verification): the valid plots' ids
 * and the invalid plots, in page order, and whether a next page may hold more. A page above
 * `wholePageMaxBytes` is read plot by plot, so it never has to be whole in memory as objects.
 */
export function supplierPlotsPageIds(
  raw: RawPlotPage,
  wholePageMaxBytes = WHOLE_PAGE_MAX_BYTES,
): { ids: string[]; invalid: InvalidRecord[]; more: boolean } {
  if (raw.bytes.byteLength <= wholePageMaxBytes) {
    const parsed = parseSupplierPlotsPage(raw, { skipInvalid: true });
    return { ids: parsed.plots.map((p) => p.id), invalid: parsed.invalid, more: parsed.more };
  }
  const split = splitSupplierPlotsPage(raw);
  const ids: string[] = [];
  const invalid: InvalidRecord[] = [];
  for (let i = 0; i < split.received; i++) {
    const checked = split.plotAt(i);
    if ('plot' in checked) ids.push(checked.plot.id);
    else invalid.push(checked.invalid);
  }
  return { ids, invalid, more: split.more };
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
