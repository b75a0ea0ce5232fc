import type { Insertable } from 'kysely';
import type { Database, JsonObject } from '../../schema/database.ts';

/**
 * Rows as the refresh writes them: the output of the pure mapping (plot-rows.ts, network-rows.ts)
 * and the input of the SQL writers (plot-writer.ts, network-writer.ts). Each is made from the
 * table's generated type (schema/database.ts), so a column renamed or dropped in SQL, or a new
 * column an insert needs, breaks the mapping and the writers at compile time. JSON columns are
 * already serialised (text) so Postgres parses them once; timestamps and dates are ISO strings
 * (dates YYYY-MM-DD) or null.
 */

/** A column's value as the writers send it: JSON as its text, a timestamp or date as ISO text, always present. */
type Sent<Insert> =
  JsonObject extends NonNullable<Insert> ? string | Extract<Insert, null> : Exclude<Insert, Date | undefined>;

/** Some columns of a table, as the writers send them. */
export type ColumnValues<Table extends keyof Database, Column extends keyof Insertable<Database[Table]>> = {
  [C in Column]-?: Sent<Insertable<Database[Table]>[C]>;
};

/** The columns an insert into the table must name: not null and without a default. */
type RequiredColumns<Table extends keyof Database> = {
  [C in keyof Insertable<Database[Table]>]-?: undefined extends Insertable<Database[Table]>[C] ? never : C;
}[keyof Insertable<Database[Table]>];

/** A row the writers insert: `Column` must include every column an insert needs, or the type names those missing. */
export type InsertedRow<Table extends keyof Database, Column extends keyof Insertable<Database[Table]>> = [
  Exclude<RequiredColumns<Table>, Column>,
] extends [never]
  ? ColumnValues<Table, Column>
  : { missingColumns: Exclude<RequiredColumns<Table>, Column> };

/**
 * A plot: every column but the bookkeeping the writer sets (first_seen_at, changed_at, deleted_at).
 * content_hash is the plot's fingerprint as the service sent it (plot-fingerprint.ts): equal means
 * nothing to write; history_hash hashes the tracked attributes (risk status, risk level, geometry,
 * commodities, most recent analyses). production_date_* are YYYY-MM-DD, or null when unset or not a date.
 */
export type PlotRow = InsertedRow<
  'plots',
  | 'id'
  | 'owner_id'
  | 'name'
  | 'description'
  | 'country_code'
  | 'commodities'
  | 'surface_area_m2'
  | 'area_ha'
  | 'bbox_min_lon'
  | 'bbox_min_lat'
  | 'bbox_max_lon'
  | 'bbox_max_lat'
  | 'geometry'
  | 'geometry_valid'
  | 'geometry_issue'
  | 'risk_assessment_status'
  | 'risk_level'
  | 'production_date_start'
  | 'production_date_end'
  | 'filename'
  | 'custom_data'
  | 'most_recent_analysis_id'
  | 'euforobs_analysis_id'
  | 'precision_analysis_id'
  | 'is_own'
  | 'created_at'
  | 'updated_at'
  | 'content_hash'
  | 'history_hash'
>;

export type SpeciesRow = InsertedRow<'plot_species', 'plot_id' | 'position' | 'scientific_name' | 'common_name'>;

export type AnalysisRow = InsertedRow<
  'analyses',
  | 'id'
  | 'plot_id'
  | 'type'
  | 'status'
  | 'name'
  | 'version'
  | 'analysed_at'
  | 'deforested_area_m2'
  | 'deforested_geometry'
  | 'risk_of_deforestation'
  | 'custom_data'
  | 'created_at'
  | 'updated_at'
  | 'is_most_recent'
  | 'is_most_recent_of_type'
  | 'content_hash'
>;

/** The tracked attributes of one SCD-2 history row. */
export type HistoryAttributes = ColumnValues<
  'plot_history',
  | 'risk_assessment_status'
  | 'risk_level'
  | 'geometry_hash'
  | 'commodities'
  | 'most_recent_analysis_id'
  | 'euforobs_analysis_id'
  | 'precision_analysis_id'
>;

/** A history row as the writer sends it: the plot, its history hash and the tracked attributes (the SQL adds valid_from, is_current, run_id). */
export type HistoryRow = ColumnValues<'plot_history', 'plot_id' | 'history_hash' | keyof HistoryAttributes>;

/** A finding of an EUDR readiness check (domain/eudr) as the writer sends it; details as JSON text. The SQL adds valid_from, is_current, run_id. */
export type FindingRow = ColumnValues<'eudr_findings', 'plot_id' | 'code' | 'severity' | 'message' | 'details'>;

export interface PlotRows {
  plot: PlotRow;
  species: SpeciesRow[];
  analyses: AnalysisRow[];
  history: HistoryAttributes;
  /** The plot's current EUDR readiness findings, sorted by code (none for a plot with nothing to say). */
  findings: FindingRow[];
}

export type BusinessRow = InsertedRow<
  'businesses',
  | 'id'
  | 'name'
  | 'email'
  | 'username'
  | 'address_street'
  | 'address_zip'
  | 'address_postcode'
  | 'address_area'
  | 'address_city'
  | 'address_country_code'
  | 'address_country'
  | 'address_line1'
  | 'address_line2'
  | 'eori'
  | 'vat'
  | 'system_environment'
  | 'initial_locale'
  | 'units'
  | 'created_at'
  | 'updated_at'
  | 'is_caller'
  | 'content_hash'
>;

export type ConnectionRow = InsertedRow<
  'business_connections',
  | 'id'
  | 'source_business_id'
  | 'target_business_id'
  | 'partner_business_id'
  | 'role'
  | 'plots_count'
  | 'plots_commodities'
  | 'custom_data'
  | 'created_at'
  | 'updated_at'
  | 'content_hash'
>;

export type InvitationRow = InsertedRow<
  'business_invitations',
  | 'id'
  | 'status'
  | 'email'
  | 'sender_business_id'
  | 'business_id'
  | 'source_is_invitee'
  | 'custom_data'
  | 'created_at'
  | 'updated_at'
  | 'content_hash'
>;

/** A record that could not be mapped: kept out of the page, reported with the field and the rule. */
export interface RejectedRecord {
  id: string | null;
  field: string;
  rule: string;
}
