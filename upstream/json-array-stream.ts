import { Readable, Transform, pipeline, type Duplex } from 'node:stream';
import { parser } from 'stream-json';
import Assembler from 'stream-json/assembler.js';
import { ignore } from 'stream-json/filters/ignore.js';
import { streamArray } from 'stream-json/streamers/stream-array.js';
import type { CallOptions, UpstreamHttp } from './client-core.ts';
import { NetworkError, UpstreamError } from './errors.ts';
import { BodyTooLarge, streamBody, WHOLE_BODY_MAX_BYTES, type BodyReader } from './transport.ts';
import { utf8Guard } from './utf8.ts';
import { ArrayScanner } from './array-elements.ts';
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
  // pipeline: an error of any stage (a cut body, not JSON) destroys them all and reaches the loop
  // below through `items`; leaving the loop early destroys them all too (the body is cancelled).
  const items = tokensOf(body, opts.leaveOut, [streamArray.asStream()]);
  try {
    yield* items as AsyncIterable<{ key: number; value: unknown }>;
  } catch (e) {
    streamFailure(http, request.endpoint, opts.signal, e);
  }
}

/**
 * A reader of a response that is one JSON value, parsed as a stream without the members whose path
 * (`business.plots`) `leaveOut` matches: they are dropped unread, so an answer that embeds what
 * ddsync does not keep (an invitation's business with its plots, tens of megabytes when drawn in
 * detail) costs only what is kept, and is not refused for its length as a body read whole would be
 * (transport.ts, WHOLE_BODY_MAX_BYTES). An empty body reads as undefined; one cut short or not JSON
 * fails the read (a retryable NetworkError, from the transport).
 */
export function jsonValueLeavingOut(leaveOut: RegExp): BodyReader<unknown> {
  return {
    // Long answers are read at a token stream's pace (about 6 MB/s): bounded by an idle timeout, not an overall one.
    streaming: true,
    async read(res) {
      if (!res.body) return undefined;
      const tokens = tokensOf(res.body, leaveOut);
      const value = new Assembler();
      let any = false;
      for await (const token of tokens as AsyncIterable<Parameters<Assembler['consume']>[0]>) {
        value.consume(token);
        any = true;
      }
      if (!any) return undefined;
      if (!value.done) throw new Error('the JSON value ended early');
      return value.current;
    },
  };
}

/**
 * A body as stream-json's tokens, checked as UTF-8 (stream-json would decode leniently), without the
 * members `leaveOut` matches, then through `after`. What is kept is bounded as a body read whole is
 * (WHOLE_BODY_MAX_BYTES): the readers here keep what passes, so an endless answer fails instead of
 * filling the heap. Packed values only: the assemblers build from packed tokens, and skipping chunk
 * tokens is much faster. The pipeline's callback has nothing left to do: its error reaches the reader.
 */
function tokensOf(body: ReadableStream<Uint8Array>, leaveOut: RegExp | undefined, after: Duplex[] = []): Duplex {
  const source = Readable.fromWeb(body as import('node:stream/web').ReadableStream<Uint8Array>);
  const stages: Duplex[] = [utf8Guard(), parser.asStream({ streamValues: false })];
  if (leaveOut) stages.push(ignore.asStream({ filter: leaveOut }));
  stages.push(keptBytesBound(WHOLE_BODY_MAX_BYTES), ...after);
  return (pipeline as (...streams: unknown[]) => Duplex)(source, ...stages, () => undefined);
}

/** Counts what the tokens keep (their keys, strings and numbers, a byte for each token besides) and fails past `max`. */
function keptBytesBound(max: number): Transform {
  let kept = 0;
  return new Transform({
    objectMode: true,
    transform(token: { value?: unknown }, _encoding, done) {
      kept += 1 + (typeof token.value === 'string' ? token.value.length : 0);
      if (kept > max)
        done(
          new BodyTooLarge(
            `more than ${max / 1024 / 1024} MB of the answer kept (without what is left out), more than ddsync holds of one (WHOLE_BODY_MAX_BYTES)`,
          ),
        );
      else done(null, token);
    },
  });
}

/** A stream's failure as the caller sees it: the service's or the caller's own error, else a retryable NetworkError. */
function streamFailure(http: UpstreamHttp, endpoint: string, signal: AbortSignal | undefined, e: unknown): never {
  if (e instanceof UpstreamError) throw e;
  if (signal?.aborted) throw signal.reason;
  if (e instanceof BodyTooLarge) throw new NetworkError(endpoint, e.message, { cause: e, status: 200 });
  throw new NetworkError(
    endpoint,
    `response body truncated or not a JSON array (${http.scrub(String((e as Error)?.message ?? e))})`,
    { cause: e, status: 200 },
  );
}

/** One element of an array read by arrayElementsOf: its bytes, or only its size when it is too large. */
export type ArrayElement =
  | { index: number; bytes: Uint8Array; id: string | null }
  | { index: number; tooLarge: number; id: string | null };

/**
 * A response that is one JSON array, split into its elements by a scan of its bytes as they arrive
 * (array-elements.ts), each element's bytes yielded whole, to be parsed alone: the body is never whole
 * in memory, and no element larger than `maxElementBytes` is held either (its bytes are let go as they
 * come; it is yielded with its size and its scanned id only). Faster than a token stream (the element
 * is parsed by JSON.parse). A body that ends early or is not one array raises a retryable NetworkError
 * naming the endpoint, after the elements before the fault were yielded.
 */
export async function* arrayElementsOf(
  http: UpstreamHttp,
  request: { method: HttpMethod; template: string; endpoint: string },
  opts: CallOptions & { maxElementBytes: number },
): AsyncGenerator<ArrayElement> {
  const { body } = await http.request({ method: request.method, template: request.template }, streamBody, opts);
  const found: Array<{ start: number; end: number; id: string | null }> = [];
  const scanner = new ArrayScanner((start, end, id) => found.push({ start, end, id }));
  /** The bytes received from `heldFrom` on, in the chunks they came in. */
  let held: Uint8Array[] = [];
  let heldFrom = 0;
  let received = 0;
  /** Where the element too large to hold began: its bytes are not held. */
  let dropping: number | undefined;
  let index = 0;
  const fail = (e: unknown): never => streamFailure(http, request.endpoint, opts.signal, e);
  const reader = body.getReader();
  try {
    for (;;) {
      const next = await reader.read().catch(fail);
      if (next.done) break;
      const chunk = next.value;
      try {
        scanner.push(chunk);
      } catch (e) {
        return fail(e);
      }
      received += chunk.byteLength;
      held.push(chunk);
      for (const element of found.splice(0)) {
        if (element.start === dropping) {
          dropping = undefined;
          yield { index: index++, tooLarge: element.end - element.start, id: element.id };
        } else {
          yield { index: index++, bytes: bytesOf(held, heldFrom, element.start, element.end), id: element.id };
        }
        ({ held, heldFrom } = dropBefore(held, heldFrom, element.end));
      }
      const open = scanner.openElementStart;
      // Between elements, or inside one too large to hold: nothing of what came is kept.
      if (open !== undefined && dropping === undefined && received - open > opts.maxElementBytes) dropping = open;
      if (open === undefined || dropping !== undefined) ({ held, heldFrom } = dropBefore(held, heldFrom, received));
    }
    try {
      scanner.end();
    } catch (e) {
      return fail(e);
    }
  } finally {
    reader.releaseLock();
    await body.cancel().catch(() => undefined);
  }
}

/** Bytes [start, end) of the body, from the chunks held since `heldFrom` (a view when in one chunk). */
function bytesOf(held: readonly Uint8Array[], heldFrom: number, start: number, end: number): Uint8Array {
  let at = heldFrom;
  const parts: Uint8Array[] = [];
  for (const chunk of held) {
    const from = Math.max(start, at);
    const to = Math.min(end, at + chunk.byteLength);
    if (from < to) parts.push(chunk.subarray(from - at, to - at));
    at += chunk.byteLength;
    if (at >= end) break;
  }
  return parts.length === 1 ? parts[0]! : Buffer.concat(parts);
}

/** The chunks held without the bytes before `position`. */
function dropBefore(held: Uint8Array[], heldFrom: number, position: number): { held: Uint8Array[]; heldFrom: number } {
  let from = heldFrom;
  let i = 0;
  while (i < held.length && from + held[i]!.byteLength <= position) from += held[i++]!.byteLength;
  const rest = held.slice(i);
  if (rest.length > 0 && position > from) {
    rest[0] = rest[0]!.subarray(position - from);
    from = position;
  }
  return { held: rest, heldFrom: from };
}
