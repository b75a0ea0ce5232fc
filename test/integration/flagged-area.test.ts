import { describe, it, expect, afterAll } from 'vitest';
import { sql } from 'kysely';
import { copyFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { openWarehouse } from '../../warehouse/database.ts';
import { MIGRATIONS_DIR, migrateToLatest } from '../../warehouse/migrate.ts';
import { createTestDatabase } from '../support/databases.ts';
import { startWorkerHarness, type WorkerHarness } from '../support/worker-harness.ts';
import { scratchDir } from '../support/scratch.ts';

/** The migrations up to and including `last`, in a directory of their own (removed with the test). */
async function migrationsUpTo(last: string): Promise<string> {
  const dir = scratchDir('migrations');
  for (const f of (await readdir(MIGRATIONS_DIR)).filter((f) => f.endsWith('.sql') && f <= `${last}.sql`))
    await copyFile(join(MIGRATIONS_DIR, f), join(dir, f));
  return dir;
}

describe('a flagged plot keeps its hectares', () => {
  let h: WorkerHarness | undefined;
  afterAll(() => h?.close());

  it('0010 makes the next refresh rewrite the flagged plots an earlier release stored, and only those', async () => {
    const db = openWarehouse(await createTestDatabase('flaggedarea'), 2);
    const dir = await migrationsUpTo('0009_scan_verification');
    try {
      await migrateToLatest(db, dir);
      // As the release before 0010 left them: the bow-tie measured 0 ha, its page remembered as read.
      await sql`
        insert into plots (id, area_ha, geometry, geometry_valid, geometry_issue, content_hash, history_hash) values
          ('valid', 12.5, '{"type":"Polygon","coordinates":[]}', true, null, 'fingerprint-1', 'h'),
          ('bowtie', 0, '{"type":"Polygon","coordinates":[]}', false, 'self-intersection at [0, 0]', 'fingerprint-2', 'h'),
          ('no-geometry', null, null, false, 'no geometry', 'fingerprint-3', 'h');
        insert into source_pages (scope, page, content_hash, ids, received) values
          ('s1', 1, 'page-1', '{valid,no-geometry}', 2), ('s1', 2, 'page-2', '{valid,bowtie}', 2);`.execute(db);
      // Up to 0010 only: 0015 has every plot rewritten once (for its EUDR findings; eudr-readiness.test.ts).
      await migrateToLatest(db, await migrationsUpTo('0010_analyst_views'));
      const plots = await sql<{
        id: string;
        content_hash: string;
      }>`select id, content_hash from plots order by id`.execute(db);
      // Nothing to measure without a geometry: left alone.
      expect(plots.rows).toEqual([
        { id: 'bowtie', content_hash: '' },
        { id: 'no-geometry', content_hash: 'fingerprint-3' },
        { id: 'valid', content_hash: 'fingerprint-1' },
      ]);
      const pages = await sql<{ page: number }>`select page from source_pages order by page`.execute(db);
      expect(pages.rows).toEqual([{ page: 1 }]);
    } finally {
      await db.destroy();
    }
  });

  it('a refresh measures a bow-tie as drawn; a warehouse that stored 0 ha gets the area after what 0010 does, without a history row', async () => {
    h = await startWorkerHarness({ seed: 5, layout: { suppliers: [{ plots: 12 }] } }, 'flaggedarea');
    expect((await h.refresh()).status).toBe('succeeded');
    const bowtie = h.sim.control.oddRecords().bowTie!;
    const facts = async () =>
      (
        await sql<{ area_ha: number; geometry_valid: boolean; versions: number }>`
      select area_ha, geometry_valid, (select count(*)::int from plot_history x where x.plot_id = p.id) as versions
      from plots p where id = ${bowtie}`.execute(h!.db)
      ).rows[0]!;
    // The simulator's bow-tie covers half of a square of surfaceArea.
    const halfSurface = (h.sim.control.getPlot(bowtie)!['surfaceArea'] as number) / 2 / 10_000;
    const measured = await facts();
    expect(measured.geometry_valid).toBe(false);
    expect(measured.area_ha).toBeCloseTo(halfSurface, 2);

    // As a release before the fix stored it. A refresh alone keeps it: the plot and its page are unchanged.
    await sql`update plots set area_ha = 0 where id = ${bowtie}`.execute(h.db);
    expect((await h.refresh()).status).toBe('succeeded');
    expect((await facts()).area_ha).toBe(0);

    // What 0010 does to such a warehouse (its statements, checked in the test above).
    await sql`update plots set content_hash = '' where not geometry_valid and geometry is not null`.execute(h.db);
    await sql`delete from source_pages where ids && (select coalesce(array_agg(id), '{}') from plots where not geometry_valid and geometry is not null)`.execute(
      h.db,
    );
    expect((await h.refresh()).status).toBe('succeeded');
    expect(await facts()).toEqual({ ...measured, versions: 1 });
  });
});
