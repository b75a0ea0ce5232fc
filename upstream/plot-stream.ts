import { Readable, pipeline } from 'node:stream';
import { parser } from 'stream-json';
import { streamArray } from 'stream-json/streamers/stream-array.js';
import type { Plot } from '../schema/upstream.ts';
import { type CallOptions, type UpstreamHttp, endpointName } from './client-core.ts';
import { NetworkError, UpstreamError } from './errors.ts';
import { checkPlotLeniently, normalisePlot, type InvalidRecord } from './plot-validator.ts';
import { PATHS } from '../schema/upstream/service-facts.ts';
import { streamBody } from './transport.ts';
import { utf8Guard } from './utf8.ts';

/**
 * GET /plots (the business's own plots) may be unbounded, so it is parsed as a stream
 * (stream-json parser + streamArray) and yielded plot by plot in bounded memory. A body that
 * ends early or is not a JSON array raises a retryable NetworkError naming the endpoint; a plot
 * that does not match raises ResponseValidationError with its index.
 */

const ENDPOINT = endpointName('GET', PATHS.ownPlots);

export interface OwnPlotsOptions extends CallOptions {
  /** Report and skip a plot that does not match, instead of failing the stream (the refresh). */
  onInvalid?: (record: InvalidRecord) => void;
}

export async function* ownPlots(http: UpstreamHttp, opts: OwnPlotsOptions = {}): AsyncGenerator<Plot> {
  const { body } = await http.request({ method: 'GET', template: PATHS.ownPlots }, streamBody, opts);
  const source = Readable.fromWeb(body as import('node:stream/web').ReadableStream<Uint8Array>);
  // pipeline: an error of any stage (a cut body, not JSON) destroys them all and reaches the loop
  // below through `items`; leaving the loop early destroys them all too (the body is cancelled).
  // Its callback has nothing left to do. Packed values only: streamArray assembles from packed
  // tokens, and skipping chunk tokens is much faster.
  // utf8Guard: bytes that are not UTF-8 fail the stream instead of becoming U+FFFD (docs/warehouse.md).
  const items = pipeline(
    source,
    utf8Guard(),
    parser.asStream({ streamValues: false }),
    streamArray.asStream(),
    () => undefined,
  );
  try {
    for await (const item of items as AsyncIterable<{ key: number; value: unknown }>) {
      if (!opts.onInvalid) {
        yield normalisePlot(item.value, ENDPOINT, item.key);
        continue;
      }
      const checked = checkPlotLeniently(item.value, item.key);
      if ('plot' in checked) yield checked.plot;
      else opts.onInvalid(checked.invalid);
    }
  } catch (e) {
    if (e instanceof UpstreamError) throw e;
    if (opts.signal?.aborted) throw opts.signal.reason;
    throw new NetworkError(
      ENDPOINT,
      `plot stream truncated or not a JSON array (${http.scrub(String((e as Error)?.message ?? e))})`,
      { cause: e, status: 200 },
    );
  }
}
