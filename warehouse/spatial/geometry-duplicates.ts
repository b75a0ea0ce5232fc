import { sql } from 'kysely';
import type { Warehouse } from '../database.ts';
import { GEOMETRY_DUPLICATE_CODE, geometryDuplicateFindings } from '../../domain/eudr/geometry-duplicates.ts';
import { runChanged, writeCrossPlotFindings } from './cross-plot-findings.ts';

/** What the duplicate check did at the end of a refresh. */
export type DuplicateOutcome =
  | { ran: false; reason: string }
  | { ran: true; groups: number; findings: number; opened: number; closed: number; seconds: number }
  | { ran: false; failed: string };

/**
 * The same geometry under two plot ids (domain/eudr/geometry-duplicates.ts), at the end of every
 * refresh, after the sweep: plain SQL, so with or without PostGIS. Current plots (not soft-deleted)
 * are grouped by their geometry as the EU keeps it: only `type` and `coordinates` (a collection's
 * `geometries`), each number's
 * decimal text cut after 6 decimals (the EU truncates: six-decimals.ts), compared as jsonb, whose
 * numbers compare by value (1.5 = 1.50). Not the same geometry to this check, though it is the same
 * land: rings that start at another corner or run the other way, a Polygon against a one-polygon
 * MultiPolygon (docs/eudr-readiness.md).
 *
 * Findings keep the history every finding has: vanished or changed ones closed (a plot deleted or
 * redrawn closes its partner's too), new ones opened, unchanged ones untouched, so an unchanged
 * refresh writes nothing. It runs only when the run inserted, updated or deleted plots: it reads
 * every plot's geometry, which cost a refresh that changed nothing 2 s of its 2.8 s at 20,000 plots.
 * A warehouse upgraded to this check gets its findings from the next refresh all the same: migration
 * 0024 has that refresh rewrite every plot. A failure never fails the refresh: the next one that
 * changes plots tries again.
 */
export async function checkGeometryDuplicatesAfterRun(db: Warehouse, runId: string): Promise<DuplicateOutcome> {
  if (!(await runChanged(db, runId, ['plots']))) return { ran: false, reason: 'no plot changed' };
  const started = performance.now();
  try {
    const counts = await db.transaction().execute(async (trx) => {
      const groups = await duplicateGroups(trx);
      const found = geometryDuplicateFindings(groups);
      const written = await writeCrossPlotFindings(trx, runId, [GEOMETRY_DUPLICATE_CODE], found);
      return { groups: groups.length, findings: found.length, ...written };
    });
    return { ran: true, ...counts, seconds: (performance.now() - started) / 1000 };
  } catch (error) {
    return { ran: false, failed: error instanceof Error ? error.message : String(error) };
  }
}

/**
 * Plot ids sharing a geometry as the EU keeps it, each group sorted. The cut is on jsonb's text, in
 * which a number is plain decimal digits (never an exponent), so cutting the text is the EU's
 * truncation toward zero, exact where float arithmetic would not be; -0.0000001 becomes -0.000000,
 * equal to 0 as a jsonb number.
 */
async function duplicateGroups(trx: Warehouse): Promise<string[][]> {
  const { rows } = await sql<{ ids: string[] }>`
    with cut as (
      select p.id, regexp_replace(
          jsonb_build_object('type', p.geometry -> 'type', 'coordinates', p.geometry -> 'coordinates',
                             'geometries', p.geometry -> 'geometries')::text,
          ${'(\\.[0-9]{6})[0-9]+'}, ${'\\1'}, 'g')::jsonb as geometry
      from plots p
      where p.deleted_at is null and p.geometry is not null
    )
    select array_agg(c.id order by c.id) as ids from cut c group by c.geometry having count(*) > 1`.execute(trx);
  return rows.map((r) => r.ids);
}
