import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { sql } from 'kysely';
import { readFile } from 'node:fs/promises';
import { openWarehouse, type Warehouse } from '../../warehouse/database.ts';
import { migrateToLatest } from '../../warehouse/migrate.ts';
import { refreshSummaries } from '../../warehouse/analyst-summaries.ts';
import { createTestDatabase } from '../support/databases.ts';

// A small network written by hand, so every figure of the views is known:
// supplier S1 reaches P1 and P2, S2 reaches P2 (shared) and P3, and P6 (a link the last refresh missed,
// deletion deferred); S3 reaches nothing; P4 is an own plot; P5 is soft-deleted. P2 has two
// commodities. A buyer and a disconnected supplier are not suppliers.
const RUN = '00000000-0000-4000-8000-000000000010';

async function seed(db: Warehouse): Promise<void> {
  // One multi-statement text: sent without parameters.
  await sql
    .raw(`
    insert into businesses (id, name, address_country_code, address_country, is_caller, content_hash) values
      ('C', 'Caller Ltd', 'BE', 'Belgium', true, 'h'), ('S1', 'Alpha Cocoa', 'CI', 'Côte d''Ivoire', false, 'h'),
      ('S2', 'Beta Farms', 'GH', 'Ghana', false, 'h'), ('S3', 'Gamma Wood', 'BR', 'Brazil', false, 'h'),
      ('B1', 'A Buyer', 'NL', 'Netherlands', false, 'h'), ('S4', 'Gone Supplier', 'CI', 'Côte d''Ivoire', false, 'h');
    insert into business_connections (id, source_business_id, target_business_id, partner_business_id, role, plots_count, plots_commodities, created_at, content_hash, deleted_at) values
      ('c1', 'S1', 'C', 'S1', 'supplier', 2, '{cocoa,coffee}', '2024-01-10T00:00:00Z', 'h', null),
      ('c2', 'S2', 'C', 'S2', 'supplier', 5, '{cocoa,oil palm}', '2024-02-20T00:00:00Z', 'h', null),
      ('c3', 'S3', 'C', 'S3', 'supplier', 0, '{}', '2024-03-30T00:00:00Z', 'h', null),
      ('c4', 'C', 'B1', 'B1', 'buyer', 0, '{}', '2024-01-01T00:00:00Z', 'h', null),
      ('c5', 'S4', 'C', 'S4', 'supplier', 9, '{cocoa}', '2023-01-01T00:00:00Z', 'h', '2024-05-01T00:00:00Z');
    insert into plots (id, name, owner_id, is_own, country_code, commodities, area_ha, geometry, geometry_valid, geometry_issue,
                       risk_assessment_status, risk_level, most_recent_analysis_id, euforobs_analysis_id, precision_analysis_id,
                       content_hash, history_hash, deleted_at) values
      ('P1', 'North', 'S1', false, 'CI', '{cocoa}', 10, '{}', true, null, 'NEW', 'high', 'A1', 'A1', null, 'h', 'h', null),
      ('P2', 'Shared', 'S1', false, 'CI', '{cocoa,coffee}', 20, '{}', true, null, 'EUDR_COMPLIANT', 'low', 'A3', 'A2', 'A3', 'h', 'h', null),
      ('P3', 'Bow-tie', 'S2', false, 'GH', '{oil palm}', 3, '{}', false, 'self-intersection at [-1.5, 6.1]', 'In Risk Mitigation', null, null, null, null, 'h', 'h', null),
      ('P4', 'Home', 'C', true, 'BE', '{}', 7, '{}', true, null, 'SOMETHING_NEW', 'none', 'A4', 'A4', null, 'h', 'h', null),
      ('P5', 'Removed', 'S1', false, 'CI', '{cocoa}', 100, '{}', true, null, 'NEW', 'high', null, null, null, 'h', 'h', '2024-06-01T00:00:00Z'),
      ('P6', 'Unsure', 'S2', false, 'GH', '{cocoa}', 4.5, '{}', true, null, 'UNDER_REVIEW', 'medium', null, null, null, 'h', 'h', null);
    insert into plot_suppliers (plot_id, supplier_id, deleted_at, missing_since) values
      ('P1', 'S1', null, null), ('P2', 'S1', null, null), ('P2', 'S2', null, null), ('P3', 'S2', null, null),
      ('P6', 'S2', null, '2024-06-02T00:00:00Z'), ('P5', 'S1', '2024-06-01T00:00:00Z', null);
    insert into analyses (id, plot_id, type, status, risk_of_deforestation, deforested_area_m2, analysed_at, content_hash) values
      ('A1', 'P1', 'EUFOROBS', 'PENDING', null, null, null, 'h'),
      ('A2', 'P2', 'EUFOROBS', 'succeeded', 0.1, 100, '2024-04-01T00:00:00Z', 'h'),
      ('A3', 'P2', 'PRECISION', 'not started', 0.3, 50, '2024-05-01T00:00:00Z', 'h'),
      ('A4', 'P4', 'EUFOROBS', 'Weird Status', 0.9, 10, '2024-03-01T00:00:00Z', 'h');
    insert into sync_runs (id, status, started_at, finished_at) values ('${RUN}', 'succeeded', '2024-07-01T00:00:00Z', '2024-07-01T01:00:00Z');
    insert into sync_run_scopes (run_id, scope, kind, supplier_id, status, finished_at) values
      ('${RUN}', 'S1', 'supplier', 'S1', 'succeeded', '2024-07-01T00:30:00Z'),
      ('${RUN}', 'S2', 'supplier', 'S2', 'failed', '2024-07-01T00:40:00Z'),
      ('${RUN}', 'own-plots', 'own_plots', null, 'succeeded', '2024-07-01T00:10:00Z');
    insert into submission_batches (id, source) values ('00000000-0000-4000-8000-0000000000b1', 'shipments.ndjson');
    insert into transactions (key, batch_id, state, status) values
      ('k1', '00000000-0000-4000-8000-0000000000b1', 'available', 'AVAILABLE'),
      ('k2', '00000000-0000-4000-8000-0000000000b1', 'submitted', 'TO_SUBMIT'),
      ('k3', '00000000-0000-4000-8000-0000000000b1', 'submitted', 'Queued at EU');
  `)
    .execute(db);
}

describe('views for analysts', () => {
  let db: Warehouse;
  beforeAll(async () => {
    db = openWarehouse(await createTestDatabase('views'), 4);
    await migrateToLatest(db);
    await seed(db);
    // Written by hand, not by a refresh: the summaries made to agree as the end of a refresh makes them.
    await refreshSummaries(db);
  });
  afterAll(() => db?.destroy());

  it('have numbers that add up to the warehouse: per plot, and allocated where a plot counts in several rows', async () => {
    const {
      rows: [truth],
    } = await sql<{ plots: number; hectares: number; linked_plots: number; linked_hectares: number }>`
      select count(*) as plots, sum(area_ha) as hectares,
             count(*) filter (where exists (select 1 from plot_suppliers l where l.plot_id = p.id and l.deleted_at is null)) as linked_plots,
             sum(area_ha) filter (where exists (select 1 from plot_suppliers l where l.plot_id = p.id and l.deleted_at is null)) as linked_hectares
      from plots p where deleted_at is null`.execute(db);
    expect(truth).toEqual({ plots: 5, hectares: 44.5, linked_plots: 4, linked_hectares: 37.5 });

    const perPlot = await sql<{
      plots: number;
      hectares: number;
    }>`select count(*) as plots, sum(area_ha) as hectares from bi_current_plots`.execute(db);
    expect(perPlot.rows[0]).toEqual({ plots: truth!.plots, hectares: truth!.hectares });

    const totals = await sql<Record<string, number>>`select * from bi_warehouse_totals`.execute(db);
    expect(totals.rows[0]).toEqual({
      plots: 5,
      hectares: 44.5,
      plots_without_area: 0,
      own_plots: 1,
      supplier_plots: 4,
      shared_plots: 1,
      flagged_plots: 3,
      flagged_hectares: 17.5,
      invalid_geometries: 1,
      suppliers: 3,
      plots_announced: 7,
    });

    // The overview's rows overlap (P2 counts under two suppliers and two commodities): its plain sums are
    // too large, its allocated sums are the warehouse's.
    const overview = await sql<{
      plots: number;
      hectares: number;
      plots_allocated: number;
      hectares_allocated: number;
    }>`
      select sum(plots)::int as plots, sum(hectares) as hectares, sum(plots_allocated) as plots_allocated, sum(hectares_allocated) as hectares_allocated
      from bi_risk_overview`.execute(db);
    const o = overview.rows[0]!;
    expect(o.plots).toBe(8);
    expect(o.hectares).toBe(104.5);
    expect(o.plots_allocated).toBeCloseTo(truth!.plots, 9);
    expect(o.hectares_allocated).toBeCloseTo(truth!.hectares, 9);

    const suppliers = await sql<{ plots: number; plots_allocated: number; hectares_allocated: number }>`
      select sum(plots)::int as plots, sum(plots_allocated) as plots_allocated, sum(hectares_allocated) as hectares_allocated from bi_suppliers`.execute(
      db,
    );
    const s = suppliers.rows[0]!;
    expect(s.plots).toBe(5);
    expect(s.plots_allocated).toBeCloseTo(truth!.linked_plots, 9);
    expect(s.hectares_allocated).toBeCloseTo(truth!.linked_hectares, 9);
  });

  it('give one row per direct supplier: announced against held, hectares, commodities, risk, analyses, last seen', async () => {
    const { rows } = await sql<
      Record<string, unknown>
    >`select * from bi_suppliers order by supplier_business_id`.execute(db);
    expect(rows.map((r) => r['supplier_business_id'])).toEqual(['S1', 'S2', 'S3']);
    const [s1, s2, s3] = rows;
    expect(s1).toMatchObject({
      supplier_name: 'Alpha Cocoa',
      country_code: 'CI',
      country: "Côte d'Ivoire",
      connection_id: 'c1',
      connected_at: new Date('2024-01-10T00:00:00Z'),
      plots_announced: 2,
      commodities_announced: ['cocoa', 'coffee'],
      plots: 2,
      plots_difference: 0,
      plots_deletion_deferred: 0,
      plots_shared: 1,
      plots_allocated: 1.5,
      hectares: 30,
      hectares_allocated: 20,
      commodities: ['cocoa', 'coffee'],
      plot_country_codes: ['CI'],
      flagged_plots: 1,
      flagged_hectares: 10,
      plots_risk_high: 1,
      plots_risk_low: 1,
      plots_risk_medium: 0,
      plots_risk_none: 0,
      plots_risk_not_assessed: 0,
      plots_risk_other: 0,
      plots_status_new: 1,
      plots_status_eudr_compliant: 1,
      plots_status_other: 0,
      plots_analysis_succeeded: 0,
      plots_analysis_in_progress: 2,
      plots_analysis_failed: 0,
      plots_analysis_other: 0,
      plots_not_analysed: 0,
      plots_with_precision: 1,
      max_risk_of_deforestation: 0.3,
      deforested_area_m2: 50,
      last_analysed_at: new Date('2024-05-01T00:00:00Z'),
      invalid_geometries: 0,
      last_seen_at: new Date('2024-07-01T00:30:00Z'),
    });
    expect(s2).toMatchObject({
      supplier_name: 'Beta Farms',
      plots_announced: 5,
      plots: 3,
      plots_difference: 2,
      plots_deletion_deferred: 1,
      plots_shared: 1,
      hectares: 27.5,
      hectares_allocated: 17.5,
      commodities: ['cocoa', 'coffee', 'oil palm'],
      plot_country_codes: ['CI', 'GH'],
      flagged_plots: 2,
      flagged_hectares: 7.5,
      plots_risk_medium: 1,
      plots_risk_not_assessed: 1,
      plots_status_in_risk_mitigation: 1,
      plots_status_under_review: 1,
      plots_not_analysed: 2,
      invalid_geometries: 1,
      // Its only read failed: it was never read completely.
      last_seen_at: null,
    });
    expect(s3).toMatchObject({
      supplier_name: 'Gamma Wood',
      plots_announced: 0,
      plots: 0,
      hectares: 0,
      plots_allocated: 0,
      commodities: [],
      max_risk_of_deforestation: null,
    });
  });

  it('expose statuses in one vocabulary, keep what the service sent, and keep unknown values', async () => {
    const plots = await sql<Record<string, unknown>>`
      select plot_id, risk_assessment_status, risk_assessment_status_raw, risk_level, flagged, most_recent_analysis_status, most_recent_analysis_status_raw, precision_status
      from bi_current_plots order by plot_id`.execute(db);
    expect(plots.rows).toEqual([
      {
        plot_id: 'P1',
        risk_assessment_status: 'new',
        risk_assessment_status_raw: 'NEW',
        risk_level: 'high',
        flagged: true,
        most_recent_analysis_status: 'pending',
        most_recent_analysis_status_raw: 'PENDING',
        precision_status: null,
      },
      {
        plot_id: 'P2',
        risk_assessment_status: 'eudr_compliant',
        risk_assessment_status_raw: 'EUDR_COMPLIANT',
        risk_level: 'low',
        flagged: false,
        most_recent_analysis_status: 'not_started',
        most_recent_analysis_status_raw: 'not started',
        precision_status: 'not_started',
      },
      {
        plot_id: 'P3',
        risk_assessment_status: 'in_risk_mitigation',
        risk_assessment_status_raw: 'In Risk Mitigation',
        risk_level: null,
        flagged: true,
        most_recent_analysis_status: null,
        most_recent_analysis_status_raw: null,
        precision_status: null,
      },
      {
        plot_id: 'P4',
        risk_assessment_status: 'something_new',
        risk_assessment_status_raw: 'SOMETHING_NEW',
        risk_level: 'none',
        flagged: false,
        most_recent_analysis_status: 'weird_status',
        most_recent_analysis_status_raw: 'Weird Status',
        precision_status: null,
      },
      {
        plot_id: 'P6',
        risk_assessment_status: 'under_review',
        risk_assessment_status_raw: 'UNDER_REVIEW',
        risk_level: 'medium',
        flagged: true,
        most_recent_analysis_status: null,
        most_recent_analysis_status_raw: null,
        precision_status: null,
      },
    ]);
    const pipeline = await sql<{ status: string; status_raw: string; transactions: number }>`
      select status, status_raw, transactions from bi_transaction_pipeline order by status`.execute(db);
    expect(pipeline.rows).toEqual([
      { status: 'available', status_raw: 'AVAILABLE', transactions: 1 },
      { status: 'queued_at_eu', status_raw: 'Queued at EU', transactions: 1 },
      { status: 'to_submit', status_raw: 'TO_SUBMIT', transactions: 1 },
    ]);
    const normalised = await sql<{
      v: string | null;
    }>`select normalise_status(x) as v from unnest(array[' Under  review ', 'oil-palm', '', null]) as x`.execute(db);
    expect(normalised.rows.map((r) => r.v)).toEqual(['under_review', 'oil_palm', null, null]);
  });

  it('name every id after what it refers to: plot_id, supplier_business_id, owner_business_id', async () => {
    const { rows } = await sql<{ table_name: string; column_name: string }>`
      select table_name, column_name from information_schema.columns
      where table_schema = 'public' and table_name in (select table_name from information_schema.views where table_schema = 'public')
        and (column_name ~ '(^|_)ids?$' or column_name = 'name')`.execute(db);
    const unqualified = rows.filter((r) => ['id', 'ids', 'name', 'supplier_id', 'owner_id'].includes(r.column_name));
    expect(unqualified).toEqual([]);
    expect(
      rows
        .filter((r) => r.table_name === 'bi_current_plots')
        .map((r) => r.column_name)
        .sort(),
    ).toEqual([
      'euforobs_analysis_id',
      'most_recent_analysis_id',
      'owner_business_id',
      'plot_id',
      'precision_analysis_id',
      'supplier_business_ids',
    ]);
  });

  it('comment every table, view and column', async () => {
    const { rows } = await sql<{ object: string }>`
      select c.relname as object from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = 'public' and c.relkind in ('r', 'v', 'm', 'p', 'f') and coalesce(obj_description(c.oid, 'pg_class'), '') = ''
      union all
      select c.relname || '.' || a.attname from pg_class c join pg_namespace n on n.oid = c.relnamespace
      join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
      where n.nspname = 'public' and c.relkind in ('r', 'v', 'm', 'p', 'f') and coalesce(col_description(c.oid, a.attnum), '') = ''
      order by 1`.execute(db);
    expect(rows.map((r) => r.object)).toEqual([]);
  });

  it('are each listed in docs/warehouse.md, as are the tables', async () => {
    // The warehouse's reference moved out of the README into docs/warehouse.md (the README links to it).
    const doc = await readFile(new URL('../../docs/warehouse.md', import.meta.url), 'utf8');
    const listed = (heading: string) => {
      const start = doc.indexOf(`\n${heading}\n`);
      expect(start, `${heading} in docs/warehouse.md`).toBeGreaterThan(-1);
      const table = doc.slice(start, doc.indexOf('\n\n', doc.indexOf('|', start)));
      // First cell of each row: `name` or `a`, `b`.
      return table
        .split('\n')
        .filter((l) => l.startsWith('| `'))
        .flatMap((l) => [...l.split('|')[1]!.matchAll(/`([a-z_0-9]+)`/g)].map((m) => m[1]!))
        .sort();
    };
    const views = await sql<{
      name: string;
    }>`select table_name as name from information_schema.views where table_schema = 'public' order by 1`.execute(db);
    expect(listed('## Views for analysts')).toEqual(views.rows.map((r) => r.name).sort());
    const tables = await sql<{ name: string }>`
      select table_name as name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE' order by 1`.execute(
      db,
    );
    expect(listed('## Tables')).toEqual(tables.rows.map((r) => r.name).sort());
  });
});
