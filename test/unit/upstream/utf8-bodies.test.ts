import { afterEach, describe, expect, it } from 'vitest';
import { createUpstreamClient } from '../../../upstream/client.ts';
import { decodeUtf8 } from '../../../upstream/utf8.ts';
import { fakeJwt, startServer, tokenRoute, type LocalServer } from './local-server.ts';
import { samplePage } from './samples.ts';

/** The page's JSON with one name's bytes made not UTF-8 (a lone 0xFF, a cut-off sequence). */
function brokenBytes(json: string, marker: string, bad: number[]): Buffer {
  const [before, after] = json.split(marker) as [string, string];
  return Buffer.concat([Buffer.from(before), Buffer.from(bad), Buffer.from(after)]);
}

describe('bodies that are not UTF-8', () => {
  let server: LocalServer | undefined;
  afterEach(async () => server?.close());

  it('decodes UTF-8 as sent (a leading BOM dropped) and refuses anything else instead of writing U+FFFD', () => {
    expect(decodeUtf8(Buffer.from('\ufeff["Café \ufffd 😀"]'))).toBe('["Café \ufffd 😀"]');
    expect(() => decodeUtf8(Buffer.from([0x5b, 0x22, 0xff, 0x22, 0x5d]))).toThrow(/not UTF-8/);
    expect(() => decodeUtf8(Buffer.from([0x22, 0xe2, 0x82, 0x22]))).toThrow(/not UTF-8/);
    // An encoded surrogate (CESU-8 style) is not UTF-8 either.
    expect(() => decodeUtf8(Buffer.from([0x22, 0xed, 0xa0, 0x80, 0x22]))).toThrow(/not UTF-8/);
  });

  it('refuses a plot page and a listing whose bytes are not UTF-8, naming the page', async () => {
    const page = samplePage(3);
    page[1]!.name = 'MARK';
    const pageBytes = brokenBytes(JSON.stringify(page), 'MARK', [0x41, 0xff, 0x42]);
    const listing = brokenBytes('[{"id":"c1","sourceBusiness":{"id":"a","name":"MARK"}}]', 'MARK', [0xc3]);
    server = await startServer((req, res) => {
      if (tokenRoute(req, res, () => fakeJwt(1))) return;
      res.setHeader('content-type', 'application/json');
      res.end(req.path.includes('/plots') ? pageBytes : listing);
    });
    const client = createUpstreamClient({
      baseUrl: server.url,
      clientId: 'c',
      clientSecret: 'secret-xyz',
      maxAttempts: 1,
    });
    await expect(client.getSupplierPlotsPage('sup-1', 2, { limit: 10 })).rejects.toThrow(
      /page 2: response body is not UTF-8/,
    );
    await expect(client.listSuppliers()).rejects.toThrow(/not UTF-8/);
  });
});
