import { describe, expect, it } from 'vitest';
import type { CreateTransactionInput } from '../../../../schema/upstream.ts';
import {
  applyPolicy,
  describeFreshness,
  EU_LIMITS,
  judgeRow,
  type Freshness,
  type PlotFacts,
} from '../../../../domain/submission/readiness-rules.ts';

const fresh: Freshness = { state: 'fresh', asOf: new Date('2026-11-25T10:00:00Z') };
const plot = (id: string, o: Partial<PlotFacts> = {}): PlotFacts => ({
  id,
  ready: true,
  blockingCodes: [],
  producer: `owner-${id}|BR`,
  featureBytes: 100,
  ...o,
});
const row = (components: CreateTransactionInput['components']): CreateTransactionInput => ({
  activityType: 'IMPORT',
  countryOfActivity: 'NL',
  components,
});
const supplierComponent = (supplierBusinessId: string, extra: Record<string, unknown> = {}) =>
  ({ hsn: '1801', quantity: 1, unit: 'KGM', supplierBusinessId, ...extra }) as never;

describe('the readiness gate, a row at a time', () => {
  const plots: Record<string, PlotFacts[]> = {
    good: [plot('p1'), plot('p2')],
    bad: [plot('p3'), plot('p4', { ready: false, blockingCodes: ['deforestation_detected'] })],
  };
  const plotsOf = (id: string) => plots[id];

  it('finds nothing in a row whose supplier brings only ready plots', () => {
    expect(judgeRow(row([supplierComponent('good')]), plotsOf, fresh)).toEqual([]);
  });

  it('names the supplier field, the plots and their codes of a supplier that brings a plot not ready, and block refuses it', () => {
    const issues = judgeRow(row([supplierComponent('good'), supplierComponent('bad')]), plotsOf, fresh);
    expect(issues).toEqual([
      {
        field: 'components[1].supplierBusinessId',
        code: 'plots_not_ready',
        blocks: true,
        rule: 'supplier bad brings 1 plot of 2 not ready for a statement: p4 (deforestation_detected)',
      },
    ]);
    expect(applyPolicy('block', issues)).toEqual({
      refuse: [{ field: 'components[1].supplierBusinessId', rule: `readiness gate: ${issues[0]!.rule}` }],
      warnings: [],
    });
    expect(applyPolicy('warn', issues)).toEqual({
      refuse: [],
      warnings: [{ field: 'components[1].supplierBusinessId', code: 'plots_not_ready', rule: issues[0]!.rule }],
    });
    expect(applyPolicy('off', issues)).toEqual({ refuse: [], warnings: [] });
  });

  it('judges only the plots a component names with plotIds, and warns of a named plot it does not know', () => {
    expect(judgeRow(row([supplierComponent('bad', { plotIds: ['p3'] })]), plotsOf, fresh)).toEqual([]);
    const issues = judgeRow(row([supplierComponent('bad', { plotIds: ['p3', 'nope'] })]), plotsOf, fresh);
    expect(issues.map((i) => [i.field, i.code, i.blocks])).toEqual([['components[0].plotIds', 'plot_unknown', false]]);
  });

  it('lists five plots and counts the rest', () => {
    const many = Array.from({ length: 12 }, (_, i) =>
      plot(`x${i}`, { ready: false, blockingCodes: ['analysis_missing'] }),
    );
    const [issue] = judgeRow(row([supplierComponent('many')]), () => many, fresh);
    expect(issue!.rule).toMatch(/brings 12 plots of 12 not ready.*x4 \(analysis_missing\); and 7 more plots$/);
  });

  it('warns, never refuses, on what it cannot know: an unknown supplier, stale or missing data', () => {
    const unknown = judgeRow(row([supplierComponent('who')]), plotsOf, fresh);
    expect(unknown.map((i) => [i.field, i.code, i.blocks])).toEqual([
      ['components[0].supplierBusinessId', 'supplier_unknown', false],
    ]);
    expect(applyPolicy('block', unknown).refuse).toEqual([]);
    const stale: Freshness = { state: 'stale', asOf: new Date('2026-11-20T00:00:00Z'), maxAgeMs: 12 * 3_600_000 };
    expect(judgeRow(row([supplierComponent('good')]), plotsOf, stale).map((i) => [i.code, i.blocks])).toEqual([
      ['data_stale', false],
    ]);
    expect(judgeRow(row([supplierComponent('who')]), () => undefined, { state: 'never' }).map((i) => i.code)).toEqual([
      'data_never_refreshed',
    ]);
    // A row of DDS references brings no plots of ours: nothing to say of the data.
    const declared = row([
      {
        hsn: '1801',
        quantity: 1,
        unit: 'KGM',
        ddsReferences: [{ id: '24DKYIGLPU3439', verificationNumber: '4NAB3QYM' }],
      },
    ]);
    expect(judgeRow(declared, () => undefined, { state: 'never' })).toEqual([]);
  });

  it('says plainly when the data is stale or missing', () => {
    const now = new Date('2026-11-25T12:00:00Z');
    expect(describeFreshness({ state: 'never' }, now)).toMatch(/never been refreshed.*cannot vouch/);
    expect(
      describeFreshness({ state: 'stale', asOf: new Date('2026-11-24T10:00:00Z'), maxAgeMs: 12 * 3_600_000 }, now),
    ).toMatch(/last refresh finished 26 h ago .*more than DDSYNC_SUBMIT_MAX_DATA_AGE \(12 h\)/);
    expect(describeFreshness(fresh, now)).toBeNull();
  });
});

describe("the EU's per-statement limits, with small limits", () => {
  const limits = { geolocationBytes: 2_000, producersPerCommodity: 2, producersPerStatement: 3 };
  const threeProducers = [plot('a'), plot('b'), plot('c')];

  it('refuses a commodity with more producers than the limit, naming its hsn field', () => {
    const issues = judgeRow(row([supplierComponent('s')]), () => threeProducers, fresh, limits);
    expect(issues.map((i) => [i.field, i.code, i.blocks])).toEqual([
      ['components[0].hsn', 'too_many_producers_per_commodity', true],
    ]);
    expect(issues[0]!.rule).toBe(
      'brings 3 producers for this commodity; the EU takes at most 2 per commodity in one statement: split the row',
    );
  });

  it('counts producers once per commodity but again in another commodity, against the statement limit', () => {
    const two = [plot('a'), plot('b')];
    const sameHeading = row([supplierComponent('s'), supplierComponent('s')]);
    expect(judgeRow(sameHeading, () => two, fresh, limits)).toEqual([]);
    const twoHeadings = row([supplierComponent('s'), supplierComponent('s', { hsn: '4001' })]);
    expect(judgeRow(twoHeadings, () => two, fresh, limits).map((i) => [i.field, i.code])).toEqual([
      ['components', 'too_many_producers_per_statement'],
    ]);
  });

  it('measures the geolocation as base64 of each producer collection, and refuses past the limit', () => {
    // One producer, 10 features of 200 bytes: 2,000 + 9 commas + 42 bytes of collection → 2,051 → base64 2,736.
    const big = Array.from({ length: 10 }, (_, i) => plot(`g${i}`, { producer: 'one|BR', featureBytes: 200 }));
    const issues = judgeRow(row([supplierComponent('s')]), () => big, fresh, { ...limits, producersPerCommodity: 9 });
    expect(issues.map((i) => [i.field, i.code, i.blocks])).toEqual([['components', 'geolocation_too_large', true]]);
    const under = judgeRow(row([supplierComponent('s')]), () => big, fresh, {
      ...limits,
      producersPerCommodity: 9,
      geolocationBytes: 2_736,
    });
    expect(under).toEqual([]);
  });

  it("keeps the EU's own figures as the defaults", () => {
    expect(EU_LIMITS).toEqual({
      geolocationBytes: 25_000_000,
      producersPerCommodity: 1000,
      producersPerStatement: 10_000,
    });
  });
});
