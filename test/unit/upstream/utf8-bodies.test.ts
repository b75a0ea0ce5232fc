import { afterEach, describe, expect, it } from 'vitest';
import { createUpstreamClient } from '../../../upstream/client.ts';
import { Readable } from 'node:stream';
import { decodeUtf8, utf8Guard } from '../../../upstream/utf8.ts';
import { splitSupplierPlotsPage, type RawPlotPage } from '../../../upstream/paging.ts';
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

  it('refuses a page read plot by plot (too large to parse whole) whose plot or id is not UTF-8, naming the page', () => {
    const raw = (bytes: Buffer): RawPlotPage => ({
      page: 7,
      limit: 500,
      byteLength: bytes.length,
      hash: undefined,
      spilled: undefined,
      bytes,
      get text(): string {
        throw new Error('a split page is never decoded whole');
      },
      release() {},
    });
    const page = samplePage(3);
    page[2]!.name = 'MARK';
    const inName = splitSupplierPlotsPage(raw(brokenBytes(JSON.stringify(page), 'MARK', [0x41, 0xff, 0x42])));
    expect(inName.received).toBe(3);
    expect(() => inName.plotAt(2)).toThrow(/page 7: plot #2 is not UTF-8/);
    expect(() => inName.plotAt(0)).not.toThrow();
    const id = JSON.stringify(page[0]!.id);
    const inId = brokenBytes(JSON.stringify(page).replace(id, '"MARK"'), 'MARK', [0xc3, 0x28]);
    expect(() => splitSupplierPlotsPage(raw(inId))).toThrow(/page 7: response body is not UTF-8/);
  });

  it('guards a streamed body: bytes pass unchanged, a character cut across chunks is fine, a bad byte fails the stream', async () => {
    const euro = Buffer.from('["€ 😀"]');
    const through: Buffer[] = [];
    // Every cut, the middle of each multi-byte character included.
    for (let cut = 1; cut < euro.length; cut++) {
      for await (const c of Readable.from([euro.subarray(0, cut), euro.subarray(cut)]).pipe(utf8Guard()))
        through.push(c as Buffer);
      expect(Buffer.concat(through.splice(0))).toEqual(euro);
    }
    const drain = async (chunks: Buffer[]) => {
      for await (const _ of Readable.from(chunks).pipe(utf8Guard()));
    };
    await expect(drain([Buffer.from('["a'), Buffer.from([0xff]), Buffer.from('"]')])).rejects.toThrow(/not UTF-8/);
    // A body that ends inside a character.
    await expect(drain([Buffer.from('["a'), Buffer.from([0xe2, 0x82])])).rejects.toThrow(/not UTF-8/);
  });

  it('refuses the own-plots stream whose bytes are not UTF-8', async () => {
    const page = samplePage(2);
    page[0]!.name = 'MARK';
    const bytes = brokenBytes(JSON.stringify(page), 'MARK', [0xed, 0xa0, 0x80]);
    server = await startServer((req, res) => {
      if (tokenRoute(req, res, () => fakeJwt(1))) return;
      res.setHeader('content-type', 'application/json');
      res.end(bytes);
    });
    const client = createUpstreamClient({
      baseUrl: server.url,
      clientId: 'c',
      clientSecret: 'secret-xyz',
      maxAttempts: 1,
    });
    const read = async () => {
      for await (const _ of client.ownPlots());
    };
    await expect(read()).rejects.toThrow(/not UTF-8/);
  });
});
