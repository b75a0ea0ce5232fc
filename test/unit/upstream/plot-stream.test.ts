import { afterEach, describe, expect, it } from 'vitest';
import { createUpstreamClient } from '../../../upstream/client.ts';
import { NetworkError, ResponseValidationError } from '../../../upstream/errors.ts';
import { PLOT_MAX_ARRAYS } from '../../../upstream/paging.ts';
import { fakeJwt, startServer, tokenRoute, type Handler, type LocalServer } from './local-server.ts';
import { samplePlot } from './samples.ts';

let server: LocalServer | undefined;
afterEach(async () => server?.close());

async function collect(answer: Handler) {
  server = await startServer((req, res) => {
    if (tokenRoute(req, res, () => fakeJwt(1))) return;
    return answer(req, res);
  });
  const client = createUpstreamClient({
    baseUrl: server.url,
    clientId: 'c',
    clientSecret: 'secret-xyz',
    maxAttempts: 1,
  });
  const ids: string[] = [];
  try {
    for await (const plot of client.ownPlots()) ids.push(plot.id);
    return { ids, error: undefined };
  } catch (e) {
    return { ids, error: e as Error };
  }
}

/** Writes the array in many small chunks, as a slow network would. */
function chunked(text: string, opts: { cutAt?: number; size?: number } = {}): Handler {
  const size = opts.size ?? 4096;
  return async (_q, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    const end = opts.cutAt ?? text.length;
    for (let i = 0; i < end; i += size) {
      res.write(text.slice(i, Math.min(i + size, end)));
      await new Promise((r) => setImmediate(r));
    }
    if (opts.cutAt === undefined) res.end();
    else res.socket?.destroy();
  };
}

describe('GET /plots streamed', () => {
  it('yields normalised plots one by one from a chunked array', async () => {
    const plots = Array.from({ length: 60 }, (_, i) => samplePlot(i));
    const { ids, error } = await collect(chunked(JSON.stringify(plots)));
    expect(error).toBeUndefined();
    expect(ids).toHaveLength(60);
    expect(ids[59]).toBe(plots[59]!['id']);
  });

  it('an empty array yields nothing', async () => {
    const { ids, error } = await collect(chunked('[]'));
    expect(error).toBeUndefined();
    expect(ids).toEqual([]);
  });

  it('a body cut short raises a retryable NetworkError naming the endpoint', async () => {
    const text = JSON.stringify(Array.from({ length: 30 }, (_, i) => samplePlot(i)));
    const { ids, error } = await collect(chunked(text, { cutAt: Math.floor(text.length / 2) }));
    expect(error).toBeInstanceOf(NetworkError);
    expect(error!.message).toMatch(/^GET \/plots: network error/);
    expect((error as NetworkError).retryable).toBe(true);
    expect(ids.length).toBeGreaterThan(0);
    expect(ids.length).toBeLessThan(30);
  });

  it('a complete body that is not valid JSON, or not an array, raises NetworkError', async () => {
    const a = await collect(chunked(`[${JSON.stringify(samplePlot(0))},`));
    expect(a.error).toBeInstanceOf(NetworkError);
    expect(a.error!.message).toMatch(/^GET \/plots: network error: response body truncated or not a JSON array/);
    const b = await collect(chunked('{"data": []}'));
    expect(b.error).toBeInstanceOf(NetworkError);
  });

  it('a plot that does not match names its index', async () => {
    const { error } = await collect(
      chunked(JSON.stringify([samplePlot(0), samplePlot(1, { geometry: { type: 'Polygon', coordinates: 'x' } })])),
    );
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect(error!.message).toBe('GET /plots: [1].geometry.coordinates: expected array');
  });

  it('refuses a plot above the limit unread, with its id and the rule, and yields the others in order, however the body is cut', async () => {
    const plots = Array.from({ length: 12 }, (_, i) => samplePlot(i));
    plots[4]!['description'] = 'x'.repeat(20_000);
    plots[9]!['description'] = 'y'.repeat(5_000);
    const text = JSON.stringify(plots);
    for (const size of [7, 1000, 4096, text.length]) {
      server = await startServer((req, res) => {
        if (tokenRoute(req, res, () => fakeJwt(1))) return;
        return chunked(text, { size })(req, res);
      });
      const client = createUpstreamClient({ baseUrl: server.url, clientId: 'c', clientSecret: 'secret-xyz' });
      const invalid: unknown[] = [];
      const ids: string[] = [];
      for await (const plot of client.ownPlots({ plotMaxBytes: 8_000, onInvalid: (r) => invalid.push(r) }))
        ids.push(plot.id);
      expect(ids, `chunks of ${size}`).toEqual(plots.filter((_, i) => i !== 4).map((p) => p['id']));
      const bytes = Buffer.byteLength(JSON.stringify(plots[4]));
      expect(invalid).toEqual([
        {
          index: 4,
          id: plots[4]!['id'],
          path: '[4]',
          message: `a plot of ${Math.round((bytes / 1024 / 1024) * 10) / 10} MB of JSON is larger than the 0 MB one plot may have`,
        },
      ]);
      const strict = client.ownPlots({ plotMaxBytes: 8_000 });
      await expect(
        (async () => {
          for await (const _ of strict);
        })(),
      ).rejects.toThrow(/^GET \/plots: \[4\]: a plot of .* MB of JSON is larger than/);
      await server.close();
      server = undefined;
    }
  });

  it('refuses a plot of more arrays than the heap can parse unread, and yields the others', async () => {
    const plots = Array.from({ length: 3 }, (_, i) => samplePlot(i));
    const dense = `{"id":"${String(plots[1]!['id'])}","geometry":{"type":"Polygon","coordinates":[[${'[0,0],'.repeat(PLOT_MAX_ARRAYS)}[0,0]]]}}`;
    const text = `[${JSON.stringify(plots[0])},${dense},${JSON.stringify(plots[2])}]`;
    server = await startServer((req, res) => {
      if (tokenRoute(req, res, () => fakeJwt(1))) return;
      return chunked(text, { size: 65_536 })(req, res);
    });
    const client = createUpstreamClient({ baseUrl: server.url, clientId: 'c', clientSecret: 'secret-xyz' });
    const invalid: unknown[] = [];
    const ids: string[] = [];
    for await (const plot of client.ownPlots({ onInvalid: (r) => invalid.push(r) })) ids.push(plot.id);
    expect(ids).toEqual([plots[0]!['id'], plots[2]!['id']]);
    expect(invalid).toEqual([
      {
        index: 1,
        id: plots[1]!['id'],
        path: '[1]',
        message: `a plot of more than ${PLOT_MAX_ARRAYS} arrays (positions) is more than one plot may have`,
      },
    ]);
  });
});
