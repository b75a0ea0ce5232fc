import type { Analysis, Plot } from '../../schema/upstream.ts';
import { plotFindings } from '../../domain/eudr/readiness.ts';
import { contentHash } from './content-hash.ts';
import { assessGeometry } from '../../domain/geometry/geometry-quality.ts';
import { mayHoldUnstorablePlot, plotFingerprint } from './plot-fingerprint.ts';
import { findUnstorableFields, memberPath, type Replacement, unstorableRule } from '../../domain/unstorable-text.ts';
import { worldCountries } from './world-countries.ts';
import type { AnalysisRow, FindingRow, HistoryAttributes, PlotRow, PlotRows, SpeciesRow } from './rows.ts';
import {
  dateOrNull,
  jsonOrNull,
  numberOrNull,
  textOrNull,
  timestampOrNull,
  type ValueIssue,
} from '../../domain/values.ts';

/**
 * A validated plot of the service → the rows the warehouse keeps of it: the plot (typed columns,
 * area and bounding box computed from the polygon, a geometry-quality flag), its species, the
 * analyses it carries (each once, the most recent overall and per type marked), the attributes
 * history tracks, its EUDR readiness findings (domain/eudr, from the same geometry facts), and
 * the hashes that decide whether anything needs writing. Pure.
 */

/** Keys of mostRecentAnalysesByType that get their own column on plots. */
const EUFOROBS = 'EUFOROBS';
const PRECISION = 'PRECISION';

export interface MappedPlot {
  rows: PlotRows;
  /**
   * Values that could not be stored as their column's type (stored as null), and text stored with
   * U+FFFD for what Postgres cannot hold (`replaced`, with the value as sent): reported.
   */
  issues: ValueIssue[];
}

/** The plot's fingerprint (plot-fingerprint.ts) becomes the content hash: it is what the next refresh compares. */
export function toPlotRows(
  plot: Plot,
  isOwn: boolean,
  // First: fingerprinting drops the embedded supplier records, which are not the plot's content (a
  // fingerprint taken before, by plotFingerprint, has dropped them already).
  fingerprint = plotFingerprint(plot, isOwn),
): MappedPlot {
  const issues: ValueIssue[] = [];
  const geometryText = jsonOrNull(plot.geometry);
  const geometry = assessGeometry(plot.geometry);
  const analyses = analysisRows(plot, issues);
  const byType = plot.mostRecentAnalysesByType ?? {};
  const species: SpeciesRow[] = (plot.species ?? []).map((s, position) => ({
    plot_id: plot.id,
    position,
    scientific_name: textOrNull(s.scientificName),
    common_name: textOrNull(s.commonName),
  }));
  const history: HistoryAttributes = {
    risk_assessment_status: textOrNull(plot.riskAssessmentStatus),
    risk_level: textOrNull(plot.riskLevel),
    geometry_hash: geometryText === null ? null : contentHash(geometryText),
    commodities: plot.commodities ?? [],
    most_recent_analysis_id: plot.mostRecentAnalysis?.id ?? null,
    euforobs_analysis_id: byType[EUFOROBS]?.id ?? null,
    precision_analysis_id: byType[PRECISION]?.id ?? null,
  };
  // Built in one literal (no spread copy): this runs for every plot of every page.
  const row: PlotRow = {
    id: plot.id,
    owner_id: textOrNull(plot.ownerId),
    name: textOrNull(plot.name),
    description: textOrNull(plot.description),
    country_code: textOrNull(plot.countryCode),
    commodities: history.commodities,
    surface_area_m2: numberOrNull(plot.surfaceArea),
    area_ha: geometry.areaHa,
    bbox_min_lon: geometry.bbox?.[0] ?? null,
    bbox_min_lat: geometry.bbox?.[1] ?? null,
    bbox_max_lon: geometry.bbox?.[2] ?? null,
    bbox_max_lat: geometry.bbox?.[3] ?? null,
    geometry: geometryText,
    geometry_valid: geometry.valid,
    geometry_issue: geometry.issue,
    risk_assessment_status: history.risk_assessment_status,
    risk_level: history.risk_level,
    production_date_start: dateOrNull(plot.productionDateStart, 'productionDateStart', issues),
    production_date_end: dateOrNull(plot.productionDateEnd, 'productionDateEnd', issues),
    filename: textOrNull(plot.filename),
    custom_data: jsonOrNull(plot.customData),
    most_recent_analysis_id: history.most_recent_analysis_id,
    euforobs_analysis_id: history.euforobs_analysis_id,
    precision_analysis_id: history.precision_analysis_id,
    is_own: isOwn,
    created_at: timestampOrNull(plot.createdAt, 'createdAt', issues),
    updated_at: timestampOrNull(plot.updatedAt, 'updatedAt', issues),
    content_hash: fingerprint,
    history_hash: contentHash(history),
  };
  const findings: FindingRow[] = [];
  for (const f of plotFindings(plot, geometry, worldCountries())) {
    findings.push({
      plot_id: plot.id,
      code: f.code,
      severity: f.severity,
      message: f.message,
      details: f.details === null ? null : JSON.stringify(f.details),
    });
  }
  if (mayHoldUnstorablePlot(plot)) replacedValues(plot, issues);
  return { rows: { plot: row, species, analyses, history, findings }, issues };
}

/** The members of a plot and of an analysis the warehouse keeps as text or JSON (dates are parsed: see dateOrNull). */
const PLOT_TEXT = [
  'id',
  'ownerId',
  'name',
  'description',
  'countryCode',
  'commodities',
  'geometry',
  'riskAssessmentStatus',
  'riskLevel',
  'filename',
  'customData',
];
const SPECIES_TEXT = ['scientificName', 'commonName'];
const ANALYSIS_TEXT = ['id', 'type', 'status', 'name', 'version', 'deforestedGeometry', 'customData'];

/**
 * The plot's strings the warehouse keeps (names, customData keys and values at any depth, its
 * species' and analyses' text) stored with U+FFFD in place of a NUL or a lone surrogate, each reported
 * with its path from the plot and its JSON text as sent. Members it does not keep are not walked.
 */
function replacedValues(plot: Plot, issues: ValueIssue[]): void {
  const found: Replacement[] = [];
  findUnstorableFields(plot as never, PLOT_TEXT, '', found);
  const species = plot.species ?? [];
  for (let i = 0; i < species.length; i++)
    findUnstorableFields(species[i] as never, SPECIES_TEXT, `species[${i}]`, found);
  if (plot.mostRecentAnalysis)
    findUnstorableFields(plot.mostRecentAnalysis as never, ANALYSIS_TEXT, 'mostRecentAnalysis', found);
  for (const [kind, analysis] of Object.entries(plot.mostRecentAnalysesByType ?? {})) {
    const path = memberPath('mostRecentAnalysesByType', kind);
    // The kind becomes the analysis's type when it names none.
    const rule = unstorableRule(kind);
    if (rule !== null) found.push({ field: path, rule: `key: ${rule}`, sent: JSON.stringify(kind) });
    if (analysis) findUnstorableFields(analysis as never, ANALYSIS_TEXT, path, found);
  }
  for (const r of found) issues.push({ field: r.field, rule: r.rule, action: 'replaced', sent: r.sent });
}

/** Each analysis the plot carries, once: mostRecentAnalysis and the values of mostRecentAnalysesByType overlap. */
function analysisRows(plot: Plot, issues: ValueIssue[]): AnalysisRow[] {
  const found = new Map<
    string,
    { analysis: Analysis; kind: string | null; mostRecent: boolean; mostRecentOfType: boolean }
  >();
  for (const [kind, analysis] of Object.entries(plot.mostRecentAnalysesByType ?? {})) {
    if (!analysis) continue;
    const seen = found.get(analysis.id);
    if (seen) seen.mostRecentOfType = true;
    else found.set(analysis.id, { analysis, kind, mostRecent: false, mostRecentOfType: true });
  }
  const recent = plot.mostRecentAnalysis;
  if (recent) {
    const seen = found.get(recent.id);
    if (seen) seen.mostRecent = true;
    else found.set(recent.id, { analysis: recent, kind: null, mostRecent: true, mostRecentOfType: false });
  }
  const rows: AnalysisRow[] = [];
  for (const { analysis: a, kind, mostRecent, mostRecentOfType } of found.values()) {
    const at = (field: string) => `analyses[${a.id}].${field}`;
    const values: Omit<AnalysisRow, 'content_hash'> = {
      id: a.id,
      // The relation says whose analysis it is; a differing plotId in the body does not move it.
      plot_id: plot.id,
      type: textOrNull(a.type) ?? kind,
      status: textOrNull(a.status),
      name: textOrNull(a.name),
      version: textOrNull(a.version),
      analysed_at: timestampOrNull(a.analysedAt, at('analysedAt'), issues),
      deforested_area_m2: numberOrNull(a.deforestedArea),
      deforested_geometry: jsonOrNull(a.deforestedGeometry),
      risk_of_deforestation: numberOrNull(a.riskOfDeforestation),
      custom_data: jsonOrNull(a.customData),
      created_at: timestampOrNull(a.createdAt, at('createdAt'), issues),
      updated_at: timestampOrNull(a.updatedAt, at('updatedAt'), issues),
      is_most_recent: mostRecent,
      is_most_recent_of_type: mostRecentOfType,
    };
    // The hash covers the values without itself; added afterwards rather than copying the row.
    const row = values as AnalysisRow;
    row.content_hash = contentHash(values);
    rows.push(row);
  }
  return rows;
}
