import { afterEach, describe, expect, it } from 'vitest';
import { createUpstreamClient } from '../../../upstream/client.ts';
import { PAGE_BODY_BYTES, WHOLE_PAGE_MAX_BYTES, pageBodyBytes, type RawPlotPage } from '../../../upstream/paging.ts';
import { waitUntil } from '../../support/wait.ts';
import { fakeJwt, startServer, tokenRoute, type LocalServer } from './local-server.ts';

/**
 * The read-ahead bounded by bytes (upstream/paging.ts PAGE_BODY_BYTES): the bytes of page bodies the
 * process holds in memory, from before a page is asked for until its release. A page above the spill
 * bound (WHOLE_PAGE_MAX_BYTES) is kept on disk and holds nothing once read. Its own file: the budget
 * and its estimates are the process's (one module instance per test file).
 */
const MB = 1024 * 1024;

describe('page bodies held in memory at once', () => {
  let server: LocalServer | undefined;
  afterEach(async () => server?.close());

  it('asks for no page while pages held in memory fill the budget, for ordinary pages many at once, and for pages kept on disk without bound', async () => {
    const sizes: Record<string, number> = { full: WHOLE_PAGE_MAX_BYTES, small: 2 * 1024, huge: 20 * MB };
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
    const fits = PAGE_BODY_BYTES / WHOLE_PAGE_MAX_BYTES;
    expect(fits).toBe(8);

    // Pages as large as may be held in memory: eight fill the budget, the ninth waits for a release.
    const held: RawPlotPage[] = await Promise.all(Array.from({ length: fits }, (_, i) => read('full', i + 1)));
    expect(held.every((p) => p.spilled === undefined)).toBe(true);
    expect(pageBodyBytes().inUse).toBe(PAGE_BODY_BYTES);
    const ninth = read('full', 9);
    await waitUntil('the ninth page waits for room', () => pageBodyBytes().queued === 1);
    expect(asked('full')).toBe(fits);
    held.shift()!.release();
    held.push(await ninth);
    expect(asked('full')).toBe(fits + 1);

    // A page kept on disk holds no room once read, even while the budget is full.
    for (const page of held.splice(0, 1)) page.release();
    const huge = await Promise.all(Array.from({ length: 4 }, (_, i) => read('huge', i + 1)));
    expect(huge.every((p) => p.spilled !== undefined && p.byteLength === 20 * MB)).toBe(true);
    expect(pageBodyBytes().inUse).toBe((fits - 1) * WHOLE_PAGE_MAX_BYTES);
    for (const page of [...held.splice(0), ...huge]) page.release();
    expect(pageBodyBytes()).toEqual({ inUse: 0, queued: 0 });

    // A supplier of ordinary pages: estimated by the last page of any supplier first, then by its own.
    const small = await read('small', 1);
    small.release();
    const many = await Promise.all(Array.from({ length: 20 }, (_, i) => read('small', i + 2)));
    expect(pageBodyBytes()).toEqual({ inUse: 20 * 2 * 1024, queued: 0 });
    for (const page of many) page.release();
    expect(pageBodyBytes().inUse).toBe(0);

    // A page announced (Content-Length) larger than its estimate gives the estimate back and waits for
    // room for what it will hold before its body is read: the budget is never passed, even unforeseen.
    const full = await Promise.all(Array.from({ length: fits }, (_, i) => read('full', i + 20)));
    sizes['small'] = 2 * MB;
    const grown = read('small', 30);
    await waitUntil('the unforeseen larger page waits for room', () => pageBodyBytes().queued === 1);
    expect(pageBodyBytes().inUse).toBe(PAGE_BODY_BYTES);
    full.shift()!.release();
    (await grown).release();
    for (const page of full) page.release();
    expect(pageBodyBytes()).toEqual({ inUse: 0, queued: 0 });
  });
});
