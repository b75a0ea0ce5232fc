import { sql } from 'kysely';
import type { Warehouse } from './database.ts';

/** What the demo shows once its refresh is done: read from the BI views, as an analyst would. */
export interface DemoFigures {
  plots: number;
  suppliers: number;
  analyses: number;
  hectares: number;
  flaggedPlots: number;
  invalidGeometries: number;
  /** bi_eudr_plot_readiness: plots that would hold up in a due-diligence statement, and those that would not. */
  plotsReady: number;
  plotsNotReady: number;
  /** Whether the overlap checks ran (PostGIS). */
  overlapChecked: boolean;
  risk: Array<{
    supplier_name: string;
    commodity: string;
    country_code: string;
    plots: number;
    hectares: number;
    flagged_share: number;
  }>;
}

export async function demoFigures(db: Warehouse): Promise<DemoFigures> {
  const totals = await sql<{ plots: number; hectares: number; flagged: number; invalid: number }>`
    select plots::int, round(hectares::numeric, 1)::float8 as hectares, flagged_plots::int as flagged, invalid_geometries::int as invalid
    from bi_warehouse_totals`.execute(db);
  const suppliers = await sql<{
    n: number;
  }>`select count(*)::int as n from business_connections where role = 'supplier' and deleted_at is null`.execute(db);
  const analyses = await sql<{ n: number }>`select count(*)::int as n from analyses where deleted_at is null`.execute(
    db,
  );
  const risk = await sql<DemoFigures['risk'][number]>`
    select supplier_name, coalesce(commodity, '(none)') as commodity, country_code, plots::int, hectares::float8, flagged_share::float8
    from bi_risk_overview order by flagged_plots desc, plots desc limit 5`.execute(db);
  const readiness = await sql<{ ready: number; not_ready: number; overlap_checked: boolean }>`
    select count(*) filter (where ready)::int as ready, count(*) filter (where not ready)::int as not_ready,
           eudr_overlap_checked() as overlap_checked
    from bi_eudr_plot_readiness`.execute(db);
  const t = totals.rows[0]!;
  const r = readiness.rows[0]!;
  return {
    plots: t.plots,
    suppliers: suppliers.rows[0]!.n,
    analyses: analyses.rows[0]!.n,
    hectares: t.hectares,
    flaggedPlots: t.flagged,
    invalidGeometries: t.invalid,
    plotsReady: r.ready,
    plotsNotReady: r.not_ready,
    overlapChecked: r.overlap_checked,
    risk: risk.rows,
  };
}
