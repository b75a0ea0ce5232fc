import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { sql } from 'kysely';
import pg from 'pg';
import { openWarehouse, type Warehouse } from '../../warehouse/database.ts';
import { migrateToLatest } from '../../warehouse/migrate.ts';
import { createTestDatabase } from '../support/databases.ts';

// plot_supplier_ids (migration 0035) holds each plot's live links as one sorted array, kept by triggers
// on plot_suppliers; bi_current_plots and bi_eudr_plot_readiness read supplier_business_ids from it, so
// that `'<id>' = any(supplier_business_ids)` is tested on its rows before any plot is read
// (docs/analyst-views.md). These tests check that the table follows every kind of write to the links,
// and, without timing anything, that the filter is still tested there in the plan Postgres picks.

/** What plot_supplier_ids must hold: the live links, aggregated (rows with an empty array are allowed). */
async function drift(db: Warehouse): Promise<unknown[]> {
  const { rows } = await sql<{ plot_id: string; stored: string[] | null; live: string[] | null }>`
    with live as (
      select plot_id, array_agg(supplier_id order by supplier_id) as ids
      from plot_suppliers where deleted_at is null group by plot_id
    )
    select coalesce(s.plot_id, l.plot_id) as plot_id, s.supplier_ids as stored, l.ids as live
    from plot_supplier_ids s full join live l on l.plot_id = s.plot_id
    where coalesce(s.supplier_ids, '{}') is distinct from coalesce(l.ids, '{}')
    order by 1`.execute(db);
  return rows;
}

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  Filter?: string;
  Plans?: PlanNode[];
}

function nodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)];
}

async function planOf(db: Warehouse, query: string): Promise<PlanNode[]> {
  const { rows } = await sql<{
    'QUERY PLAN': [{ Plan: PlanNode }];
  }>`${sql.raw(`explain (format json) ${query}`)}`.execute(db);
  return nodes(rows[0]!['QUERY PLAN'][0].Plan);
}

describe('plot_supplier_ids and the per-plot views filtered by a supplier', () => {
  let url: string;
  let db: Warehouse;
  beforeAll(async () => {
    url = await createTestDatabase('supplier_filter');
    db = openWarehouse(url, 4);
    await migrateToLatest(db);
  });
  afterAll(() => db?.destroy());

  it('follows the links through inserts, links coming back, soft and hard deletes and truncation', async () => {
    await sql
      .raw(`
      insert into plot_suppliers (plot_id, supplier_id) values ('P1', 'S2'), ('P1', 'S1'), ('P2', 'S1'), ('P3', 'S3');
      insert into plot_suppliers (plot_id, supplier_id, deleted_at) values ('P4', 'S1', now());
    `)
      .execute(db);
    expect(await drift(db)).toEqual([]);
    const { rows: first } = await sql<{
      plot_id: string;
      supplier_ids: string[];
    }>`select plot_id, supplier_ids from plot_supplier_ids order by plot_id`.execute(db);
    expect(first).toEqual([
      { plot_id: 'P1', supplier_ids: ['S1', 'S2'] },
      { plot_id: 'P2', supplier_ids: ['S1'] },
      { plot_id: 'P3', supplier_ids: ['S3'] },
    ]);

    // The refresh's link statement (warehouse/refresh/plot-writer.ts): new links and one coming back.
    await sql`
      insert into plot_suppliers (plot_id, supplier_id)
      select id, 'S1' from unnest(array['P3', 'P4', 'P5']) as id
      on conflict (plot_id, supplier_id) do update set deleted_at = null, changed_at = now() where plot_suppliers.deleted_at is not null`.execute(
      db,
    );
    expect(await drift(db)).toEqual([]);
    // The sweep's: deletion deferred (no change of liveness), then links proved gone.
    await sql`update plot_suppliers set missing_since = now() where supplier_id = 'S1'`.execute(db);
    await sql`update plot_suppliers set deleted_at = now(), missing_since = null where supplier_id = 'S1' and plot_id in ('P1', 'P2')`.execute(
      db,
    );
    expect(await drift(db)).toEqual([]);
    const {
      rows: [p2],
    } = await sql<{ supplier_ids: string[] }>`select supplier_ids from plot_supplier_ids where plot_id = 'P2'`.execute(
      db,
    );
    expect(p2!.supplier_ids).toEqual([]);
    // A key changed, rows deleted outright, then everything.
    await sql`update plot_suppliers set supplier_id = 'S9' where plot_id = 'P3' and supplier_id = 'S3'`.execute(db);
    await sql`delete from plot_suppliers where plot_id = 'P1'`.execute(db);
    expect(await drift(db)).toEqual([]);
    await sql`truncate plot_suppliers`.execute(db);
    const { rows: left } = await sql<{ n: number }>`select count(*)::int as n from plot_supplier_ids`.execute(db);
    expect(left).toEqual([{ n: 0 }]);
  });

  it('keeps both links of a plot that two transactions link at once, each to its own supplier', async () => {
    const first = new pg.Client({ connectionString: url });
    const second = new pg.Client({ connectionString: url });
    await first.connect();
    await second.connect();
    try {
      await first.query('begin');
      await second.query('begin');
      await first.query(`insert into plot_suppliers (plot_id, supplier_id) values ('Q1', 'S1')`);
      // Waits for the first to commit (its row of Q1 in plot_supplier_ids), then adds to what it committed.
      const waiting = second.query(`insert into plot_suppliers (plot_id, supplier_id) values ('Q1', 'S2')`);
      await new Promise((resolve) => setTimeout(resolve, 200));
      await first.query('commit');
      await waiting;
      await second.query('commit');
    } finally {
      await first.end();
      await second.end();
    }
    const { rows } = await sql<{
      supplier_ids: string[];
    }>`select supplier_ids from plot_supplier_ids where plot_id = 'Q1'`.execute(db);
    expect(rows).toEqual([{ supplier_ids: ['S1', 'S2'] }]);
    expect(await drift(db)).toEqual([]);
  });

  it('has the views test a filter on supplier_business_ids on plot_supplier_ids, in a plan with statistics', async () => {
    // A warehouse shaped like a refresh leaves it: 20,000 plots with a polygon of 40 points each (a row
    // of about 1 kB, as the simulator's), stored supplier by supplier (ten of them, the largest a fifth
    // of the plots), a tenth reached through two, 1 % own plots, statistics.
    await sql
      .raw(`
      truncate plot_suppliers, plots;
      insert into plots (id, name, owner_id, is_own, country_code, commodities, area_ha, geometry, geometry_valid,
                         risk_assessment_status, risk_level, content_hash, history_hash)
      select 'plot-' || md5(i::text), 'Plot ' || i, case when i > 19800 then 'C' else 'S' || (i / 2000) end, i > 19800,
             (array['BR', 'CI', 'GH', 'ID', 'CO'])[1 + (i / 4000)], '{cocoa}', 1 + i % 7,
             jsonb_build_object('type', 'Polygon', 'coordinates', jsonb_build_array(
               (select jsonb_agg(jsonb_build_array(round(-50 + i * 0.0001 + k * 0.001, 6), round(-10 + k * 0.0007, 6)))
                from generate_series(1, 40) as k))), true,
             'NEW', 'low', 'h', 'h'
      from generate_series(0, 19999) as i;
      insert into plot_suppliers (plot_id, supplier_id)
      select 'plot-' || md5(i::text), 'S' || case when i < 4000 then 0 else i / 2000 end
      from generate_series(0, 19800) as i
      union all
      select 'plot-' || md5(i::text), 'S9' from generate_series(0, 19800, 10) as i where i / 2000 <> 9;
      analyze plots;
      analyze plot_suppliers;
      analyze plot_supplier_ids;
    `)
      .execute(db);
    expect(await drift(db)).toEqual([]);
    for (const view of ['bi_current_plots', 'bi_eudr_plot_readiness']) {
      for (const supplier of ['S0', 'S5']) {
        const plan = await planOf(
          db,
          `select * from ${view} where '${supplier}' = any(supplier_business_ids) limit 1000`,
        );
        const filtered = plan.filter(
          (n) => n['Relation Name'] === 'plot_supplier_ids' && /ANY \(supplier_ids\)/.test(n.Filter ?? ''),
        );
        expect(filtered, `${view}, ${supplier}: the filter on plot_supplier_ids`).toHaveLength(1);
        // plots is read once, joined to the rows kept (by key or by a hash of them, as the planner
        // finds cheaper): the branch of the plots without supplier ids is gone from the plan.
        const plotReads = plan.filter((n) => n['Relation Name'] === 'plots');
        expect(plotReads, `${view}, ${supplier}: reads of plots`).toHaveLength(1);
      }
      const { rows } = await sql<{ n: number; truth: number }>`
        select (select count(*)::int from ${sql.table(view)} where 'S9' = any(supplier_business_ids)) as n,
               (select count(*)::int from plot_suppliers where supplier_id = 'S9' and deleted_at is null) as truth`.execute(
        db,
      );
      expect(rows).toEqual([{ n: 3601, truth: 3601 }]);
    }
  });
});
