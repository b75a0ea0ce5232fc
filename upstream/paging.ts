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
import { createHash } from 'node:crypto';
import { type BodyReader, decodedLength } from './transport.ts';
import { type PageBody, PageBufferPool } from './page-buffers.ts';
import { ArraySplitError, type ArrayElements, splitArrayElements } from './array-elements.ts';
import { SpilledPage } from './spilled-page.ts';
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
  /**
   * Hash the body as it arrives (RawPlotPage.hash): SHA-1 of this text and then the body's bytes.
   * Without it, no hash is taken.
   */
  hashPrefix?: string;
  /**
   * A body of more bytes than this is kept on disk as it arrives, not in memory (spilled-page.ts), and
   * can only be split (splitSupplierPlotsPage). Default WHOLE_PAGE_MAX_BYTES.
   */
  spillAboveBytes?: number;
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
 * A page as the service sent it, before parsing: callers may compare it with a page read before. A
 * page up to the spill bound is in a buffer lent by the process's page pool (page-buffers.ts); a
 * larger one is in a temporary file (spilled-page.ts), scanned into its plots on the way in. Either
 * way, `release` once the page has been hashed and parsed, or found unchanged. A page never released
 * is only garbage (its file's descriptor is not: release it); after its release its bytes cannot be
 * read (its text still can, if it was decoded before).
 */
export interface RawPlotPage {
  page: number;
  /** The limit the service applied: min(requested, 500). */
  limit: number;
  /** Bytes of the body. */
  readonly byteLength: number;
  /** With `hashPrefix`: SHA-1 (base64url) of it and the body's bytes, taken as they arrived. */
  readonly hash: string | undefined;
  /** The body as received (a page kept on disk has none in memory: this throws; split it). */
  readonly bytes: Uint8Array;
  /** The body decoded as UTF-8, on first use (a page found unchanged is never decoded). */
  readonly text: string;
  /** A page kept on disk: its plots are read from there, one by one (splitSupplierPlotsPage). */
  readonly spilled: SpilledPage | undefined;
  release(): void;
}

/** The buffers every page body of this process is read into. */
const pagePool = new PageBufferPool();

/**
 * The bytes of supplier page bodies this process holds in memory at once, from before a page is asked
 * for until it is released: the read-ahead bounded by bytes as well as by pages. A page above the
 * spill bound (4 MB) is kept on disk as it arrives and holds at most that bound in memory while it is
 * read, nothing after: 32 MB holds eight pages being read at once, and ordinary pages (about 1.4 MB)
 * never wait. (Held whole, four suppliers' pages of 5,000-vertex plots, 60 MB each, with a page read
 * ahead, took the worker to 1,390 MB.)
 */
export const PAGE_BODY_BYTES = 32 * 1024 * 1024;
const bodyBytes = new ByteBudget(PAGE_BODY_BYTES);

/**
 * What a page will hold in memory is not known before it is read (and waiting for room with its
 * response half read would run into the request's timeout), so room is asked for by an estimate: the
 * size of the same page when this process read it last (a refresh reads the pages a refresh before it
 * read), else of the supplier's page read last, else of any page read last, else the spill bound: no
 * page holds more than that in memory, whatever it weighs. Once read, the page is counted at what it
 * really holds (nothing when it was kept on disk).
 */
const lastPageBytes = new Map<string, number>();
let lastAnyPageBytes: number | undefined;
/** Pages and suppliers whose size is remembered: more are forgotten at once (only estimates are lost). */
const REMEMBERED_PAGES = 20_000;

function estimatedPageBytes(businessId: string, page: number, spillAbove: number): number {
  const known = lastPageBytes.get(`${businessId}#${page}`) ?? lastPageBytes.get(businessId) ?? lastAnyPageBytes;
  return Math.min(known ?? spillAbove, spillAbove, PAGE_BODY_BYTES);
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

/** A page body as read: in a lent buffer, or kept on disk; hashed on the way when asked. */
interface ReadBody {
  body: PageBody | undefined;
  spilled: SpilledPage | undefined;
  byteLength: number;
  hash: string | undefined;
}

function rawPage(page: number, limit: number, read: ReadBody, giveBack: () => void): RawPlotPage {
  const { body, spilled, byteLength, hash } = read;
  let text: string | undefined;
  const inMemory = (): PageBody => {
    if (!body)
      throw new Error(
        `page ${page} (${byteLength} bytes) is kept on disk, not in memory: read it plot by plot (splitSupplierPlotsPage)`,
      );
    return body;
  };
  return {
    page,
    limit,
    byteLength,
    hash,
    spilled,
    get bytes() {
      return inMemory().bytes();
    },
    get text() {
      // Bytes that are not UTF-8 are refused, never replaced (utf8.ts): parseSupplierPlotsPage says so.
      text ??= decodeUtf8(inMemory().bytes());
      return text;
    },
    release: () => {
      body?.release();
      spilled?.close();
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
  const spillAbove = opts.spillAboveBytes ?? WHOLE_PAGE_MAX_BYTES;
  const room = { bytes: estimatedPageBytes(businessId, page, spillAbove), giveBack: () => {} };
  room.giveBack = await bodyBytes.acquire(room.bytes, opts.signal);
  let read: ReadBody;
  try {
    read = await http.request(
      { method: 'GET', template: PATHS.supplierPlots, params: { businessId }, query },
      pageBody(room, spillAbove, opts),
      callOptions(opts),
    );
  } catch (e) {
    room.giveBack();
    throw e;
  }
  const held = read.spilled ? 0 : read.byteLength;
  rememberPageBytes(businessId, page, Math.min(read.byteLength, spillAbove));
  // Counted at what it holds in memory from now on, until released.
  const giveBack = bodyBytes.take(held);
  room.giveBack();
  return rawPage(page, effectiveLimit(requested), read, giveBack);
}

/**
 * The page's body read into the pool, once there is room for what its headers announce (at most the
 * spill bound): a page announced larger than its estimate gives the estimate back and waits for room
 * before its body is read (the sender held back by TCP meanwhile). A waiting page holds no room, so
 * pages waiting for each other cannot block the budget. The wait counts against the request's timeout:
 * a page that waits longer is asked for again (a retry), by then with room.
 *
 * A body announced above the spill bound goes to a temporary file from its first byte; one of unknown
 * length, once it passes the bound (its bytes so far moved there). Each chunk is copied on and let go.
 */
function pageBody(
  room: { bytes: number; giveBack: () => void },
  spillAbove: number,
  opts: Pick<PlotPageOptions, 'signal' | 'hashPrefix'>,
): BodyReader<ReadBody> {
  return {
    async read(res) {
      const announced = decodedLength(res.headers);
      const needed = announced === undefined ? undefined : Math.min(announced, spillAbove);
      if (needed !== undefined && needed > room.bytes) {
        room.giveBack();
        room.bytes = 0;
        room.giveBack = () => {};
        room.giveBack = await bodyBytes.acquire(needed, opts.signal);
        room.bytes = needed;
      }
      const hash = opts.hashPrefix === undefined ? undefined : createHash('sha1').update(opts.hashPrefix);
      let spilled = announced !== undefined && announced > spillAbove ? SpilledPage.open() : undefined;
      let body = spilled ? undefined : pagePool.body(announced);
      let length = 0;
      try {
        if (res.body)
          for await (const chunk of res.body) {
            hash?.update(chunk);
            length += chunk.byteLength;
            if (body && length > spillAbove) {
              spilled = SpilledPage.open();
              spilled.append(body.bytes());
              body.release();
              body = undefined;
            }
            if (spilled) spilled.append(chunk);
            else body!.append(chunk);
          }
      } catch (e) {
        body?.release();
        spilled?.close();
        throw e;
      }
      return { body, spilled, byteLength: length, hash: hash?.digest('base64url') };
    },
  };
}

/** Parses and validates a page read as text (see getSupplierPlotsPage for `skipInvalid`). */
export function parseSupplierPlotsPage(raw: RawPlotPage, opts: Pick<PlotPageOptions, 'skipInvalid'> = {}): PlotPage {
  // A page kept on disk is too large to parse whole: a caller's mistake, not the service's.
  if (raw.spilled)
    throw new Error(`page ${raw.page} (${raw.byteLength} bytes) was kept on disk: split it (splitSupplierPlotsPage)`);
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

/**
 * One plot of more `[` than this is not parsed either: a plot's JSON costs the worker's heap by its
 * arrays (a position parsed is an array of two numbers, about 64 bytes), not its bytes, and a plot of
 * 16 MB written as short positions (`[0,0],`) holds 2.8 million of them, about 180 MB parsed: more
 * than the worker's heap (infra/production.ts), which would end the process on every retry of the
 * page. A million arrays is about 64 MB parsed; an ordinary 16 MB boundary has about 600,000. A `[`
 * inside a string counts too (an upper bound, counted in one pass over the bytes).
 */
export const PLOT_MAX_ARRAYS = 1_000_000;

const OPEN_BRACKET = 0x5b;

/**
 * The `[` in `bytes`, counted in one pass and no further than `stopAfter` + 1: the arrays its JSON
 * parses to, or more (a `[` inside a string counts too).
 */
export function arraysIn(bytes: Uint8Array, stopAfter = Number.POSITIVE_INFINITY): number {
  let arrays = 0;
  for (let at = bytes.indexOf(OPEN_BRACKET); at !== -1 && arrays <= stopAfter; at = bytes.indexOf(OPEN_BRACKET, at + 1))
    arrays++;
  return arrays;
}

/** The plot refused for its arrays, or null: counts `[` in its bytes, stopping past the limit. */
export function plotTooDense(index: number, id: string | null, bytes: Uint8Array): InvalidRecord | null {
  if (arraysIn(bytes, PLOT_MAX_ARRAYS) <= PLOT_MAX_ARRAYS) return null;
  return {
    index,
    id,
    path: `[${index}]`,
    message: `a plot of more than ${PLOT_MAX_ARRAYS} arrays (positions) is more than one plot may have`,
  };
}

/** Bytes of heap an array takes parsed (an array of two numbers; an empty one takes about half). */
export const PARSED_ARRAY_HEAP_BYTES = 64;

/**
 * The heap a page's JSON is expected to take parsed: a byte for each byte (strings and numbers), and
 * an array's worth for each `[`. Measured on this machine: an ordinary page of 500 plots (1.2 MB, its
 * positions written with seven decimals, about 9,000 arrays) parses to 1.6 MB, estimated 1.7; a page of
 * 4 MB of short positions (`[0,0],`, 660,000 arrays) to 48 MB, estimated 46. Its bytes alone would
 * let several such pages be parsed at once, past the worker's heap (infra/production.ts).
 */
export function parsedHeapEstimate(bytes: Uint8Array): number {
  return bytes.byteLength + arraysIn(bytes) * PARSED_ARRAY_HEAP_BYTES;
}

/** A plot refused unparsed for its size: its place, its id as scanned, and the rule. */
export function plotTooLarge(index: number, id: string | null, size: number, plotMaxBytes: number): InvalidRecord {
  const mb = (n: number) => `${Math.round((n / 1024 / 1024) * 10) / 10} MB`;
  return {
    index,
    id,
    path: `[${index}]`,
    message: `a plot of ${mb(size)} of JSON is larger than the ${mb(plotMaxBytes)} one plot may have`,
  };
}

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
  const spilled = raw.spilled;
  const bytes = spilled ? undefined : raw.bytes;
  let elements: ArrayElements;
  try {
    elements = spilled ? spilled.scanned() : splitArrayElements(bytes!);
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
  /** The bytes of plot `index`: a view of the page in memory, or read from its file. */
  const plotBytes = (index: number): Uint8Array =>
    spilled ? spilled.read(starts[index]!, ends[index]!) : bytes!.subarray(starts[index]!, ends[index]!);
  return {
    page: raw.page,
    limit: raw.limit,
    received: starts.length,
    more: hasMorePages(starts.length, raw.limit),
    ids,
    sizeOf,
    plotAt(index) {
      const size = sizeOf(index);
      if (size > plotMaxBytes) return { invalid: plotTooLarge(index, ids[index] ?? null, size, plotMaxBytes) };
      const json = plotBytes(index);
      const dense = plotTooDense(index, ids[index] ?? null, json);
      if (dense) return { invalid: dense };
      let value: unknown;
      try {
        value = JSON.parse(decodeUtf8(json)) as unknown;
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
  if (!raw.spilled && raw.byteLength <= wholePageMaxBytes) {
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
  // Parsed whole, as asked: held in memory whatever it weighs (the refresh reads large pages plot by plot).
  const raw = await getSupplierPlotsPageText(http, businessId, page, {
    ...opts,
    spillAboveBytes: opts.spillAboveBytes ?? Number.POSITIVE_INFINITY,
  });
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
