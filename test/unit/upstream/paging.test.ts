import { afterEach, describe, expect, it } from 'vitest';
import { createUpstreamClient } from '../../../upstream/client.ts';
import { RequestValidationError, ResponseValidationError } from '../../../upstream/errors.ts';
import { hasMorePages, isRepeatedPage } from '../../../upstream/page-rule.ts';
import { fakeJwt, json, startServer, tokenRoute, type LocalServer } from './local-server.ts';
import { samplePage } from './samples.ts';

describe('page stop rule', () => {
  it('a short page or an empty page ends the read; exactly limit asks for the next', () => {
    expect(hasMorePages(500, 500)).toBe(true);
    expect(hasMorePages(499, 500)).toBe(false);
    expect(hasMorePages(0, 500)).toBe(false);
    expect(hasMorePages(1, 1)).toBe(true);
  });
  it('detects a page served again (service ignoring page)', () => {
    expect(isRepeatedPage([{ id: 'a' }, { id: 'b' }], [{ id: 'a' }, { id: 'b' }])).toBe(true);
    expect(isRepeatedPage([{ id: 'a' }, { id: 'b' }], [{ id: 'c' }, { id: 'd' }])).toBe(false);
    expect(isRepeatedPage(undefined, [{ id: 'a' }])).toBe(false);
  });
});

/** A supplier with `total` plots behind GET /businesses/{id}/plots, paged like the service (limit clamped at 500). */
async function plotServer(total: number, opts: { ignorePage?: boolean } = {}): Promise<LocalServer> {
  const all = samplePage(total);
  return startServer((req, res) => {
    if (tokenRoute(req, res, () => fakeJwt(1))) return;
    const limit = Math.min(Number(req.query.get('limit') ?? 100), 500);
    const pageParam = Number(req.query.get('page'));
    const page = opts.ignorePage || !Number.isInteger(pageParam) || pageParam < 1 ? 1 : pageParam;
    json(res, 200, all.slice((page - 1) * limit, page * limit));
  });
}

describe('supplier plot paging', () => {
  let server: LocalServer | undefined;
  afterEach(async () => server?.close());

  const client = () => createUpstreamClient({ baseUrl: server!.url, clientId: 'c', clientSecret: 'secret-xyz' });
  const pagesAsked = () =>
    server!.requests
      .filter((r) => r.path.startsWith('/businesses/'))
      .map((r) => `${r.query.get('page')}/${r.query.get('limit')}`);

  it('reads every page with limit 500 and stops on the short page', async () => {
    server = await plotServer(1234);
    const pages = [];
    for await (const p of client().supplierPlotPages('sup-1')) pages.push(p.plots.length);
    expect(pages).toEqual([500, 500, 234]);
    expect(pagesAsked()).toEqual(['1/500', '2/500', '3/500']);
    expect(server.requests[1]!.path).toBe('/businesses/sup-1/plots');
  });

  it('asks for the next page after a page of exactly limit, and stops on the empty one', async () => {
    server = await plotServer(1000);
    let count = 0;
    for await (const _ of client().supplierPlots('sup-1')) count++;
    expect(count).toBe(1000);
    expect(pagesAsked()).toEqual(['1/500', '2/500', '3/500']);
  });

  it('computes the stop rule against the clamped limit when asked for more than 500', async () => {
    server = await plotServer(700);
    const page = await client().getSupplierPlotsPage('sup-1', 1, { limit: 2000 });
    expect(page).toMatchObject({ page: 1, limit: 500, more: true });
    expect(page.plots).toHaveLength(500);
    const last = await client().getSupplierPlotsPage('sup-1', 2, { limit: 2000 });
    expect(last.more).toBe(false);
  });

  it('single page with a small limit, filters and includes in the query', async () => {
    server = await plotServer(30);
    const page = await client().getSupplierPlotsPage('sup/1', 3, {
      limit: 10,
      filter: { countryCode: [{ op: '$eq', value: 'CI' }] },
      includes: ['suppliers'],
    });
    expect(page).toMatchObject({ page: 3, limit: 10, more: true });
    const req = server.requests.at(-1)!;
    expect(req.path).toBe('/businesses/sup%2F1/plots');
    expect(req.query.getAll('filter.countryCode')).toEqual(['$eq:CI']);
    expect(req.query.get('includes')).toBe('suppliers');
  });

  it('never sends an invalid page: refused before any request', async () => {
    server = await plotServer(10);
    await expect(client().getSupplierPlotsPage('sup-1', 0)).rejects.toBeInstanceOf(RequestValidationError);
    await expect(client().getSupplierPlotsPage('sup-1', Number.NaN)).rejects.toThrow(
      /page: must be a positive integer/,
    );
    expect(server.requests).toHaveLength(0);
  });

  it('stops with an error when the service serves the same page again', async () => {
    server = await plotServer(1200, { ignorePage: true });
    const seen: number[] = [];
    const err = await (async () => {
      for await (const p of client().supplierPlotPages('sup-1')) seen.push(p.page);
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ResponseValidationError);
    expect((err as Error).message).toMatch(/page 2: repeats page 1/);
    expect(seen).toEqual([1]);
  });
});
