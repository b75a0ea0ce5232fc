import { sql } from 'kysely';
import type { Row, Warehouse } from '../database.ts';

// What `ddsync report` reads: the readiness views (docs/eudr-readiness.md), with the country risk they
// carry (docs/country-risk.md), and the plots' GeoJSON.
// Queries only; the picture is drawn elsewhere (report/).

/** One current finding of a plot, as bi_eudr_plot_readiness.findings holds it. */
export interface ReportFinding {
  code: string;
  severity: 'blocking' | 'warning' | 'info';
  message: string;
}

/** One current plot: bi_eudr_plot_readiness joined with its GeoJSON. */
export interface ReportPlotRow {
  plotId: string;
  plotName: string | null;
  supplierIds: string[];
  countryCode: string | null;
  commodities: string[];
  areaHa: number | null;
  /** null: readiness unknown (the view has no answer for it). */
  ready: boolean | null;
  findings: ReportFinding[];
  /** Risk level in force of the country of production (low, standard, high, unknown); null without a country. */
  countryRiskLevel: string | null;
  /** As the service sent it (GeoJSON, possibly invalid); null when the plot has none. */
  geometry: unknown;
}

/** One row of bi_eudr_supplier_readiness. */
export interface ReportSupplierRow {
  supplierId: string;
  supplierName: string;
  plots: number;
  plotsReady: number;
  plotsNotReady: number;
  hectares: number;
  hectaresReady: number;
  shareReady: number | null;
  topReasons: Array<{ code: string; plots: number }>;
  /** The highest country risk level of its plots (high, unknown, standard, low); null without plots. */
  countryRiskLevel: string | null;
  /** Plots in a low-risk country. */
  plotsCountryRiskLow: number;
  /** Every plot in a low-risk country (Art. 13, subject to the operator's assessment); null without plots. */
  simplifiedDueDiligenceEligible: boolean | null;
}

/** What the report says about the warehouse as a whole. */
export interface ReportHeader {
  /** Whether the overlap checks ran (eudr_overlap_checked(): false without PostGIS). */
  overlapChecked: boolean;
  /** When the latest refresh that ended (succeeded or partial) finished; null before the first. */
  lastRefreshAt: string | null;
  lastRefreshStatus: string | null;
}

export async function readReportHeader(db: Warehouse): Promise<ReportHeader> {
  const {
    rows: [row],
  } = await sql<Pick<Row<'sync_runs'>, 'finished_at'> & { overlap_checked: boolean; status: string | null }>`
    select eudr_overlap_checked() as overlap_checked, r.finished_at, r.status
    from (select 1) one
    left join lateral (
      select finished_at, status from sync_runs
      where kind = 'refresh' and finished_at is not null and status in ('succeeded', 'partial')
      order by finished_at desc limit 1
    ) r on true`.execute(db);
  return {
    overlapChecked: row!.overlap_checked,
    lastRefreshAt: row!.finished_at ? row!.finished_at.toISOString() : null,
    lastRefreshStatus: row!.status,
  };
}

/** The suppliers, most plots not ready first; only `supplierId`'s row when given. */
export async function readReportSuppliers(db: Warehouse, supplierId?: string): Promise<ReportSupplierRow[]> {
  const { rows } = await sql<
    Pick<
      Row<'bi_eudr_supplier_readiness'>,
      'share_ready' | 'country_risk_level' | 'simplified_due_diligence_eligible'
    > & {
      supplier_business_id: string;
      supplier_name: string;
      plots: number;
      plots_ready: number;
      plots_not_ready: number;
      hectares: number;
      hectares_ready: number;
      top_reasons: Array<{ code: string; plots: number }>;
      plots_country_risk_low: number;
    }
  >`
    select supplier_business_id, supplier_name, plots, plots_ready, plots_not_ready, hectares, hectares_ready,
           share_ready, top_reasons, country_risk_level, plots_country_risk_low, simplified_due_diligence_eligible
    from bi_eudr_supplier_readiness
    where ${supplierId === undefined ? sql`true` : sql`supplier_business_id = ${supplierId}`}
    order by plots_not_ready desc, plots desc, supplier_name, supplier_business_id`.execute(db);
  return rows.map((r) => ({
    supplierId: r.supplier_business_id,
    supplierName: r.supplier_name,
    plots: r.plots,
    plotsReady: r.plots_ready,
    plotsNotReady: r.plots_not_ready,
    hectares: r.hectares,
    hectaresReady: r.hectares_ready,
    shareReady: r.share_ready,
    topReasons: r.top_reasons,
    countryRiskLevel: r.country_risk_level,
    plotsCountryRiskLow: r.plots_country_risk_low,
    simplifiedDueDiligenceEligible: r.simplified_due_diligence_eligible,
  }));
}

/** Rows per fetch: a page of plots with their GeoJSON is a few megabytes at most. */
const PAGE = 5_000;

/**
 * Every current plot (or those reached through `supplierId`) in plot id order, handed to `onPage`
 * a page at a time through a cursor: one execution of the view (which aggregates every plot's
 * findings), yet a report of a million plots never holds all their GeoJSON at once.
 */
export async function readReportPlots(
  db: Warehouse,
  supplierId: string | undefined,
  onPage: (rows: ReportPlotRow[]) => void,
): Promise<void> {
  // A cursor lives in a transaction, on one connection; read only, it locks nothing a refresh needs.
  await db.transaction().execute(async (trx) => {
    await sql`set transaction read only`.execute(trx);
    await sql`
      declare report_plots no scroll cursor for
      select r.plot_id, r.plot_name, r.supplier_business_ids, r.country_code, r.commodities, r.area_ha::float8 as area_ha,
             r.ready, r.findings, r.country_risk_level, p.geometry
      from bi_eudr_plot_readiness r
      join plots p on p.id = r.plot_id
      where ${supplierId === undefined ? sql`true` : sql`${supplierId} = any (r.supplier_business_ids)`}
      order by r.plot_id`.execute(trx);
    for (;;) {
      const { rows } = await sql<PlotQueryRow>`fetch ${sql.raw(String(PAGE))} from report_plots`.execute(trx);
      if (rows.length === 0) break;
      onPage(
        rows.map((r) => ({
          plotId: r.plot_id,
          plotName: r.plot_name,
          supplierIds: r.supplier_business_ids,
          countryCode: r.country_code,
          commodities: r.commodities,
          areaHa: r.area_ha,
          ready: r.ready,
          findings: r.findings,
          countryRiskLevel: r.country_risk_level,
          geometry: r.geometry,
        })),
      );
      if (rows.length < PAGE) break;
    }
  });
}

interface PlotQueryRow {
  plot_id: string;
  plot_name: string | null;
  supplier_business_ids: string[];
  country_code: string | null;
  commodities: string[];
  area_ha: number | null;
  ready: boolean | null;
  findings: ReportFinding[];
  country_risk_level: string | null;
  geometry: unknown;
}

/** Whether a supplier of that business id is known to the warehouse (bi_eudr_supplier_readiness). */
export async function supplierExists(db: Warehouse, supplierId: string): Promise<boolean> {
  const { rows } = await sql<{ n: number }>`
    select count(*)::int as n from bi_eudr_supplier_readiness where supplier_business_id = ${supplierId}`.execute(db);
  return rows[0]!.n > 0;
}
