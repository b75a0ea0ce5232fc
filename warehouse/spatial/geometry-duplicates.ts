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
 *
 * Cutting every plot's geometry text cost a first load at 20,000 plots about 2 s, so only candidates
 * are cut: plots whose bounding box's south-west corner shares a cell of 0.0001° (about 11 m) with
 * another plot's, on four grids offset by half a cell in each direction, plus plots with a geometry
 * but no box. Why no pair is missed: two geometries equal once cut have every longitude (latitude)
 * within 1e-6 of its partner's, so their boxes' minimum longitudes (latitudes) are within 1e-6 too
 * (a minimum moves no more than the values it is taken over). Two grids half a cell apart have
 * lines 0.00005° apart, so at most one of them has a line between two values 1e-6 apart: in each
 * direction one offset puts the pair in one cell, and of the four grids one does in both.
 */
async function duplicateGroups(trx: Warehouse): Promise<string[][]> {
  const { rows } = await sql<{ ids: string[] }>`
    with live as materialized (
      select id, bbox_min_lon, bbox_min_lat from plots where deleted_at is null and geometry is not null
    ),
    cells as (
      select l.id, g.grid, floor(l.bbox_min_lon * 10000 + g.dx) as x, floor(l.bbox_min_lat * 10000 + g.dy) as y
      from live l cross join (values (0, 0.0, 0.0), (1, 0.5, 0.0), (2, 0.0, 0.5), (3, 0.5, 0.5)) as g (grid, dx, dy)
      where l.bbox_min_lon is not null and l.bbox_min_lat is not null
    ),
    candidates as (
      select c.id from cells c
      join (select grid, x, y from cells group by grid, x, y having count(*) > 1) shared using (grid, x, y)
      union
      select id from live where bbox_min_lon is null or bbox_min_lat is null
    ),
    cut as (
      select p.id, regexp_replace(
          jsonb_build_object('type', p.geometry -> 'type', 'coordinates', p.geometry -> 'coordinates',
                             'geometries', p.geometry -> 'geometries')::text,
          ${'(\\.[0-9]{6})[0-9]+'}, ${'\\1'}, 'g')::jsonb as geometry
      from plots p join candidates c on c.id = p.id
    )
    select array_agg(c.id order by c.id) as ids from cut c group by c.geometry having count(*) > 1`.execute(trx);
  return rows.map((r) => r.ids);
}
