import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { type CallOptions, type UpstreamHttp, endpointName } from '../client-core.ts';
import { NetworkError } from '../errors.ts';
import { PATHS } from '../../schema/upstream/service-facts.ts';
import { streamBody } from '../transport.ts';

/** Survey-response PDFs. 422: not COMPLETED yet (retry later); 404: the response is gone. */

export interface PdfDownload {
  /** The PDF bytes; a body cut short fails the stream with a retryable NetworkError. */
  body: Readable;
  contentType: string | null;
  contentLength: number | undefined;
}

export function surveyResponseEndpoints(http: UpstreamHttp) {
  const endpoint = endpointName('GET', PATHS.surveyResponsePdf);
  return {
    async getSurveyResponsePdf(id: string, opts: CallOptions = {}): Promise<PdfDownload> {
      const res = await http.request(
        { method: 'GET', template: PATHS.surveyResponsePdf, params: { id }, accept: 'application/pdf' },
        streamBody,
        opts,
      );
      const source = res.body as WebReadableStream<Uint8Array>;
      async function* bytes() {
        try {
          for await (const chunk of source) yield chunk;
        } catch (e) {
          if (opts.signal?.aborted) throw opts.signal.reason;
          throw new NetworkError(endpoint, `PDF body truncated (${http.scrub(String((e as Error)?.message ?? e))})`, {
            cause: e,
            status: 200,
          });
        }
      }
      return {
        body: Readable.from(bytes(), { objectMode: false }),
        contentType: res.contentType,
        contentLength: res.contentLength,
      };
    },
  };
}
