import type { Plot } from '../schema/upstream.ts';
import { type CallOptions, type UpstreamHttp, endpointName } from './client-core.ts';
import { checkPlotLeniently, normalisePlot, type InvalidRecord } from './plot-validator.ts';
import { PATHS } from '../schema/upstream/service-facts.ts';
import { arrayElementsOf } from './json-array-stream.ts';
import { NetworkError, ResponseValidationError } from './errors.ts';
import { decodeUtf8, NotUtf8Error } from './utf8.ts';
import { PLOT_MAX_BYTES, plotTooDense, plotTooLarge } from './paging.ts';

/**
 * GET /plots (the business's own plots) may be unbounded, so it is split into its plots by a scan of
 * its bytes as they arrive (json-array-stream.ts arrayElementsOf) and each plot is parsed alone:
 * bounded memory whatever the list's length, and a plot above PLOT_MAX_BYTES is refused unread, with
 * its id and the rule, as on a supplier's page. A body that ends early or is not a JSON array raises a
 * retryable NetworkError naming the endpoint; a plot that does not match raises
 * ResponseValidationError with its index (or is reported through `onInvalid`).
 */

const ENDPOINT = endpointName('GET', PATHS.ownPlots);

export interface OwnPlotsOptions extends CallOptions {
  /** Report and skip a plot that does not match, instead of failing the stream (the refresh). */
  onInvalid?: (record: InvalidRecord) => void;
  /** A plot of more bytes of JSON is refused unread (default PLOT_MAX_BYTES, as on a supplier's page). */
  plotMaxBytes?: number;
}

export async function* ownPlots(http: UpstreamHttp, opts: OwnPlotsOptions = {}): AsyncGenerator<Plot> {
  const plotMaxBytes = opts.plotMaxBytes ?? PLOT_MAX_BYTES;
  const request = { method: 'GET' as const, template: PATHS.ownPlots, endpoint: ENDPOINT };
  for await (const element of arrayElementsOf(http, request, { ...opts, maxElementBytes: plotMaxBytes })) {
    const { index, id } = element;
    const size = 'tooLarge' in element ? element.tooLarge : element.bytes.byteLength;
    const bytes = 'bytes' in element && size <= plotMaxBytes ? element.bytes : undefined;
    const invalid = bytes ? plotTooDense(index, id, bytes) : plotTooLarge(index, id, size, plotMaxBytes);
    // Refused unread: too many bytes, or too many arrays to parse within the heap (paging.ts).
    if (invalid) {
      if (!opts.onInvalid)
        throw new ResponseValidationError(ENDPOINT, [{ path: invalid.path, message: invalid.message }], 200);
      opts.onInvalid(invalid);
      continue;
    }
    let value: unknown;
    try {
      value = JSON.parse(decodeUtf8(bytes!)) as unknown; // bytes: not refused, so not too large
    } catch (e) {
      const what = e instanceof NotUtf8Error ? 'UTF-8' : 'JSON';
      throw new NetworkError(ENDPOINT, `plot #${index} is not ${what} (${(e as Error).message})`, {
        cause: e,
        status: 200,
      });
    }
    if (!opts.onInvalid) {
      yield normalisePlot(value, ENDPOINT, index);
      continue;
    }
    const checked = checkPlotLeniently(value, index);
    if ('plot' in checked) yield checked.plot;
    else opts.onInvalid(checked.invalid);
  }
}
