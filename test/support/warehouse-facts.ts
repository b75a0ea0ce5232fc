import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { Simulator } from '../../simulator/index.ts';
import type { Warehouse } from '../../warehouse/database.ts';
import { WAREHOUSE_TABLES } from '../../warehouse/refresh/counts.ts';

/**
 * The same facts about every current plot, read once from the simulator's own data and once from
 * the warehouse, so a test can compare the two exactly (and print what differs).
 */
export interface PlotFacts {
  id: string;
  name: string | null;
  countryCode: string | null;
  commodities: string;
  riskAssessmentStatus: string | null;
  riskLevel: string | null;
  surfaceArea: number | null;
  mostRecentAnalysisId: string | null;
  euforobsId: string | null;
  precisionId: string | null;
  speciesCount: number;
  productionDateStart: string | null;
  isOwn: boolean;
  suppliers: string;
  geometry: string;
}

/** JSON with object keys sorted: jsonb reorders keys, the service may not. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b)))
      : v,
  );
}

const unset = (v: unknown): v is Record<string, never> =>
  v !== null && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0;
const text = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const idOf = (v: unknown): string | null =>
  v && typeof v === 'object' && typeof (v as { id?: unknown }).id === 'string' ? (v as { id: string }).id : null;

export function simulatorPlotFacts(sim: Simulator): PlotFacts[] {
  const callerId = sim.control.callerBusinessId();
  const facts: PlotFacts[] = [];
  for (const { plot: p, supplierIds } of sim.control.plots()) {
    const byType = unset(p['mostRecentAnalysesByType'])
      ? {}
      : (p['mostRecentAnalysesByType'] as Record<string, unknown>);
    facts.push({
      id: p['id'] as string,
      name: text(p['name']),
      countryCode: text(p['countryCode']),
      commodities: ((p['commodities'] as string[]) ?? []).join('|'),
      riskAssessmentStatus: text(p['riskAssessmentStatus']),
      riskLevel: text(p['riskLevel']),
      surfaceArea: typeof p['surfaceArea'] === 'number' ? p['surfaceArea'] : null,
      mostRecentAnalysisId: idOf(p['mostRecentAnalysis']),
      euforobsId: idOf(byType['EUFOROBS']),
      precisionId: idOf(byType['PRECISION']),
      speciesCount: ((p['species'] as unknown[]) ?? []).length,
      productionDateStart: unset(p['productionDateStart'])
        ? null
        : (text(p['productionDateStart'])?.slice(0, 10) ?? null),
      isOwn: p['ownerId'] === callerId,
      suppliers: [...supplierIds].sort().join('|'),
      geometry: canonical(p['geometry']),
    });
  }
  return facts.sort((a, b) => (a.id < b.id ? -1 : 1));
}

export async function warehousePlotFacts(db: Warehouse): Promise<PlotFacts[]> {
  const { rows } = await sql<Record<string, unknown>>`
    select p.id, p.name, p.country_code, p.commodities, p.risk_assessment_status, p.risk_level, p.surface_area_m2,
           p.most_recent_analysis_id, p.euforobs_analysis_id, p.precision_analysis_id, p.is_own,
           to_char(p.production_date_start, 'YYYY-MM-DD') as production_date_start, p.geometry,
           (select count(*)::int from plot_species s where s.plot_id = p.id) as species,
           coalesce((select string_agg(l.supplier_id, '|' order by l.supplier_id) from plot_suppliers l where l.plot_id = p.id and l.deleted_at is null), '') as suppliers
    from plots p where p.deleted_at is null order by p.id`.execute(db);
  return rows
    .map((r) => ({
      id: r['id'] as string,
      name: r['name'] as string | null,
      countryCode: r['country_code'] as string | null,
      commodities: (r['commodities'] as string[]).join('|'),
      riskAssessmentStatus: r['risk_assessment_status'] as string | null,
      riskLevel: r['risk_level'] as string | null,
      surfaceArea: r['surface_area_m2'] as number | null,
      mostRecentAnalysisId: r['most_recent_analysis_id'] as string | null,
      euforobsId: r['euforobs_analysis_id'] as string | null,
      precisionId: r['precision_analysis_id'] as string | null,
      speciesCount: r['species'] as number,
      productionDateStart: r['production_date_start'] as string | null,
      isOwn: r['is_own'] as boolean,
      suppliers: r['suppliers'] as string,
      geometry: canonical(r['geometry']),
    }))
    .sort((a, b) => (a.id < b.id ? -1 : 1));
}

export function checksum(facts: readonly PlotFacts[]): string {
  return createHash('sha256').update(JSON.stringify(facts)).digest('hex');
}

/** Row versions (and row locks, xmax) of every mirrored table: equal before and after means nothing was written or locked. */
export async function rowVersions(db: Warehouse): Promise<Record<string, string>> {
  const tables = WAREHOUSE_TABLES;
  const out: Record<string, string> = {};
  for (const table of tables) {
    const { rows } = await sql<{ v: string | null; n: number }>`
      select md5(string_agg(ctid::text || ':' || xmin::text || ':' || xmax::text, ',' order by ctid)) as v, count(*)::int as n from ${sql.table(table)}`.execute(
      db,
    );
    out[table] = `${rows[0]?.n ?? 0}:${rows[0]?.v ?? ''}`;
  }
  return out;
}
