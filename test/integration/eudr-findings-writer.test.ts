import { describe, it, expect } from 'vitest';
import { sql } from 'kysely';
import { openWarehouse, type Warehouse } from '../../warehouse/database.ts';
import { copyFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { MIGRATIONS_DIR, migrateToLatest } from '../../warehouse/migrate.ts';
import { storePlotBatch, type PlotBatch } from '../../warehouse/refresh/plot-batch.ts';
import { mapPlots } from '../../warehouse/refresh/plot-page.ts';
import { beginRun } from '../../warehouse/refresh/run-ledger.ts';
import { normalisePlotsSkippingInvalid } from '../../upstream/index.ts';
import { createTestDatabase } from '../support/databases.ts';
import { warehouseWithoutTemporaryTables } from '../support/no-temporary-role.ts';
import { rowVersions } from '../support/warehouse-facts.ts';
import { samplePlot } from '../unit/upstream/samples.ts';
import { scratchDir } from '../support/scratch.ts';

/**
 * The page writer's SCD type 2 over EUDR findings, by COPY staging and over JSON parameters (a role
 * that may not create temporary tables): the same rows either way.
 */
const RUN = '00000000-0000-4000-8000-0000000000ee';

function pageOf(raw: unknown[], pageNo: number): PlotBatch {
  const { plots, invalid } = normalisePlotsSkippingInvalid(raw, 'test');
  return {
    runId: RUN,
    scope: 'supplier-e',
    supplierId: 'supplier-e',
    page: pageNo,
    ...mapPlots(plots, pageNo, false),
    invalid,
    requests: { requests: 1, retries: 0, rateLimited: 0 },
  };
}

/** Migrates `db` as a release before migration `number` left it (the migrations below it only). */
async function migrateBefore(db: Warehouse, number: string): Promise<void> {
  const dir = scratchDir('migrations');
  for (const f of (await readdir(MIGRATIONS_DIR)).filter((f) => f.endsWith('.sql') && f < number))
    await copyFile(join(MIGRATIONS_DIR, f), join(dir, f));
  await migrateToLatest(db, dir);
}

/** A plot's row of bi_eudr_plot_readiness, with its findings' codes. */
async function readiness(db: Warehouse, plotId: string) {
  const { rows } = await sql<{
    ready: boolean;
    checked: boolean;
    blocking_findings: number;
    blocking_codes: string[];
    codes: string[];
  }>`
    select ready, checked, blocking_findings, blocking_codes,
           array(select f->>'code' from jsonb_array_elements(findings) f) as codes
    from bi_eudr_plot_readiness where plot_id = ${plotId}`.execute(db);
  return rows[0]!;
}

interface Row {
  plot_id: string;
  code: string;
  current: boolean;
  closed: boolean;
  details: Record<string, unknown> | null;
}

/**
 * samplePlot moved from (10° E, 5° N), in Cameroon, to central Côte d'Ivoire (-5.5° E, 7.5° N), so a plot
 * declared CI lies in its country: these tests are about the writer's history, not the country check.
 */
function inCoteDIvoire(i: number, over: Record<string, unknown> = {}): Record<string, unknown> {
  const plot = samplePlot(i, over);
  const geometry = plot['geometry'] as { type: string; coordinates: number[][][] };
  return {
    ...plot,
    geometry: { ...geometry, coordinates: geometry.coordinates.map((r) => r.map(([x, y]) => [x! - 15.5, y! + 2.5])) },
  };
}

async function exercise(db: Warehouse): Promise<Row[]> {
  // samplePlot's ring winds round more than once: every one has polygon_self_intersection.
  const a = (over: Record<string, unknown> = {}) => inCoteDIvoire(1, { countryCode: "Côte d'Ivoire", ...over });
  const b = (over: Record<string, unknown> = {}) => inCoteDIvoire(2, { countryCode: null, ...over });
  const c = () => inCoteDIvoire(3);
  const first = await storePlotBatch(db, pageOf([a(), b(), c()], 1));
  expect(first.counts['eudr_findings']).toEqual({ inserted: 5, updated: 0, unchanged: 0, deleted: 0 });
  // As the spatial check would write it (PostGIS): the page writer must leave it alone.
  await sql`
    insert into eudr_findings (plot_id, code, severity, message, valid_from)
    values (${String(a().id)}, 'overlap_other_supplier', 'blocking', 'Overlaps another supplier''s plot.', now())`.execute(
    db,
  );

  // a: another country name (its finding changes); b: its country given (country_missing goes); c unchanged.
  const second = pageOf([a({ countryCode: 'Ivory Coast' }), b({ countryCode: 'CI' }), c()], 2);
  const changed = await storePlotBatch(db, second);
  expect(changed.counts['eudr_findings']).toEqual({ inserted: 1, updated: 2, unchanged: 2, deleted: 0 });
  const before = await rowVersions(db);
  const replay = await storePlotBatch(db, second);
  expect(replay.replayed).toBe(true);
  expect(await rowVersions(db)).toEqual(before);
  const { rows } = await sql<Row>`
    select plot_id, code, is_current as current, valid_to is not null as closed, details from eudr_findings
    order by plot_id, code, valid_from`.execute(db);
  return rows;
}

function expectHistory(rows: Row[]): void {
  const id = (i: number) => String(samplePlot(i).id);
  expect(rows.map(({ details: _, ...r }) => r)).toEqual([
    { plot_id: id(1), code: 'country_code_invalid', current: false, closed: true },
    { plot_id: id(1), code: 'country_code_invalid', current: true, closed: false },
    { plot_id: id(1), code: 'overlap_other_supplier', current: true, closed: false },
    { plot_id: id(1), code: 'polygon_self_intersection', current: true, closed: false },
    { plot_id: id(2), code: 'country_missing', current: false, closed: true },
    { plot_id: id(2), code: 'polygon_self_intersection', current: true, closed: false },
    { plot_id: id(3), code: 'polygon_self_intersection', current: true, closed: false },
  ]);
  expect(rows[0]!.details).toEqual({ countryCode: "Côte d'Ivoire" });
  expect(rows[1]!.details).toEqual({ countryCode: 'Ivory Coast' });
}

describe('EUDR findings in the page writer', () => {
  it('keeps their history by COPY staging, never touching overlap_* findings', async () => {
    const db = openWarehouse(await createTestDatabase('findings'), 2);
    try {
      await migrateToLatest(db);
      await beginRun(db, RUN, null);
      expectHistory(await exercise(db));
    } finally {
      await db.destroy();
    }
  });

  it('keeps the same history over JSON parameters when the role may not create temporary tables', async () => {
    const limited = await warehouseWithoutTemporaryTables('findingsjson', (admin) => beginRun(admin, RUN, null));
    try {
      expectHistory(await exercise(limited));
    } finally {
      await limited.destroy();
    }
  });

  it('0015 makes the next refresh rewrite every live plot once, so plots stored before it get their findings', async () => {
    const db = openWarehouse(await createTestDatabase('findings0015'), 2);
    try {
      await migrateBefore(db, '0015');
      await beginRun(db, RUN, null);
      // As a release before 0015 stored them (it wrote no findings): a live plot with its history, a
      // soft-deleted one, and the page that holds them.
      const live = pageOf([inCoteDIvoire(1)], 1).rows[0]!.plot;
      await sql`
        insert into plots (id, geometry_valid, content_hash, history_hash, deleted_at) values
          (${live.id}, false, ${live.content_hash}, ${live.history_hash}, null),
          (${String(samplePlot(2).id)}, false, 'fingerprint-2', 'h', now())`.execute(db);
      await sql`insert into plot_history (plot_id, valid_from, history_hash) values (${live.id}, now(), ${live.history_hash})`.execute(
        db,
      );
      await sql`
        insert into source_pages (scope, page, content_hash, ids, received)
        values ('supplier-e', 1, 'page-1', ${[live.id]}::text[], 1)`.execute(db);
      await migrateToLatest(db);
      const plots = await sql<{
        id: string;
        content_hash: string;
      }>`select id, content_hash from plots order by id`.execute(db);
      expect(plots.rows.map((r) => r.content_hash === '')).toEqual([true, false]);
      expect((await sql`select 1 from source_pages`.execute(db)).rows).toEqual([]);
      // Until then the checks have not seen it: not ready, for that reason (0018), not "no findings, ready".
      expect(await readiness(db, live.id)).toEqual({
        ready: false,
        checked: false,
        blocking_findings: 1,
        blocking_codes: ['not_checked'],
        codes: ['not_checked'],
      });
      // The next read of that page rewrites the live plot with its findings, and no history row.
      const rewritten = await storePlotBatch(db, { ...pageOf([inCoteDIvoire(1)], 1), sourceHash: 'page-1' });
      expect(rewritten.counts['plots']).toMatchObject({ updated: 1 });
      expect(rewritten.counts['plot_history']).toMatchObject({ inserted: 0, updated: 0 });
      expect(rewritten.counts['eudr_findings']).toMatchObject({ inserted: 1 });
      const checked = await readiness(db, live.id);
      expect(checked).toMatchObject({ checked: true });
      expect(checked.codes).not.toContain('not_checked');
      expect(checked.codes).toHaveLength(1);
      expect(checked.ready).toBe(checked.blocking_findings === 0);
    } finally {
      await db.destroy();
    }
  });
  it('0019 has the plots whose production dates were refused checked again, and reads their pages again', async () => {
    const db = openWarehouse(await createTestDatabase('findings0019'), 2);
    try {
      await migrateBefore(db, '0019');
      await beginRun(db, RUN, null);
      // Stored and checked before 0019: a plot whose padded start date was refused (stored null, with
      // an issue) on page 1, an ordinary plot on page 2.
      const [padded, plain] = pageOf([inCoteDIvoire(1), inCoteDIvoire(2)], 1).rows.map((r) => r.plot);
      await sql`
        insert into plots (id, geometry_valid, content_hash, history_hash) values
          (${padded!.id}, true, 'fingerprint-1', 'h'), (${plain!.id}, true, 'fingerprint-2', 'h')`.execute(db);
      await sql`
        insert into sync_issues (run_id, scope, entity, record_id, location, field, rule, action)
        values (${RUN}::uuid, 'supplier-e', 'plots', ${padded!.id}, 'page 1 #0', 'productionDateStart',
                'expected a date (YYYY-MM-DD)', 'nulled')`.execute(db);
      await sql`
        insert into source_pages (scope, page, content_hash, ids, received) values
          ('supplier-e', 1, 'page-1', ${[padded!.id]}::text[], 1), ('supplier-e', 2, 'page-2', ${[plain!.id]}::text[], 1)`.execute(
        db,
      );
      // 0019 alone: a later one-off (0024) has every live plot rewritten, which would hide what 0019 picks.
      await migrateBefore(db, '0020');
      const plots = await sql<{ id: string; content_hash: string }>`select id, content_hash from plots`.execute(db);
      expect(Object.fromEntries(plots.rows.map((r) => [r.id, r.content_hash]))).toEqual({
        [padded!.id]: '',
        [plain!.id]: 'fingerprint-2',
      });
      const pages = await sql<{ page: number }>`select page from source_pages order by page`.execute(db);
      expect(pages.rows.map((r) => r.page)).toEqual([2]);
    } finally {
      await db.destroy();
    }
  });
});
