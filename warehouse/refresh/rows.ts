/**
 * Rows as the refresh writes them: the output of the pure mapping (plot-rows.ts, network-rows.ts)
 * and the input of the SQL writers (plot-writer.ts, network-writer.ts). JSON columns are already
 * serialised (text) so Postgres parses them once; timestamps and dates are ISO strings or null.
 */

export interface PlotRow {
  id: string;
  owner_id: string | null;
  name: string | null;
  description: string | null;
  country_code: string | null;
  commodities: string[];
  surface_area_m2: number | null;
  area_ha: number | null;
  bbox_min_lon: number | null;
  bbox_min_lat: number | null;
  bbox_max_lon: number | null;
  bbox_max_lat: number | null;
  geometry: string | null;
  geometry_valid: boolean;
  geometry_issue: string | null;
  risk_assessment_status: string | null;
  risk_level: string | null;
  /** YYYY-MM-DD, or null when unset or not a date. */
  production_date_start: string | null;
  production_date_end: string | null;
  filename: string | null;
  custom_data: string | null;
  most_recent_analysis_id: string | null;
  euforobs_analysis_id: string | null;
  precision_analysis_id: string | null;
  is_own: boolean;
  created_at: string | null;
  updated_at: string | null;
  /** The plot's fingerprint as the service sent it (plot-fingerprint.ts): equal means nothing to write. */
  content_hash: string;
  /** Hash of the tracked attributes (risk status, risk level, geometry, commodities, most recent analyses). */
  history_hash: string;
}

export interface SpeciesRow {
  plot_id: string;
  position: number;
  scientific_name: string | null;
  common_name: string | null;
}

export interface AnalysisRow {
  id: string;
  plot_id: string;
  type: string | null;
  status: string | null;
  name: string | null;
  version: string | null;
  analysed_at: string | null;
  deforested_area_m2: number | null;
  deforested_geometry: string | null;
  risk_of_deforestation: number | null;
  custom_data: string | null;
  created_at: string | null;
  updated_at: string | null;
  is_most_recent: boolean;
  is_most_recent_of_type: boolean;
  content_hash: string;
}

/** The tracked attributes of one SCD-2 history row. */
export interface HistoryAttributes {
  risk_assessment_status: string | null;
  risk_level: string | null;
  geometry_hash: string | null;
  commodities: string[];
  most_recent_analysis_id: string | null;
  euforobs_analysis_id: string | null;
  precision_analysis_id: string | null;
}

export interface PlotRows {
  plot: PlotRow;
  species: SpeciesRow[];
  analyses: AnalysisRow[];
  history: HistoryAttributes;
}

export interface BusinessRow {
  id: string;
  name: string | null;
  email: string | null;
  username: string | null;
  address_street: string | null;
  address_zip: string | null;
  address_postcode: string | null;
  address_area: string | null;
  address_city: string | null;
  address_country_code: string | null;
  address_country: string | null;
  address_line1: string | null;
  address_line2: string | null;
  eori: string | null;
  vat: string | null;
  system_environment: string | null;
  initial_locale: string | null;
  units: string | null;
  created_at: string | null;
  updated_at: string | null;
  is_caller: boolean;
  content_hash: string;
}

export interface ConnectionRow {
  id: string;
  source_business_id: string;
  target_business_id: string;
  partner_business_id: string;
  role: 'supplier' | 'buyer';
  plots_count: number | null;
  plots_commodities: string[];
  custom_data: string | null;
  created_at: string | null;
  updated_at: string | null;
  content_hash: string;
}

export interface InvitationRow {
  id: string;
  status: string | null;
  email: string | null;
  sender_business_id: string | null;
  business_id: string | null;
  source_is_invitee: boolean | null;
  custom_data: string | null;
  created_at: string | null;
  updated_at: string | null;
  content_hash: string;
}

/** A record that could not be mapped: kept out of the page, reported with the field and the rule. */
export interface RejectedRecord {
  id: string | null;
  field: string;
  rule: string;
}
