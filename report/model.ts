import type { ReportFinding, ReportHeader, ReportPlotRow, ReportSupplierRow } from '../warehouse/report/read-report.ts';
import {
  COUNTRY_RISK_LEVELS,
  type CountryRiskLevel,
  NOT_READY,
  type PagePlots,
  READY,
  riskLevelIndex,
  UNKNOWN,
} from './page-data.ts';
import { compactShape } from './shape.ts';

// What the HTML report embeds, built from the warehouse's rows page by page. Pure: no I/O.
// Plots are stored column by column (one array per attribute) and repeated texts (findings,
// suppliers) once in a table each: at 100,000 plots the embedded data stays a few megabytes.

export { COUNTRY_RISK_LEVELS, NOT_READY, READY, UNKNOWN } from './page-data.ts';

/** The index of a level in COUNTRY_RISK_LEVELS; a value the views do not give (none today) counts as unknown. */
export function countryRiskIndex(level: string | null): number {
  if (level === null) return -1;
  const i = (COUNTRY_RISK_LEVELS as readonly string[]).indexOf(level);
  return i < 0 ? COUNTRY_RISK_LEVELS.indexOf('unknown') : i;
}

/** The plots as the page gets them (report/page-data.ts). */
export type ReportPlots = PagePlots;

export interface ReportModel {
  generatedAt: string;
  overlapChecked: boolean;
  lastRefreshAt: string | null;
  lastRefreshStatus: string | null;
  /** The supplier the report is restricted to (--supplier), or null for every plot. */
  supplier: { id: string; name: string } | null;
  totals: { plots: number; ready: number; notReady: number; unknown: number; hectares: number; located: number };
  /** Plots per country risk level of their country of production; a plot without a country counts as unknown, as the views count it. */
  countryRisk: Record<CountryRiskLevel, number>;
  /** bi_eudr_supplier_readiness rows (one only with --supplier). */
  supplierRows: ReportSupplierRow[];
  /** Every supplier a plot of the report is reached through: [id, name]. */
  suppliers: Array<[string, string]>;
  /** Every distinct finding: [code, severity, message]. */
  findings: Array<[string, ReportFinding['severity'], string]>;
  plots: ReportPlots;
  /** Blocking codes over the report's plots, most plots first: [code, plots]. */
  reasons: Array<[string, number]>;
}

/** Collects pages of plots into a ReportModel. */
export class ReportModelBuilder {
  private readonly plots: ReportPlots = {
    ids: [],
    names: [],
    state: [],
    area: [],
    country: [],
    countryRisk: [],
    suppliers: [],
    findings: [],
    x: [],
    y: [],
    rings: [],
    lines: {},
  };
  private readonly findingIndex = new Map<string, number>();
  private readonly findings: ReportModel['findings'] = [];
  private readonly supplierIndex = new Map<string, number>();
  private readonly suppliers: Array<[string, string]> = [];
  private readonly reasons = new Map<string, number>();
  private readonly totals = { plots: 0, ready: 0, notReady: 0, unknown: 0, hectares: 0, located: 0 };
  private readonly countryRisk: Record<CountryRiskLevel, number> = { low: 0, standard: 0, high: 0, unknown: 0 };

  /** Supplier names known up front (bi_eudr_supplier_readiness); others show their id. */
  constructor(private readonly supplierNames: ReadonlyMap<string, string> = new Map()) {}

  add(rows: readonly ReportPlotRow[]): void {
    const p = this.plots;
    for (const row of rows) {
      const state = row.ready === null ? UNKNOWN : row.ready ? READY : NOT_READY;
      const shape = compactShape(row.geometry);
      p.ids.push(row.plotId);
      p.names.push(row.plotName ?? '');
      p.state.push(state);
      p.area.push(row.areaHa === null || !Number.isFinite(row.areaHa) ? null : Math.round(row.areaHa * 10) / 10);
      p.country.push(row.countryCode ?? '');
      const risk = countryRiskIndex(row.countryRiskLevel);
      p.countryRisk.push(risk);
      this.countryRisk[COUNTRY_RISK_LEVELS[riskLevelIndex(risk)]!]++;
      p.suppliers.push(row.supplierIds.map((id) => this.supplier(id)));
      p.findings.push(row.findings.map((f) => this.finding(f)));
      p.x.push(shape ? shape.x : null);
      p.y.push(shape ? shape.y : null);
      p.rings.push(shape ? shape.rings : []);
      if (shape?.lines) p.lines[p.ids.length - 1] = shape.lines;
      this.totals.plots++;
      if (state === READY) this.totals.ready++;
      else if (state === NOT_READY) this.totals.notReady++;
      else this.totals.unknown++;
      if (row.areaHa !== null && Number.isFinite(row.areaHa)) this.totals.hectares += row.areaHa;
      if (shape) this.totals.located++;
      for (const f of row.findings)
        if (f.severity === 'blocking') this.reasons.set(f.code, (this.reasons.get(f.code) ?? 0) + 1);
    }
  }

  finish(options: {
    generatedAt: Date;
    header: ReportHeader;
    supplierRows: ReportSupplierRow[];
    supplier: { id: string; name: string } | null;
  }): ReportModel {
    return {
      generatedAt: options.generatedAt.toISOString(),
      overlapChecked: options.header.overlapChecked,
      lastRefreshAt: options.header.lastRefreshAt,
      lastRefreshStatus: options.header.lastRefreshStatus,
      supplier: options.supplier,
      totals: { ...this.totals, hectares: Math.round(this.totals.hectares * 10) / 10 },
      countryRisk: { ...this.countryRisk },
      supplierRows: options.supplierRows,
      suppliers: this.suppliers,
      findings: this.findings,
      plots: this.plots,
      reasons: [...this.reasons].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)),
    };
  }

  private supplier(id: string): number {
    let i = this.supplierIndex.get(id);
    if (i === undefined) {
      i = this.suppliers.push([id, this.supplierNames.get(id) ?? id]) - 1;
      this.supplierIndex.set(id, i);
    }
    return i;
  }

  private finding(f: ReportFinding): number {
    const key = `${f.code}\u0000${f.severity}\u0000${f.message}`;
    let i = this.findingIndex.get(key);
    if (i === undefined) {
      i = this.findings.push([f.code, f.severity, f.message]) - 1;
      this.findingIndex.set(key, i);
    }
    return i;
  }
}

/** A model from rows at once (tests, the benchmark's hand-made data). */
export function buildReportModel(
  rows: readonly ReportPlotRow[],
  options: Parameters<ReportModelBuilder['finish']>[0],
): ReportModel {
  const builder = new ReportModelBuilder(new Map(options.supplierRows.map((s) => [s.supplierId, s.supplierName])));
  builder.add(rows);
  return builder.finish(options);
}
