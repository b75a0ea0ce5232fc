import { Readable, pipeline, type Duplex } from 'node:stream';
import { parser } from 'stream-json';
import { ignore } from 'stream-json/filters/ignore.js';
import { streamArray } from 'stream-json/streamers/stream-array.js';
import type { CallOptions, UpstreamHttp } from './client-core.ts';
import { NetworkError, UpstreamError } from './errors.ts';
import { streamBody } from './transport.ts';
import { utf8Guard } from './utf8.ts';
import type { HttpMethod } from './retry-policy.ts';

/**
 * A response that is one JSON array, parsed as a stream (stream-json's parser and streamArray) and
 * yielded element by element: the body is never whole in memory, as text or as objects. `leaveOut`
 * drops the members whose path (`0.business.plots`, elements by index) it matches before they are
 * assembled, so what ddsync does not keep costs no memory whatever it weighs. A body that ends early
 * or is not a JSON array raises a retryable NetworkError naming the endpoint; bytes that are not UTF-8
 * fail it too (utf8Guard: stream-json would decode them leniently).
 */
export async function* jsonArrayItems(
  http: UpstreamHttp,
  request: { method: HttpMethod; template: string; endpoint: string },
  opts: CallOptions & { leaveOut?: RegExp } = {},
): AsyncGenerator<{ key: number; value: unknown }> {
  const { body } = await http.request({ method: request.method, template: request.template }, streamBody, opts);
  const source = Readable.fromWeb(body as import('node:stream/web').ReadableStream<Uint8Array>);
  // pipeline: an error of any stage (a cut body, not JSON) destroys them all and reaches the loop
  // below through `items`; leaving the loop early destroys them all too (the body is cancelled).
  // Its callback has nothing left to do. Packed values only: streamArray assembles from packed
  // tokens, and skipping chunk tokens is much faster.
  const stages: Duplex[] = [utf8Guard(), parser.asStream({ streamValues: false })];
  if (opts.leaveOut) stages.push(ignore.asStream({ filter: opts.leaveOut }));
  stages.push(streamArray.asStream());
  const items = (pipeline as (...streams: unknown[]) => Duplex)(source, ...stages, () => undefined);
  try {
    yield* items as AsyncIterable<{ key: number; value: unknown }>;
  } catch (e) {
    if (e instanceof UpstreamError) throw e;
    if (opts.signal?.aborted) throw opts.signal.reason;
    throw new NetworkError(
      request.endpoint,
      `response body truncated or not a JSON array (${http.scrub(String((e as Error)?.message ?? e))})`,
      { cause: e, status: 200 },
    );
  }
}
