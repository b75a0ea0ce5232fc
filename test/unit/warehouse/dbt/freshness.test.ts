import { describe, expect, it } from 'vitest';
import { freshnessAge, freshnessThresholds, refreshedRelations } from '../../../../warehouse/dbt/freshness.ts';
import { fixtureCatalog } from './catalog-fixture.ts';

describe('freshness of the dbt sources', () => {
  it('warns after two refresh intervals and errors after four, in the largest period dbt has that fits', () => {
    expect(freshnessThresholds(6 * 3_600_000)).toEqual({
      warnAfter: { count: 12, period: 'hour' },
      errorAfter: { count: 1, period: 'day' },
    });
    expect(freshnessThresholds(30 * 60_000)).toEqual({
      warnAfter: { count: 1, period: 'hour' },
      errorAfter: { count: 2, period: 'hour' },
    });
    expect(freshnessThresholds(45 * 60_000).warnAfter).toEqual({ count: 90, period: 'minute' });
    expect(freshnessAge(90_500)).toEqual({ count: 2, period: 'minute' });
    expect(() => freshnessThresholds(30_000)).toThrow('the refresh interval must be at least a minute, got 30000 ms');
    expect(() => freshnessThresholds(Number.NaN)).toThrow(/at least a minute/);
  });

  it('is checked on what a refresh keeps current: the mirrored tables, the run ledger, and views reading them at any depth', () => {
    const catalog = fixtureCatalog();
    expect([...refreshedRelations(catalog)].sort()).toEqual([
      'analyses',
      'bi_current_plots',
      'bi_sync_health',
      'bi_warehouse_totals',
      'plot_history',
      'plot_species',
      'plots',
      'sync_runs',
    ]);
    // A view that reads only what a submission writes is not.
    catalog.relations.find((r) => r.name === 'bi_transaction_pipeline')!.reads.push('bi_warehouse_totals');
    expect(refreshedRelations(catalog).has('bi_transaction_pipeline')).toBe(true);
  });
});
