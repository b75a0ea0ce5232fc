import { afterEach, describe, expect, it } from 'vitest';
import { createUpstreamClient } from '../../../upstream/client.ts';
import { PAGE_BODY_BYTES, pageBodyBytes, type RawPlotPage } from '../../../upstream/paging.ts';
import { waitUntil } from '../../support/wait.ts';
import { fakeJwt, startServer, tokenRoute, type LocalServer } from './local-server.ts';

/**
 * The read-ahead bounded by bytes (upstream/paging.ts PAGE_BODY_BYTES): the bytes of page bodies the
 * process holds, from before a page is asked for until its release. Its own file: the budget and its
 * estimates are the process's (one module instance per test file).
 */
const MB = 1024 * 1024;

describe('page bodies held at once', () => {
  let server: LocalServer | undefined;
  afterEach(async () => server?.close());

  it('asks for no page while pages of 20 MB already fill the budget, and for ordinary pages many at once', async () => {
    const sizes: Record<string, number> = { large: 20 * MB, small: 2 * 1024 };
    server = await startServer((req, res) => {
      if (tokenRoute(req, res, () => fakeJwt(1))) return;
      const size = sizes[req.path.split('/')[2]!]!;
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(size) });
      res.end(`[${' '.repeat(size - 2)}]`);
    });
    const client = createUpstreamClient({ baseUrl: server.url, clientId: 'c', clientSecret: 'secret-xyz' });
    const asked = (supplier: string) =>
      server!.requests.filter((r) => r.path === `/businesses/${supplier}/plots`).length;
    const read = (supplier: string, page: number) => client.getSupplierPlotsPageText(supplier, page);

    // Nothing read yet: the first page is asked for alone (its size is not known).
    const first = await read('large', 1);
    const second = read('large', 2);
    await waitUntil('the second page waits for room', () => pageBodyBytes().queued === 1);
    expect(asked('large')).toBe(1);
    expect(pageBodyBytes().inUse).toBe(20 * MB);
    first.release();
    const pages: RawPlotPage[] = [await second];
    // Known to weigh 20 MB now: two of them never held at once (40 MB > 32 MB).
    const third = read('large', 3);
    await waitUntil('the third page waits for room', () => pageBodyBytes().queued === 1);
    expect(asked('large')).toBe(2);
    pages.shift()!.release();
    (await third).release();
    expect(pageBodyBytes()).toEqual({ inUse: 0, queued: 0 });

    // A supplier of ordinary pages: estimated by the last page of any supplier first, then by its own.
    const small = await read('small', 1);
    small.release();
    const many = await Promise.all(Array.from({ length: 20 }, (_, i) => read('small', i + 2)));
    expect(pageBodyBytes()).toEqual({ inUse: 20 * 2 * 1024, queued: 0 });
    for (const page of many) page.release();
    expect(pageBodyBytes().inUse).toBe(0);

    // A page announced (Content-Length) larger than its estimate gives the estimate back and waits for
    // room for all of it before its body is read: never two pages of 20 MB at once, even unforeseen.
    const held = await read('large', 4);
    sizes['small'] = 20 * MB;
    const grown = read('small', 30);
    await waitUntil('the unforeseen large page waits for room', () => pageBodyBytes().queued === 1);
    expect(pageBodyBytes().inUse).toBe(20 * MB);
    held.release();
    (await grown).release();
    expect(pageBodyBytes()).toEqual({ inUse: 0, queued: 0 });
    expect(PAGE_BODY_BYTES).toBe(32 * MB);
  });
});
