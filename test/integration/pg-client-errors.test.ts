import { describe, it, expect } from 'vitest';
import { sql } from 'kysely';
import pg from 'pg';
import { openWarehouse, withClientTransaction, newClient } from '../../warehouse/database.ts';
import { classifyWarehouseError } from '../../warehouse/connection-errors.ts';
import { createTestDatabase } from '../support/databases.ts';

/**
 * The rule of warehouse/database.ts (guardClient): a pg client has an 'error' listener whether it is
 * idle in the pool, checked out, or made alone. Without it, an administrator ending the session of a
 * checked-out client emitted an 'error' nobody listened to, and Node ended the worker.
 */
describe('pg clients and a session ended by the server', () => {
  it('a checked-out client has a listener, and a terminated session fails its statement instead of the process', async () => {
    const url = await createTestDatabase('pgerrors');
    const db = openWarehouse(url, 2, 'ddsync-pg-errors-test');
    const admin = new pg.Client({ connectionString: url });
    admin.on('error', () => undefined);
    await admin.connect();
    const uncaught: unknown[] = [];
    const onUncaught = (error: unknown) => uncaught.push(error);
    process.on('uncaughtException', onUncaught);
    try {
      const failure = await withClientTransaction(
        db,
        async () => undefined,
        async (trx, client) => {
          // Checked out: the pool's own idle listener is gone; ddsync's must be there.
          expect(client.listenerCount('error')).toBeGreaterThanOrEqual(1);
          const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx);
          await admin.query('select pg_terminate_backend($1)', [rows[0]!.pid]);
          // The server's goodbye reaches the idle, checked-out client as an 'error' event first.
          await new Promise((resolve) => setTimeout(resolve, 200));
          await sql`select 1`.execute(trx);
        },
      ).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(classifyWarehouseError(failure)).toMatchObject({ kind: 'unavailable' });
      expect(uncaught).toEqual([]);
      // The pool dropped the broken client and makes a new one.
      expect((await sql<{ one: number }>`select 1 as one`.execute(db)).rows[0]!.one).toBe(1);
      // A client made alone is guarded the same way.
      expect(newClient({ connectionString: url }).listenerCount('error')).toBe(1);
    } finally {
      process.off('uncaughtException', onUncaught);
      await admin.end();
      await db.destroy();
    }
  });
});
