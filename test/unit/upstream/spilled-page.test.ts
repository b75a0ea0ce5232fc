import { afterEach, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createUpstreamClient } from '../../../upstream/client.ts';
import { NetworkError } from '../../../upstream/errors.ts';
import { splitSupplierPlotsPage, supplierPlotsPageIds } from '../../../upstream/paging.ts';
import { SpilledPage } from '../../../upstream/spilled-page.ts';
import { fakeJwt, startServer, tokenRoute, type LocalServer } from './local-server.ts';
import { inMemoryPage, samplePage } from './samples.ts';

/**
 * A page above the spill bound is kept in a temporary file as it arrives (upstream/spilled-page.ts),
 * hashed and scanned on the way: it is then read plot by plot from there, exactly as the same page
 * held in memory is.
 */
const SPILL = 2048;

const inMemory = (text: string) => inMemoryPage(text);

/** This process's page files still named in the temporary directory. */
function namedFiles(): string[] {
  return readdirSync(tmpdir()).filter((f) => f.startsWith(`ddsync-page-${process.pid}-`));
}

describe('a page kept on disk as it arrives', () => {
  let server: LocalServer | undefined;
  afterEach(async () => server?.close());

  it('is hashed, split and read plot by plot as the same page in memory is, whether its length is announced or not, and is gone at its release', async () => {
    const plots = samplePage(40) as Array<Record<string, unknown>>;
    plots[3]!['name'] = 42;
    plots[7]!['id'] = plots[1]!['id'];
    const text = JSON.stringify(plots);
    server = await startServer((req, res) => {
      if (tokenRoute(req, res, () => fakeJwt(1))) return;
      if (req.query.get('page') === '1') {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) });
        res.end(text);
        return;
      }
      // No length announced: kept in memory until it passes the bound, then moved to disk.
      res.writeHead(200, { 'content-type': 'application/json' });
      for (let at = 0; at < text.length; at += 700) res.write(text.slice(at, at + 700));
      res.end();
    });
    const client = createUpstreamClient({ baseUrl: server.url, clientId: 'c', clientSecret: 'secret-xyz' });
    const expected = splitSupplierPlotsPage(inMemory(text));
    const hash = createHash('sha1').update('7|').update(text).digest('base64url');
    for (const page of [1, 2]) {
      const raw = await client.getSupplierPlotsPageText('sup-1', page, { spillAboveBytes: SPILL, hashPrefix: '7|' });
      expect(raw.spilled, `page ${page}`).toBeDefined();
      expect(raw.byteLength).toBe(Buffer.byteLength(text));
      expect(raw.hash).toBe(hash);
      expect(() => raw.bytes).toThrow(/kept on disk, not in memory/);
      expect(namedFiles()).toEqual([]);
      const split = splitSupplierPlotsPage(raw);
      expect(split).toMatchObject({ page, received: 40, more: false, ids: expected.ids });
      for (let i = 0; i < 40; i++) expect(split.plotAt(i), `plot ${i}`).toEqual(expected.plotAt(i));
      expect(supplierPlotsPageIds(raw)).toEqual(supplierPlotsPageIds(inMemory(text)));
      raw.release();
      expect(() => split.plotAt(0)).toThrow('page body used after release');
    }
    // Below the bound, the same page stays in memory, hashed the same.
    const small = await client.getSupplierPlotsPageText('sup-1', 1, { hashPrefix: '7|' });
    expect(small.spilled).toBeUndefined();
    expect(small.hash).toBe(hash);
    small.release();
  });

  it('raises a retryable error naming the page when the body kept on disk is not one array', async () => {
    const text = `${JSON.stringify(samplePage(20)).slice(0, -1)},{"id":"x"`;
    server = await startServer((req, res) => {
      if (tokenRoute(req, res, () => fakeJwt(1))) return;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(text);
    });
    const client = createUpstreamClient({ baseUrl: server.url, clientId: 'c', clientSecret: 'secret-xyz' });
    const raw = await client.getSupplierPlotsPageText('sup-1', 4, { spillAboveBytes: SPILL });
    expect(raw.spilled).toBeDefined();
    expect(() => splitSupplierPlotsPage(raw)).toThrow(NetworkError);
    expect(() => splitSupplierPlotsPage(raw)).toThrow(
      /page 4: response body is not a JSON array \(element 20 is not closed/,
    );
    raw.release();
  });

  it('names the directory it could not write in', () => {
    expect(() => SpilledPage.open('/nonexistent/ddsync-spill')).toThrow(
      /could not keep a large page body on disk in \/nonexistent\/ddsync-spill: ENOENT/,
    );
  });
});
