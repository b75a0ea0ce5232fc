import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startClient, type Client } from './helpers.ts';

interface Plot {
  id: string;
  commodities: string[];
  countryCode: string;
  surfaceArea: number;
  riskAssessmentStatus: string;
  [k: string]: unknown;
}

describe('GET /businesses/{id}/plots', () => {
  let c: Client;
  let big: string;
  let empty: string;
  beforeAll(async () => {
    c = await startClient({ layout: { ownPlots: 7, suppliers: [{ plots: 1000 }, { plots: 1234 }, { plots: 0 }] } });
    const suppliers = c.sim.control.suppliers();
    big = suppliers[0]?.id ?? '';
    empty = suppliers[2]?.id ?? '';
  });
  afterAll(() => c.sim.close());
  const page = (query: string, id = big): Promise<Plot[]> => c.json<Plot[]>(`/businesses/${id}/plots${query}`);

  it('pages: default 100, limit clamped to 500, invalid page is page 1, exact last page then empty', async () => {
    expect(await page('')).toHaveLength(100);
    expect(await page('?limit=10000')).toHaveLength(500);
    expect(await page('?limit=abc')).toHaveLength(100);
    const first = await page('?limit=10');
    expect((await page('?page=abc&limit=10')).map((p) => p.id)).toEqual(first.map((p) => p.id));
    expect((await page('?page=0&limit=10')).map((p) => p.id)).toEqual(first.map((p) => p.id));
    const last = await page('?page=2&limit=500');
    expect(last).toHaveLength(500);
    expect(await page('?page=3&limit=500')).toEqual([]);
    // stable, non-overlapping order
    const all = [...(await page('?page=1&limit=500')), ...last].map((p) => p.id);
    expect(new Set(all).size).toBe(1000);
    expect(await page('', empty)).toEqual([]);
  });

  it('answers 404 for an unknown business and 403 for a known non-supplier or a disconnected one', async () => {
    expect((await c.get('/businesses/00000000-0000-4000-8000-000000000000/plots')).status).toBe(404);
    expect((await c.get(`/businesses/${c.sim.control.callerBusinessId()}/plots`)).status).toBe(403);
    const other = await startClient({ layout: { suppliers: [{ plots: 3 }, { plots: 3 }] } });
    const victim = other.sim.control.suppliers()[1]?.id ?? '';
    expect((await other.get(`/businesses/${victim}/plots`)).status).toBe(200);
    other.sim.control.disconnectSupplier(victim);
    const res = await other.get(`/businesses/${victim}/plots`);
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ statusCode: 403, error: 'Forbidden' });
    expect(await other.json<unknown[]>('/business-connections/suppliers')).toHaveLength(1);
    await other.sim.close();
  });

  it('filters by commodities, country, risk status and area (with $not), repeatable', async () => {
    const all = [...(await page('?limit=500')), ...(await page('?page=2&limit=500'))];
    const commodity = all[0]?.commodities[0] ?? '';
    const withIt = await page(`?limit=500&filter.commodities=$contains:${encodeURIComponent(commodity)}`);
    expect(withIt.length).toBe(Math.min(500, all.filter((p) => p.commodities.includes(commodity)).length));
    expect(withIt.every((p) => p.commodities.includes(commodity))).toBe(true);
    const without = await page(`?limit=500&filter.commodities=$not:$contains:${encodeURIComponent(commodity)}`);
    expect(without.every((p) => !p.commodities.includes(commodity))).toBe(true);
    const country = all[0]?.countryCode ?? '';
    expect((await page(`?limit=500&filter.countryCode=$eq:${country}`)).every((p) => p.countryCode === country)).toBe(
      true,
    );
    const mid = await page('?limit=500&filter.areaHa=$gte:10&filter.areaHa=$lte:50');
    expect(mid.length).toBe(
      Math.min(500, all.filter((p) => p.surfaceArea >= 100_000 && p.surfaceArea <= 500_000).length),
    );
    expect(mid.every((p) => p.surfaceArea >= 100_000 && p.surfaceArea <= 500_000)).toBe(true);
    const fresh = await page('?limit=500&filter.riskAssessmentStatus=$eq:NEW');
    expect(fresh.length).toBeGreaterThan(0);
    expect(fresh.every((p) => p.riskAssessmentStatus === 'NEW')).toBe(true);
    const res = await c.get(`/businesses/${big}/plots?filter.areaHa=$contains:3`);
    expect(res.status).toBe(400);
    const body = (await res.json()) as { message: string[] };
    expect(body.message[0]).toContain('filter.areaHa');
  });

  it('validates includes combinations and projects select', async () => {
    const ok = [
      'riskLevel',
      'suppliers',
      'mostRecentAnalysis,mostRecentAnalysesByType',
      'minimumAnalysisResults,riskLevel',
    ];
    for (const inc of ok)
      expect((await c.get(`/businesses/${big}/plots?limit=1&includes=${inc}`)).status, inc).toBe(200);
    for (const bad of ['riskLevel,suppliers', 'mostRecentAnalysis,riskLevel,mostRecentAnalysesByType', 'nope']) {
      const res = await c.get(`/businesses/${big}/plots?limit=1&includes=${bad}`);
      expect(res.status, bad).toBe(400);
      expect(await res.json()).toMatchObject({ statusCode: 400, error: 'Bad Request' });
    }
    const [withMin] = await page('?limit=1&includes=minimumAnalysisResults,riskLevel');
    expect(withMin).toHaveProperty('minimumAnalysisResults');
    expect(withMin).toHaveProperty('riskLevel');
    expect(withMin).not.toHaveProperty('suppliers');
    const [full] = await page('?limit=1');
    for (const f of [
      'suppliers',
      'mostRecentAnalysis',
      'mostRecentAnalysesByType',
      'riskAssessmentStatus',
      'riskLevel',
      'geometry',
      'customData',
    ])
      expect(full).toHaveProperty(f);
    const [picked] = await page('?limit=1&select=name,countryCode');
    expect(Object.keys(picked ?? {}).sort()).toEqual(['countryCode', 'id', 'name']);
    expect((await c.get(`/businesses/${big}/plots?select=bogus`)).status).toBe(400);
  });

  it('streams own plots on GET /plots with customData visible to the owner only', async () => {
    const res = await c.get('/plots');
    expect(res.headers.get('content-length')).toBeNull();
    const own = (await res.json()) as Plot[];
    expect(own).toHaveLength(7);
    expect(own.some((p) => Object.keys(p['customData'] as object).length > 0)).toBe(true);
    const supplierPlots = await page('?limit=50');
    expect(supplierPlots.every((p) => Object.keys(p['customData'] as object).length === 0)).toBe(true);
  });

  it('serves a deep page of a 1,000,000-plot dataset without building it', async () => {
    const before = process.memoryUsage().heapUsed;
    const huge = await startClient({ plots: 1_000_000, suppliers: 3, seed: 9 });
    const supplier = huge.sim.control.suppliers().reduce((a, b) => (a.plotsCount > b.plotsCount ? a : b));
    const lastPage = Math.ceil(supplier.plotsCount / 500);
    const plots = await huge.json<Plot[]>(`/businesses/${supplier.id}/plots?limit=500&page=${lastPage}`);
    expect(plots.length).toBe(supplier.plotsCount - (lastPage - 1) * 500);
    expect(await huge.json<Plot[]>(`/businesses/${supplier.id}/plots?limit=500&page=${lastPage + 1}`)).toEqual([]);
    expect(huge.sim.control.countPlots()).toBe(1_000_000);
    // 1M generated plots would take well over 1 GB; the whole simulator stays far below.
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(100 * 1024 * 1024);
    await huge.sim.close();
  });
});
