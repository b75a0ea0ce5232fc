import type { RecordsetColumns } from './json-recordset.ts';
import type { HashedTable } from './hashed-upsert.ts';
import type { AnalysisRow, FindingRow, HistoryRow, PlotRow, SpeciesRow } from './rows.ts';

/** The columns a page of plots writes, per table, with their Postgres types (plot-writer.ts, fresh-plots.ts). */

export const PLOTS: HashedTable<PlotRow> = {
  table: 'plots',
  columns: {
    id: 'text',
    owner_id: 'text',
    name: 'text',
    description: 'text',
    country_code: 'text',
    commodities: 'text[]',
    surface_area_m2: 'float8',
    area_ha: 'float8',
    bbox_min_lon: 'float8',
    bbox_min_lat: 'float8',
    bbox_max_lon: 'float8',
    bbox_max_lat: 'float8',
    geometry: 'json',
    geometry_valid: 'boolean',
    geometry_issue: 'text',
    risk_assessment_status: 'text',
    risk_level: 'text',
    production_date_start: 'date',
    production_date_end: 'date',
    filename: 'text',
    custom_data: 'jsonb',
    most_recent_analysis_id: 'text',
    euforobs_analysis_id: 'text',
    precision_analysis_id: 'text',
    is_own: 'boolean',
    created_at: 'timestamptz',
    updated_at: 'timestamptz',
    content_hash: 'text',
    history_hash: 'text',
  },
};
/** The plot row's columns and their types (the COPY baseline of bench:refresh writes the same). */
export const PLOT_COLUMNS = PLOTS.columns;
export const ANALYSES: HashedTable<AnalysisRow> = {
  table: 'analyses',
  columns: {
    id: 'text',
    plot_id: 'text',
    type: 'text',
    status: 'text',
    name: 'text',
    version: 'text',
    analysed_at: 'timestamptz',
    deforested_area_m2: 'float8',
    deforested_geometry: 'json',
    risk_of_deforestation: 'float8',
    custom_data: 'jsonb',
    created_at: 'timestamptz',
    updated_at: 'timestamptz',
    is_most_recent: 'boolean',
    is_most_recent_of_type: 'boolean',
    content_hash: 'text',
  },
};
export const SPECIES: RecordsetColumns<SpeciesRow> = {
  plot_id: 'text',
  position: 'int2',
  scientific_name: 'text',
  common_name: 'text',
};
export const HISTORY: RecordsetColumns<HistoryRow> = {
  plot_id: 'text',
  history_hash: 'text',
  risk_assessment_status: 'text',
  risk_level: 'text',
  geometry_hash: 'text',
  commodities: 'text[]',
  most_recent_analysis_id: 'text',
  euforobs_analysis_id: 'text',
  precision_analysis_id: 'text',
};

/** A plot whose history row is replaced, and its new history hash. */
export const REPLACED_HISTORY: RecordsetColumns<Pick<HistoryRow, 'plot_id' | 'history_hash'>> = {
  plot_id: 'text',
  history_hash: 'text',
};

export const FINDINGS: RecordsetColumns<FindingRow> = {
  plot_id: 'text',
  code: 'text',
  severity: 'text',
  message: 'text',
  details: 'jsonb',
};

/** The tables a page's rows are COPYed into (staging, or straight in for new plots), and their columns. */
export const STAGED = {
  plots: PLOTS.columns,
  analyses: ANALYSES.columns,
  plot_species: SPECIES,
  plot_history: HISTORY,
  eudr_findings: FINDINGS,
};
