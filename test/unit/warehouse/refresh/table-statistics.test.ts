import { describe, expect, it } from 'vitest';
import { analysedColumns, tablesOfPart, tablesToAnalyze } from '../../../../warehouse/refresh/table-statistics.ts';

const row = (inserted: number, updated = 0, deleted = 0) => ({ inserted, updated, unchanged: 0, deleted });

describe('which tables a refresh analyses', () => {
  it('every table a first load wrote, since none has statistics yet', () => {
    const counts = { plots: row(20_000), plot_suppliers: row(26_303), eudr_findings: row(14_014), businesses: row(13) };
    expect(tablesToAnalyze(counts, new Map())).toEqual([
      'businesses',
      'plots',
      'plot_suppliers',
      // Kept from plot_suppliers by its triggers: the views' supplier filter is planned on it.
      'plot_supplier_ids',
      'eudr_findings',
    ]);
    const neverAnalysed = new Map([['plots', -1]]);
    expect(tablesToAnalyze({ plots: row(1) }, neverAnalysed)).toEqual(['plots']);
  });

  it("a table changed by at least 50 rows plus a tenth of it (autovacuum's rule), deletions and updates included", () => {
    const estimated = new Map([
      ['plots', 100_000],
      ['plot_suppliers', 130_000],
      ['plot_history', 100_000],
    ]);
    const counts = {
      plots: row(5_000, 5_050),
      plot_suppliers: row(0, 0, 13_049),
      plot_history: row(0, 0, 0),
    };
    expect(tablesToAnalyze(counts, estimated)).toEqual(['plots']);
    expect(tablesToAnalyze({ plot_suppliers: row(0, 0, 13_050) }, estimated)).toEqual([
      'plot_suppliers',
      'plot_supplier_ids',
    ]);
  });

  it('nothing after a refresh that wrote nothing, and nothing outside the mirrored tables', () => {
    expect(tablesToAnalyze({ plots: { inserted: 0, updated: 0, unchanged: 20_000, deleted: 0 } }, new Map())).toEqual(
      [],
    );
    expect(tablesToAnalyze({ 'plots; drop table plots': row(10) }, new Map())).toEqual([]);
  });

  it('gathers statistics on keys, states, codes and dates, not on JSON, hashes or free text', () => {
    const plots = [
      { name: 'id', type: 'text' },
      { name: 'name', type: 'text' },
      { name: 'country_code', type: 'text' },
      { name: 'commodities', type: 'ARRAY' },
      { name: 'geometry', type: 'jsonb' },
      { name: 'geometry_issue', type: 'text' },
      { name: 'risk_level', type: 'text' },
      { name: 'content_hash', type: 'text' },
      { name: 'history_hash', type: 'text' },
      { name: 'deleted_at', type: 'timestamp with time zone' },
    ];
    expect(analysedColumns(plots)).toEqual(['id', 'country_code', 'commodities', 'risk_level', 'deleted_at']);
    expect(
      analysedColumns([
        { name: 'message', type: 'text' },
        { name: 'code', type: 'text' },
      ]),
    ).toEqual(['code']);
  });

  it('analyses first the tables the end of a run plans over, the others beside it', () => {
    const tables = [
      'businesses',
      'plots',
      'plot_suppliers',
      'plot_supplier_ids',
      'analyses',
      'plot_history',
      'eudr_findings',
    ];
    expect(tablesOfPart(tables, 'planned')).toEqual([
      'plots',
      'plot_suppliers',
      'plot_supplier_ids',
      'analyses',
      'eudr_findings',
    ]);
    expect(tablesOfPart(tables, 'others')).toEqual(['businesses', 'plot_history']);
  });
});
