import { describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { openWarehouse } from '../../warehouse/database.ts';
import { roomForRunSets } from '../../warehouse/refresh/sweep.ts';
import { createTestDatabase } from '../support/databases.ts';

/** The end of a run hashes every id it saw: its transaction gets room for that, never less than the server gives. */
describe("the end of a run's memory for its sets of ids", () => {
  it('raises work_mem to 64 MB for its transaction only, and never lowers a larger setting', async () => {
    const db = openWarehouse(await createTestDatabase('run_end_memory'), 1);
    const megabytes = async (q: Pick<typeof db, 'getExecutor'>) =>
      Number(
        (await sql<{ v: string }>`select pg_size_bytes(current_setting('work_mem')) / 1024 / 1024 as v`.execute(q))
          .rows[0]!.v,
      );
    try {
      await sql`set work_mem = '4MB'`.execute(db);
      const inside = await db.transaction().execute(async (trx) => {
        await roomForRunSets(trx);
        return megabytes(trx);
      });
      expect(inside).toBe(64);
      // The pool's single connection: the session's own setting is back after the transaction.
      expect(await megabytes(db)).toBe(4);

      await sql`set work_mem = '256MB'`.execute(db);
      const larger = await db.transaction().execute(async (trx) => {
        await roomForRunSets(trx);
        return megabytes(trx);
      });
      expect(larger).toBe(256);
    } finally {
      await db.destroy();
    }
  });
});
