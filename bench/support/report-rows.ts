import type { ReportFinding, ReportPlotRow, ReportSupplierRow } from '../../warehouse/report/read-report.ts';

// Hand-made plots in the shape of the readiness views, as many as asked, for the report's benchmark:
// suppliers in producing countries, star-shaped polygons of 0.5–8 ha (some given as points), about
// a third not ready with findings of the kinds the readiness checks produce. Deterministic.

// risk: the country's level in migration 0022 (docs/country-risk.md).
const COUNTRIES: Array<{ code: string; risk: string; box: [number, number, number, number] }> = [
  { code: 'CI', risk: 'standard', box: [-8.2, -3.2, 5.2, 9.5] },
  { code: 'GH', risk: 'low', box: [-2.9, 0.9, 5.0, 10.5] },
  { code: 'BR', risk: 'standard', box: [-60, -45, -15, -3] },
  { code: 'ID', risk: 'standard', box: [100, 118, -4, 3] },
  { code: 'CO', risk: 'standard', box: [-76, -72, 2, 8] },
  { code: 'VN', risk: 'low', box: [105, 108.5, 11, 16] },
  { code: 'ET', risk: 'standard', box: [35, 40, 6, 10] },
  { code: 'PE', risk: 'standard', box: [-78, -74, -12, -6] },
  { code: 'HN', risk: 'standard', box: [-88.5, -85, 13.5, 15.5] },
  { code: 'UG', risk: 'standard', box: [30.5, 34, -0.8, 3.2] },
];

const BLOCKING: ReportFinding[] = [
  { code: 'polygon_self_intersection', severity: 'blocking', message: 'The polygon crosses itself.' },
  {
    code: 'point_over_4_ha',
    severity: 'blocking',
    message: 'The plot covers more than 4 ha but is given as a point; a polygon is required.',
  },
  { code: 'country_missing', severity: 'blocking', message: 'The country of production is missing.' },
  {
    code: 'analysis_deforestation',
    severity: 'blocking',
    message: 'The latest deforestation analysis reports deforested area after 31 December 2020.',
  },
  { code: 'production_period_missing', severity: 'blocking', message: 'The production period is missing.' },
];
const WARNINGS: ReportFinding[] = [
  {
    code: 'area_mismatch',
    severity: 'warning',
    message: 'The reported area differs from the polygon’s by more than 10%.',
  },
  { code: 'coordinate_precision', severity: 'warning', message: 'Coordinates have fewer than 6 decimals.' },
];

function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface HandMadeReport {
  plots: ReportPlotRow[];
  suppliers: ReportSupplierRow[];
}

export function handMadeReportRows(plotCount: number, supplierCount = 10, seed = 1): HandMadeReport {
  const rand = random(seed);
  const plots: ReportPlotRow[] = [];
  for (let i = 0; i < plotCount; i++) {
    const s = i % supplierCount;
    const country = COUNTRIES[s % COUNTRIES.length]!;
    const [minLon, maxLon, minLat, maxLat] = country.box;
    const lon = minLon + rand() * (maxLon - minLon);
    const lat = minLat + rand() * (maxLat - minLat);
    const areaHa = 0.5 + rand() * 7.5;
    const radius = Math.sqrt((areaHa * 10_000) / Math.PI) / 111_320;
    const findings: ReportFinding[] = [];
    const notReady = rand() < 0.32;
    if (notReady) findings.push(BLOCKING[Math.floor(rand() * BLOCKING.length)]!);
    if (rand() < 0.15) findings.push(WARNINGS[Math.floor(rand() * WARNINGS.length)]!);
    const asPoint = findings.some((f) => f.code === 'point_over_4_ha') || rand() < 0.03;
    const vertices = 6 + Math.floor(rand() * 6);
    const ring: number[][] = [];
    for (let v = 0; v < vertices; v++) {
      const angle = (v / vertices) * 2 * Math.PI;
      const r = radius * (0.75 + rand() * 0.5);
      ring.push([
        Math.round((lon + (r * Math.cos(angle)) / Math.cos((lat * Math.PI) / 180)) * 1e7) / 1e7,
        Math.round((lat + r * Math.sin(angle)) * 1e7) / 1e7,
      ]);
    }
    ring.push([...ring[0]!]);
    const id = `plot-${String(i).padStart(7, '0')}`;
    plots.push({
      plotId: id,
      plotName: `Plot ${i + 1}`,
      supplierIds: [`supplier-${s + 1}`],
      countryCode: findings.some((f) => f.code === 'country_missing') ? null : country.code,
      countryRiskLevel: findings.some((f) => f.code === 'country_missing') ? null : country.risk,
      commodities: ['cocoa'],
      areaHa: Math.round(areaHa * 100) / 100,
      ready: !notReady,
      findings,
      geometry: asPoint
        ? { type: 'Point', coordinates: [Math.round(lon * 1e6) / 1e6, Math.round(lat * 1e6) / 1e6] }
        : { type: 'Polygon', coordinates: [ring] },
    });
  }
  const suppliers: ReportSupplierRow[] = [];
  for (let s = 0; s < supplierCount; s++) {
    const id = `supplier-${s + 1}`;
    const mine = plots.filter((p) => p.supplierIds[0] === id);
    const ready = mine.filter((p) => p.ready);
    const reasons = new Map<string, number>();
    for (const p of mine)
      for (const f of p.findings) if (f.severity === 'blocking') reasons.set(f.code, (reasons.get(f.code) ?? 0) + 1);
    const sum = (list: ReportPlotRow[]) => list.reduce((a, p) => a + (p.areaHa ?? 0), 0);
    suppliers.push({
      supplierId: id,
      supplierName: `Supplier ${s + 1} (${COUNTRIES[s % COUNTRIES.length]!.code})`,
      plots: mine.length,
      plotsReady: ready.length,
      plotsNotReady: mine.length - ready.length,
      hectares: sum(mine),
      hectaresReady: sum(ready),
      shareReady: mine.length ? ready.length / mine.length : null,
      topReasons: [...reasons]
        .sort((a, b) => b[1] - a[1])
        .slice(0, 5)
        .map(([code, n]) => ({ code, plots: n })),
      // A supplier's plots are all in one country (the rows above), or have none.
      countryRiskLevel:
        mine.length === 0
          ? null
          : mine.some((p) => p.countryRiskLevel === null)
            ? 'unknown'
            : COUNTRIES[s % COUNTRIES.length]!.risk,
      plotsCountryRiskLow: mine.filter((p) => p.countryRiskLevel === 'low').length,
      simplifiedDueDiligenceEligible: mine.length === 0 ? null : mine.every((p) => p.countryRiskLevel === 'low'),
    });
  }
  return { plots, suppliers };
}
