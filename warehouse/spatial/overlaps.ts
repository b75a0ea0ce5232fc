import { type RawBuilder, sql } from 'kysely';
import type { Warehouse } from '../database.ts';
import { FINDINGS_PER_BATCH, openCrossPlotFindings, runChanged } from './cross-plot-findings.ts';
import {
  BORDER_ERROR_M,
  OVERLAP_CODES,
  newOverlapTally,
  overlapCode,
  overlapFinding,
  tallyOverlap,
  type OverlapCode,
  type OverlapFinding,
  type OverlapTally,
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
 * every finding: vanished or changed ones closed, new ones opened, unchanged ones untouched. The
 * pairs stay in Postgres and the findings are made plot by plot (streamOverlapFindings), so the
 * worker's memory does not grow with the number of pairs or findings. A failure
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
      const pairs = await stageOverlappingPairs(trx);
      const writer = await openCrossPlotFindings(trx, runId, OVERLAP_CODES);
      await streamOverlapFindings(trx, (batch) => writer.add(batch));
      const written = await writer.apply();
      await sql`
        update spatial_state set overlaps_checked_at = now(), overlaps_run_id = ${runId}::uuid,
          overlaps_seconds = ${(performance.now() - started) / 1000}, overlaps_error = null`.execute(trx);
      return { pairs, findings: writer.staged, ...written };
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

/**
 * The tolerance rule of overlap-findings.ts `beyondTolerance` as SQL, which stays its definition:
 * overlap > 2 × BORDER_ERROR_M × √(max(0, smaller area)), the same float8 operations in the same order
 * as toleranceM2 (test/postgis/overlaps-bounded.test.ts checks they agree).
 */
export function beyondToleranceSql(overlapM2: RawBuilder<unknown>, aM2: RawBuilder<unknown>, bM2: RawBuilder<unknown>) {
  return sql<boolean>`${overlapM2} > ${2 * BORDER_ERROR_M}::float8 * sqrt(greatest(0, least(${aM2}, ${bM2})))`;
}

/**
 * Math.round(m2 / 100) as SQL, exactly (ties up, as JavaScript rounds; Postgres's round() would round
 * them to even): the 0.01 ha an overlap counts as in compareOthers's order. v − floor(v) is exact
 * for a float8.
 */
export function hundredthsOfHaSql(m2: RawBuilder<unknown>) {
  return sql<number>`(floor(${m2} / 100) + case when ${m2} / 100 - floor(${m2} / 100) >= 0.5 then 1 else 0 end)`;
}

/** Rows of the overlap stream fetched per round trip. */
const ROWS_PER_FETCH = 1_000;

/**
 * Every pair of current polygon plots that intersect beyond the tolerance, once (a < b), with the
 * shared area and both areas on the spheroid, into the temp table overlap_pairs, and who claims each
 * plot of them into overlap_claimants; all in Postgres, however many pairs there are. Returns how
 * many pairs intersect (within the tolerance or beyond). The join probes the GiST index plots_geom
 * (&& inside ST_Intersects) once per plot; only pairs whose shapes really intersect pay for
 * ST_Intersection.
 */
async function stageOverlappingPairs(trx: Warehouse): Promise<number> {
  await sql`
    create temp table overlap_pairs (a text not null, b text not null, overlap_m2 float8 not null,
      a_m2 float8 not null, b_m2 float8 not null) on commit drop`.execute(trx);
  const counted = await sql<{ pairs: number }>`
    with pairs as materialized (
      select a.id as a, b.id as b,
        ST_Area(ST_Intersection(a.geom, b.geom)::geography) as overlap_m2,
        ST_Area(a.geom::geography) as a_m2, ST_Area(b.geom::geography) as b_m2
      from plots a
      join plots b on ST_Intersects(a.geom, b.geom) and b.id > a.id
      where a.deleted_at is null and a.geom is not null and ST_Dimension(a.geom) = 2
        and b.deleted_at is null and ST_Dimension(b.geom) = 2
    ),
    beyond as (
      insert into overlap_pairs
      select * from pairs p where ${beyondToleranceSql(sql`p.overlap_m2`, sql`p.a_m2`, sql`p.b_m2`)}
    )
    select count(*)::int as pairs from pairs`.execute(trx);
  await sql`
    create temp table overlap_claimants (plot_id text primary key, own boolean not null,
      suppliers text[] not null) on commit drop`.execute(trx);
  // The live links filtered in the aggregate, not in WHERE: with deleted_at is null there, a planner
  // short of statistics (links just written) picked the partial index plot_suppliers_live, whose
  // first column is supplier_id, and read all of it per pair (92 s at 100k plots instead of 1 s).
  // Now it is once per plot of a pair beyond the tolerance, but the same trap.
  await sql`
    insert into overlap_claimants (plot_id, own, suppliers)
    select p.id, p.is_own,
      (select coalesce(array_agg(ps.supplier_id order by ps.supplier_id) filter (where ps.deleted_at is null), '{}')
       from plot_suppliers ps where ps.plot_id = p.id)
    from plots p
    where p.id in (select a from overlap_pairs union select b from overlap_pairs)`.execute(trx);
  // Temp tables have no statistics until analysed; the stream's sort and joins are planned on them.
  await sql`analyze overlap_pairs, overlap_claimants`.execute(trx);
  return counted.rows[0]?.pairs ?? 0;
}

interface OverlapRow {
  plot_id: string;
  plot_m2: number;
  own: boolean;
  suppliers: string[];
  other_id: string;
  overlap_m2: number;
  other_own: boolean;
  other_suppliers: string[];
}

/**
 * The findings, plot by plot, handed to `write` in batches of at most FINDINGS_PER_BATCH: each pair
 * beyond the tolerance read twice (once for each plot) through a server-side cursor, ROWS_PER_FETCH
 * rows at a time, ordered by plot and then in compareOthers's order (overlap in 0.01 ha descending,
 * then the other plot's id). So the worker holds one fetch, one plot's tallies (count, total and
 * MAX_LISTED others per code: overlap-findings.ts) and one batch of findings, whatever the number
 * of pairs: 5,000 copies of one polygon (12.5 M pairs) cost Postgres time and temp space, not heap.
 *
 * The order by id is byte order (collate "C"), which is compareOthers's UTF-16 order for the ids the
 * service gives (UUIDs, ASCII). For ids where the two differ (characters past U+FFFF against U+E000–
 * U+FFFF), the listing is still in compareOthers's order (tallyOverlap inserts in order) and the total
 * still deterministic, summed in byte order.
 */
async function streamOverlapFindings(trx: Warehouse, write: (batch: OverlapFinding[]) => Promise<void>): Promise<void> {
  // Every row is read: plan for all of them, not for the first tenth (the cursor default).
  await sql`select set_config('cursor_tuple_fraction', '1', true)`.execute(trx);
  await sql`
    declare overlap_stream no scroll cursor for
    select s.plot_id, s.plot_m2, c.own, c.suppliers, s.other_id, s.overlap_m2, o.own as other_own,
      o.suppliers as other_suppliers
    from (
      select a as plot_id, a_m2 as plot_m2, b as other_id, overlap_m2 from overlap_pairs
      union all
      select b, b_m2, a, overlap_m2 from overlap_pairs
    ) s
    join overlap_claimants c on c.plot_id = s.plot_id
    join overlap_claimants o on o.plot_id = s.other_id
    order by s.plot_id collate "C", ${hundredthsOfHaSql(sql`s.overlap_m2`)} desc, s.other_id collate "C"`.execute(trx);
  let plot: string | undefined;
  const tallies = new Map<OverlapCode, OverlapTally>();
  let batch: OverlapFinding[] = [];
  const finishPlot = async () => {
    for (const code of OVERLAP_CODES) {
      const tally = tallies.get(code);
      if (tally) batch.push(overlapFinding(plot!, code, tally));
    }
    tallies.clear();
    if (batch.length >= FINDINGS_PER_BATCH - OVERLAP_CODES.length) {
      await write(batch);
      batch = [];
    }
  };
  for (;;) {
    const { rows } = await sql<OverlapRow>`fetch ${sql.raw(String(ROWS_PER_FETCH))} from overlap_stream`.execute(trx);
    for (const r of rows) {
      if (r.plot_id !== plot) {
        if (plot !== undefined) await finishPlot();
        plot = r.plot_id;
      }
      const code = overlapCode(
        { suppliers: r.suppliers, own: r.own },
        { suppliers: r.other_suppliers, own: r.other_own },
      );
      let tally = tallies.get(code);
      if (!tally) tallies.set(code, (tally = newOverlapTally(r.plot_m2)));
      tallyOverlap(tally, {
        plot_id: r.other_id,
        overlap_m2: r.overlap_m2,
        claimants: { suppliers: r.other_suppliers, own: r.other_own },
      });
    }
    if (rows.length < ROWS_PER_FETCH) break;
  }
  if (plot !== undefined) await finishPlot();
  if (batch.length > 0) await write(batch);
  await sql`close overlap_stream`.execute(trx);
}
