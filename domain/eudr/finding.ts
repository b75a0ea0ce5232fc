/**
 * A finding of an EUDR readiness check on one plot (docs/eudr-readiness.md): a stable code, a
 * severity, one human sentence and the numbers behind it. `blocking`: the plot cannot go into a
 * due-diligence statement as it is; `warning`: it may, but someone should look or explain; `info`:
 * worth knowing. The codes are stable: BI queries and the report filter on them.
 */
export type Severity = 'blocking' | 'warning' | 'info';

/** Every code the per-plot checks produce, with its severity (the overlap_* codes are computed in SQL). */
export const CHECKS = {
  geometry_missing: 'blocking',
  point_over_4_ha: 'blocking',
  point_area_unknown: 'warning',
  coordinates_out_of_range: 'blocking',
  polygon_empty: 'blocking',
  polygon_ring_not_closed: 'blocking',
  polygon_too_few_positions: 'blocking',
  polygon_self_intersection: 'blocking',
  polygon_too_complex_to_check: 'blocking',
  polygon_hole_outside: 'blocking',
  polygon_crosses_antimeridian: 'info',
  coordinate_precision_low: 'warning',
  surface_area_mismatch: 'warning',
  production_period_missing: 'blocking',
  production_date_invalid: 'blocking',
  production_end_before_start: 'blocking',
  production_before_cutoff: 'warning',
  analysis_missing: 'blocking',
  analysis_pending: 'blocking',
  analysis_failed: 'blocking',
  deforestation_detected: 'blocking',
  country_missing: 'blocking',
  country_code_invalid: 'warning',
  polygon_has_holes: 'blocking',
  geometry_invalid_at_6_decimals: 'blocking',
  point_area_too_small: 'blocking',
  country_outside_declared: 'blocking',
  coordinates_swapped: 'blocking',
  country_near_border: 'info',
  geometry_type_refused: 'blocking',
  geometry_type_not_checked: 'warning',
} as const satisfies Record<string, Severity>;

export type FindingCode = keyof typeof CHECKS;

/** Codes the spatial check writes (PostGIS only); the page writer never touches them. */
export const OVERLAP_CODE_PREFIX = 'overlap_';

export interface Finding {
  code: FindingCode;
  severity: Severity;
  message: string;
  details: Record<string, unknown> | null;
}

export function finding(code: FindingCode, message: string, details: Record<string, unknown> | null = null): Finding {
  return { code, severity: CHECKS[code], message, details };
}
