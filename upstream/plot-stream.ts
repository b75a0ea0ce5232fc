import type { Plot } from '../schema/upstream.ts';
import { type CallOptions, type UpstreamHttp, endpointName } from './client-core.ts';
import { checkPlotLeniently, normalisePlot, type InvalidRecord } from './plot-validator.ts';
import { PATHS } from '../schema/upstream/service-facts.ts';
import { jsonArrayItems } from './json-array-stream.ts';

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
  const items = jsonArrayItems(http, { method: 'GET', template: PATHS.ownPlots, endpoint: ENDPOINT }, opts);
  for await (const item of items) {
    if (!opts.onInvalid) {
      yield normalisePlot(item.value, ENDPOINT, item.key);
      continue;
    }
    const checked = checkPlotLeniently(item.value, item.key);
    if ('plot' in checked) yield checked.plot;
    else opts.onInvalid(checked.invalid);
  }
}
