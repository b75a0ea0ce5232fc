import { sql } from 'kysely';
import type { Warehouse } from '../database.ts';
import { runChanged, writeCrossPlotFindings } from './cross-plot-findings.ts';
import {
  OVERLAP_CODES,
  overlapFindings,
  type Claimants,
  type OverlapPair,
} from '../../domain/eudr/overlap-findings.ts';

/** What the overlap check did at the end of a refresh. */
export type OverlapOutcome =
  | { ran: false; reason: string }
  | { ran: true; pairs: number; findings: number; opened: number; closed: number; seconds: number }
  | { ran: false; failed: string };

/**
 * The overlap check (docs/postgis.md), at the end of a refresh: with PostGIS only, and only when the
 * run changed plots or their supplier links, or the check has not run over the current geometries
 * yet. Current plots whose polygons overlap beyond the tolerance (overlap-findings.ts) get
 * overlap_same_supplier / overlap_other_supplier findings in eudr_findings, with the same history as
 * every finding: vanished or changed ones closed, new ones opened, unchanged ones untouched. A failure
 * never fails the refresh: it is recorded in spatial_state (eudr_overlap_checked() is then false)
 * and the next refresh tries again.
 */
export async function checkOverlapsAfterRun(db: Warehouse, runId: string): Promise<OverlapOutcome> {
  const state = await sql<{ mode: string; checked: boolean; schema: string | null }>`
    select s.mode, s.overlaps_checked_at is not null as checked,
      (select n.nspname from pg_extension e join pg_namespace n on n.oid = e.extnamespace where e.extname = 'postgis') as schema
    from spatial_state s`
    .execute(db)
    .catch(() => ({ rows: [] }));
  const s = state.rows[0];
  if (s?.mode !== 'postgis' || !s.schema) return { ran: false, reason: 'no PostGIS' };
  if (s.checked && !(await runChanged(db, runId, ['plots', 'plot_suppliers'])))
    return { ran: false, reason: 'no plot changed' };
  const started = performance.now();
  try {
    const counts = await db.transaction().execute(async (trx) => {
      // PostGIS's functions wherever its schema is, after the warehouse's own.
      await sql`select set_config('search_path', current_setting('search_path') || ', ' || quote_ident(${s.schema}), true)`.execute(
        trx,
      );
      // JIT compiled this query's PostGIS calls for about a second, to save nothing: off for it.
      await sql`select set_config('jit', 'off', true)`.execute(trx);
      const { pairs, claimants } = await overlappingPairs(trx);
      const found = overlapFindings(pairs, (id) => claimants.get(id) ?? { suppliers: [], own: false });
      const written = await writeCrossPlotFindings(trx, runId, OVERLAP_CODES, found);
      await sql`
        update spatial_state set overlaps_checked_at = now(), overlaps_run_id = ${runId}::uuid,
          overlaps_seconds = ${(performance.now() - started) / 1000}, overlaps_error = null`.execute(trx);
      return { pairs: pairs.length, findings: found.length, ...written };
    });
    return { ran: true, ...counts, seconds: (performance.now() - started) / 1000 };
  } catch (error) {
    const failed = error instanceof Error ? error.message : String(error);
    await sql`update spatial_state set overlaps_checked_at = null, overlaps_error = ${failed}`
      .execute(db)
      .catch(() => undefined);
    return { ran: false, failed };
  }
}

/** Whether the run inserted, changed or removed plots or supplier links (its sync_run_counts). */

/**
 * Every pair of current polygon plots that intersect, once (a < b), with the shared area, both areas
 * on the spheroid, and who claims each plot. The join probes the GiST index plots_geom (&& inside
 * ST_Intersects) once per plot; only pairs whose shapes really intersect pay for ST_Intersection.
 */
async function overlappingPairs(trx: Warehouse): Promise<{ pairs: OverlapPair[]; claimants: Map<string, Claimants> }> {
  const { rows } = await sql<{
    a: string;
    b: string;
    overlap_m2: number;
    a_m2: number;
    b_m2: number;
    a_own: boolean;
    b_own: boolean;
    a_suppliers: string[];
    b_suppliers: string[];
  }>`
    with pairs as materialized (
      select a.id as a, b.id as b, a.is_own as a_own, b.is_own as b_own,
        ST_Area(ST_Intersection(a.geom, b.geom)::geography) as overlap_m2,
        ST_Area(a.geom::geography) as a_m2, ST_Area(b.geom::geography) as b_m2
      from plots a
      join plots b on ST_Intersects(a.geom, b.geom) and b.id > a.id
      where a.deleted_at is null and a.geom is not null and ST_Dimension(a.geom) = 2
        and b.deleted_at is null and ST_Dimension(b.geom) = 2
    )
    -- The live links filtered in the aggregate, not in WHERE: with deleted_at is null there, a planner
    -- short of statistics (links just written) picked the partial index plot_suppliers_live, whose
    -- first column is supplier_id, and read all of it per pair (92 s at 100k plots instead of 1 s).
    select p.*,
      (select coalesce(array_agg(ps.supplier_id order by ps.supplier_id) filter (where ps.deleted_at is null), '{}')
       from plot_suppliers ps where ps.plot_id = p.a) as a_suppliers,
      (select coalesce(array_agg(ps.supplier_id order by ps.supplier_id) filter (where ps.deleted_at is null), '{}')
       from plot_suppliers ps where ps.plot_id = p.b) as b_suppliers
    from pairs p`.execute(trx);
  const claimants = new Map<string, Claimants>();
  for (const r of rows) {
    claimants.set(r.a, { suppliers: r.a_suppliers, own: r.a_own });
    claimants.set(r.b, { suppliers: r.b_suppliers, own: r.b_own });
  }
  const pairs = rows.map((r) => ({ a: r.a, b: r.b, overlapM2: r.overlap_m2, aM2: r.a_m2, bM2: r.b_m2 }));
  return { pairs, claimants };
}
