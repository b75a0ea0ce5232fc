import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { startHarness, rejectionOf, type Harness } from './harness.ts';
import { RequestValidationError, ForbiddenError, NotFoundError, emptyStats } from '../../upstream/index.ts';

describe('contract: plots and business connections', () => {
  let h: Harness;
  let supplier500: string;
  let supplier1000: string;
  let supplierNone: string;

  beforeAll(async () => {
    h = await startHarness({
      layout: { ownPlots: 7, suppliers: [{ plots: 500 }, { plots: 1000 }, { plots: 0 }, { plots: 123 }] },
    });
    const suppliers = h.sim.control.suppliers();
    [supplier500, supplier1000, supplierNone] = suppliers.map((s) => s.id) as [string, string, string];
  });
  afterAll(() => h.close());

  it('lists direct suppliers as connections whose other side is the supplier', async () => {
    const connections = await h.api.listSuppliers();
    expect(connections).toHaveLength(4);
    const caller = h.sim.control.callerBusinessId();
    for (const c of connections) {
      expect([c.sourceBusiness?.id, c.targetBusiness?.id]).toContain(caller);
      expect(typeof c.plotsCount).toBe('number');
    }
    const buyers = await h.api.listBuyers();
    expect(buyers.length).toBeGreaterThan(0);
  });

  it('pages a supplier of exactly 500 plots as one full page then an empty one', async () => {
    const stats = emptyStats();
    const pages = [];
    for await (const page of h.api.supplierPlotPages(supplier500, { stats })) pages.push(page);
    expect(pages.map((p) => p.plots.length)).toEqual([500, 0]);
    expect(pages.map((p) => p.more)).toEqual([true, false]);
    expect(new Set(pages.flatMap((p) => p.plots.map((x) => x.id))).size).toBe(500);
  });

  it('pages 1,000 plots in two full pages, and none for an empty supplier', async () => {
    const ids: string[] = [];
    for await (const plot of h.api.supplierPlots(supplier1000)) ids.push(plot.id);
    expect(ids).toHaveLength(1000);
    expect(new Set(ids).size).toBe(1000);
    const none = await h.api.getSupplierPlotsPage(supplierNone, 1);
    expect(none).toMatchObject({ plots: [], more: false });
  });

  it('applies the default of 100, clamps limits above 500 and stops on a short page', async () => {
    const clamped = await h.api.getSupplierPlotsPage(supplier1000, 1, { limit: 2000 });
    expect(clamped.limit).toBe(500);
    expect(clamped.plots).toHaveLength(500);
    expect(clamped.more).toBe(true);
    const last = await h.api.getSupplierPlotsPage(supplier1000, 11, { limit: 99 });
    expect(last.plots).toHaveLength(1000 - 990);
    expect(last.more).toBe(false);
  });

  it('is served page 1 for an invalid page, so the client never sends one', async () => {
    // The service's behaviour, checked over raw HTTP: an invalid page silently means page 1.
    const token = (await (
      await fetch(`${h.sim.url}/auth/machine-to-machine-clients/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          client_id: 'ddsync-demo',
          client_secret: 'ddsync-demo-secret',
          grant_type: 'client_credentials',
        }),
      })
    ).json()) as { access_token: string };
    const raw = async (query: string) =>
      (await (
        await fetch(`${h.sim.url}/businesses/${supplier1000}/plots?${query}`, {
          headers: { authorization: `Bearer ${token.access_token}` },
        })
      ).json()) as Array<{ id: string }>;
    const [invalid, first, defaultSize] = await Promise.all([raw('page=abc&limit=5'), raw('page=1&limit=5'), raw('')]);
    expect(invalid.map((p) => p.id)).toEqual(first.map((p) => p.id));
    expect(defaultSize).toHaveLength(100);
    // ...and the client refuses to produce such a request.
    for (const page of [0, -1, 1.5, Number.NaN]) {
      expect(await rejectionOf(h.api.getSupplierPlotsPage(supplier1000, page))).toBeInstanceOf(RequestValidationError);
    }
  });

  it('filters by commodity, country, risk status and area exactly as the service does', async () => {
    const all = [];
    for await (const p of h.api.supplierPlots(supplier1000)) all.push(p);
    const commodity = all[0]!.commodities![0]!;
    const withCommodity = [];
    for await (const p of h.api.supplierPlots(supplier1000, {
      filter: { commodities: [{ op: '$contains', value: commodity }] },
    }))
      withCommodity.push(p);
    expect(withCommodity.length).toBe(all.filter((p) => p.commodities?.includes(commodity)).length);
    expect(withCommodity.length).toBeGreaterThan(0);
    expect(withCommodity.length).toBeLessThan(all.length);
    const country = all[0]!.countryCode!;
    const notCountry = [];
    for await (const p of h.api.supplierPlots(supplier1000, {
      filter: { countryCode: [{ op: '$eq', value: country, not: true }] },
    }))
      notCountry.push(p);
    expect(notCountry.length).toBe(all.filter((p) => p.countryCode !== country).length);
    const big = [];
    for await (const p of h.api.supplierPlots(supplier1000, {
      filter: {
        areaHa: [
          { op: '$gte', value: 100 },
          { op: '$lte', value: 300 },
        ],
      },
    }))
      big.push(p);
    expect(big.length).toBe(all.filter((p) => p.surfaceArea! / 10_000 >= 100 && p.surfaceArea! / 10_000 <= 300).length);
    const status = all[0]!.riskAssessmentStatus!;
    const byStatus = [];
    for await (const p of h.api.supplierPlots(supplier1000, {
      filter: { riskAssessmentStatus: [{ op: '$eq', value: status }] },
    }))
      byStatus.push(p);
    expect(byStatus.length).toBe(all.filter((p) => p.riskAssessmentStatus === status).length);
  });

  it('honours select and the allowed includes, and refuses other combinations before sending', async () => {
    const selected = await h.api.getSupplierPlotsPage(supplier500, 1, { limit: 3, select: ['id', 'name'] });
    expect(Object.keys(selected.plots[0]!).sort()).toEqual(['id', 'name']);
    const paired = await h.api.getSupplierPlotsPage(supplier500, 1, {
      limit: 3,
      includes: ['mostRecentAnalysis', 'mostRecentAnalysesByType'],
    });
    expect(paired.plots[0]).toHaveProperty('mostRecentAnalysis');
    const before = h.api.stats.requests;
    const refused = await rejectionOf(
      h.api.getSupplierPlotsPage(supplier500, 1, { includes: ['suppliers', 'riskLevel'] }),
    );
    expect(refused).toBeInstanceOf(RequestValidationError);
    expect(refused.message).toMatch(/includes/);
    const badOp = await rejectionOf(
      h.api.getSupplierPlotsPage(supplier500, 1, {
        filter: { countryCode: [{ op: '$contains' as '$eq', value: 'BR' }] },
      }),
    );
    expect(badOp.message).toMatch(/filter\.countryCode\[0\]\.op/);
    expect(h.api.stats.requests).toBe(before);
  });

  it('refuses a business that is not a direct supplier (403) or does not exist (404)', async () => {
    const caller = h.sim.control.callerBusinessId();
    expect(await rejectionOf(h.api.getSupplierPlotsPage(caller, 1))).toBeInstanceOf(ForbiddenError);
    expect(await rejectionOf(h.api.getSupplierPlotsPage('00000000-0000-4000-8000-00000000dead', 1))).toBeInstanceOf(
      NotFoundError,
    );
  });

  it('streams the own plots of GET /plots, normalised', async () => {
    const own = [];
    for await (const plot of h.api.ownPlots()) own.push(plot);
    expect(own).toHaveLength(7);
    expect(own.every((p) => typeof p.id === 'string' && p.geometry !== undefined)).toBe(true);
  });

  it('normalises the odd records: {} becomes null, unicode survives, the bow-tie is still returned', async () => {
    const odd = h.sim.control.oddRecords();
    const wanted = new Set(Object.values(odd));
    const found = new Map<string, Record<string, unknown>>();
    for await (const p of h.api.supplierPlots(supplier500))
      if (wanted.has(p.id)) found.set(p.id, p as unknown as Record<string, unknown>);
    expect(found.size).toBe(wanted.size);
    const empty = found.get(odd.emptyObjects!)!;
    expect(empty.productionDateStart).toBeNull();
    expect(empty.filename).toBeNull();
    expect(found.get(odd.unicodeName!)!.name).toBe('Café São João — 農園 🌱');
    expect(found.get(odd.bowTie!)!.geometry).toBeTruthy();
  });
});
