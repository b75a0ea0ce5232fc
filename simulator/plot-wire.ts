// Projection of a plot's state to the JSON the service returns, honouring includes and select.
import type { Analysis, PlotState } from './plot-factory.ts';
import { derivedRiskLevel } from './plot-factory.ts';

export interface WireOptions {
  seed: number;
  ownerId: string;
  /** Business objects of the direct suppliers through which the plot is reachable. */
  suppliers: Array<Record<string, unknown>>;
  /** customData is visible only to the record's owner (contract rule 8). */
  ownerIsCaller: boolean;
  includes?: Set<string>;
  select?: Set<string>;
}

/** In plot lists, analyses omit customData and name (contract). */
function listAnalysis(a: Analysis): Record<string, unknown> {
  const { customData: _c, name: _n, ...rest } = a;
  return rest;
}

export function latestAnalysis(analyses: Analysis[], type?: string): Analysis | undefined {
  let best: Analysis | undefined;
  for (const a of analyses) {
    if (type !== undefined && a.type !== type) continue;
    if (!best || a.analysedAt >= best.analysedAt) best = a;
  }
  return best;
}

function minimumAnalysisResults(analyses: Analysis[]): Record<string, number> {
  const done = analyses.filter((a) => a.status === 'succeeded');
  if (done.length === 0) return {};
  return {
    deforestedArea: Math.min(...done.map((a) => a.deforestedArea)),
    riskOfDeforestation: Math.min(...done.map((a) => a.riskOfDeforestation)),
  };
}

export function plotToWire(plot: PlotState, opts: WireOptions): Record<string, unknown> {
  const latest = latestAnalysis(plot.analyses);
  // Without `includes` every relation except minimumAnalysisResults is returned; with it, only those named.
  const wants = (relation: string): boolean =>
    opts.includes ? opts.includes.has(relation) : relation !== 'minimumAnalysisResults';
  const out: Record<string, unknown> = {
    id: plot.id,
    createdAt: plot.createdAt,
    updatedAt: plot.updatedAt,
  };
  if (wants('suppliers')) out['suppliers'] = opts.suppliers;
  out['geometry'] = plot.geometry;
  out['commodities'] = plot.commodities;
  out['name'] = plot.name;
  out['surfaceArea'] = plot.surfaceArea;
  out['countryCode'] = plot.countryCode;
  if (wants('mostRecentAnalysis')) out['mostRecentAnalysis'] = latest ? listAnalysis(latest) : {};
  if (wants('mostRecentAnalysesByType')) {
    const byType: Record<string, unknown> = {};
    for (const type of [...new Set(plot.analyses.map((a) => a.type))].sort()) {
      const a = latestAnalysis(plot.analyses, type);
      if (a) byType[type] = listAnalysis(a);
    }
    out['mostRecentAnalysesByType'] = byType;
  }
  if (wants('minimumAnalysisResults')) out['minimumAnalysisResults'] = minimumAnalysisResults(plot.analyses);
  if (wants('riskAssessmentStatus')) out['riskAssessmentStatus'] = plot.riskAssessmentStatus;
  if (wants('riskLevel')) out['riskLevel'] = derivedRiskLevel(opts.seed, plot, latest);
  out['species'] = plot.species;
  out['productionDateStart'] = plot.productionDateStart;
  out['productionDateEnd'] = plot.productionDateEnd;
  out['filename'] = plot.filename;
  out['description'] = plot.description;
  out['ownerId'] = opts.ownerId;
  out['customData'] = opts.ownerIsCaller ? plot.customData : {};
  if (!opts.select) return out;
  const picked: Record<string, unknown> = {};
  for (const key of Object.keys(out)) if (opts.select.has(key)) picked[key] = out[key];
  return picked;
}
