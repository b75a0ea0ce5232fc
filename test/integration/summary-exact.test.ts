import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { openWarehouse, type Warehouse } from '../../warehouse/database.ts';
import { migrateToLatest } from '../../warehouse/migrate.ts';
import { refreshSummaries } from '../../warehouse/analyst-summaries.ts';
import { createTestDatabase } from '../support/databases.ts';

/** The terms of the summaries' exact sums (migration 0039): each float8 as the decimal that reads back as it. */
describe('summary_exact', () => {
  let db: Warehouse;
  beforeAll(async () => {
    db = openWarehouse(await createTestDatabase('summary_exact'), 1);
    await migrateToLatest(db);
  });
  afterAll(() => db?.destroy());

  it('keeps every float8 apart and reads back as it, where a numeric cast rounds to 15 digits', async () => {
    const { rows } = await sql<{
      exact: string;
      cast: string;
      back: boolean;
      apart: boolean;
      tiny: string;
      none: null;
    }>`
      select summary_exact(0.1::float8 + 0.2::float8)::text as exact, (0.1::float8 + 0.2::float8)::numeric::text as cast,
             summary_exact(1.0::float8 / 7)::float8 = 1.0::float8 / 7 as back,
             summary_exact(0.3::float8) <> summary_exact(0.1::float8 + 0.2::float8) as apart,
             summary_exact(1e-300::float8)::float8::text as tiny, summary_exact(null) as none`.execute(db);
    expect(rows[0]).toEqual({
      exact: '0.30000000000000004',
      cast: '0.3',
      back: true,
      apart: true,
      tiny: '1e-300',
      none: null,
    });
  });

  it('makes the same sums whatever digits the session asks floats to be written with', async () => {
    await sql`
      insert into plots (id, geometry, geometry_valid, content_hash, history_hash, is_own, area_ha)
      select 'p' || i, '{"type":"Point","coordinates":[1,2]}'::jsonb, true, 'h', 'h', true, 1.0::float8 / (3 + i)
      from generate_series(1, 50) as i`.execute(db);
    const totals = async () =>
      (await sql<{ v: string }>`select hectares_exact::text as v from summary_totals`.execute(db)).rows[0]?.v;
    expect((await refreshSummaries(db)).refreshed).toBe(true);
    const made = await totals();
    // 50 thirds, sevenths, ... summed exactly: far more digits than any float has.
    expect(made!.replace(/^\d*\./, '').length).toBeGreaterThan(17);
    await sql`set extra_float_digits = -3`.execute(db);
    try {
      expect(await refreshSummaries(db)).toMatchObject({ refreshed: true, rowsWritten: 0 });
    } finally {
      await sql`reset extra_float_digits`.execute(db);
    }
    expect(await totals()).toBe(made);
  });
});
