import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { sql } from 'kysely';
import type pg from 'pg';
import { openWarehouse, warehouseFor, withClientTransaction, type Warehouse } from '../../warehouse/database.ts';
import { classifyWarehouseError } from '../../warehouse/connection-errors.ts';
import { WarehouseSilentError } from '../../warehouse/statement-watch.ts';
import { copyRows } from '../../warehouse/refresh/copy-text.ts';
import { scaledBounds } from '../../warehouse/statement-bounds.ts';
import { withCancellation } from '../../platform/cancellation.ts';
import { createTestDatabase } from '../support/databases.ts';

/**
 * Issue 34, part 2: a warehouse that freezes instead of refusing. A backend of the run's cluster is
 * stopped with SIGSTOP (as a frozen VM or a black-holed network: its kernel still acknowledges TCP, so
 * nothing fails by itself) while a statement or a COPY waits on it. The bounds are scaled down (0.02:
 * a page's statement 2.4 s on the server, 3.4 s on the client) so they are met within the test.
 */
const SCALE = 0.02;
const WORK = scaledBounds('work', SCALE);

describe('statements bounded twice, on a real Postgres', () => {
  let url: string;
  let db: Warehouse;
  const frozen = new Set<number>();

  function freeze(pid: number): void {
    frozen.add(pid);
    process.kill(pid, 'SIGSTOP');
  }
  function thaw(pid: number): void {
    process.kill(pid, 'SIGCONT');
    frozen.delete(pid);
  }

  beforeAll(async () => {
    url = await createTestDatabase('bounds');
    db = openWarehouse(url, 2, 'ddsync-bounds-test', { timeoutScale: SCALE });
  });
  afterAll(async () => {
    // Never leave a backend of the shared cluster stopped, whatever failed.
    for (const pid of frozen) thaw(pid);
    await db.destroy();
  });

  /** Runs `then` on a connection whose backend is frozen first; returns what the work threw. */
  async function onFrozenBackend(then: (trx: Warehouse, client: pg.PoolClient) => Promise<unknown>): Promise<unknown> {
    let pid = 0;
    const failure = await withClientTransaction(
      db,
      async () => undefined,
      async (trx, client) => {
        pid = (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx)).rows[0]!.pid;
        freeze(pid);
        return then(trx, client);
      },
    ).then(
      () => undefined,
      (error: unknown) => error,
    );
    thaw(pid);
    return failure;
  }

  it('gives each session the server-side bounds of its kind', async () => {
    const settings = async (w: Warehouse) =>
      (
        await sql<{ statement: string; lock: string }>`
          select current_setting('statement_timeout') as statement, current_setting('lock_timeout') as lock`.execute(w)
      ).rows[0];
    expect(await settings(db)).toEqual({ statement: `${WORK.statementMs}ms`, lock: `${WORK.lockMs}ms` });
    const long = scaledBounds('long', SCALE);
    expect(await settings(warehouseFor(db, 'long'))).toEqual({
      statement: `${long.statementMs / 1000}s`,
      lock: `${long.lockMs}ms`,
    });
    // A stricter bound the server gives (a DBA's, for the database) is kept; the other is ddsync's.
    const name = new URL(url).pathname.slice(1);
    await sql.raw(`alter database ${name} set lock_timeout = '300ms'`).execute(db);
    const strict = openWarehouse(url, 1, 'ddsync-bounds-strict', { timeoutScale: SCALE });
    try {
      expect(await settings(strict)).toEqual({ statement: `${WORK.statementMs}ms`, lock: '300ms' });
    } finally {
      await strict.destroy();
      await sql.raw(`alter database ${name} reset lock_timeout`).execute(db);
    }
    // A live server meets its own bound first and says so (57014), on a connection that stays usable.
    const slow = await sql`select pg_sleep(30)`.execute(db).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect((slow as { code?: string }).code).toBe('57014');
    expect(classifyWarehouseError(slow)).toMatchObject({ kind: 'contended' });
  });

  it('fails a statement whose server froze at the client bound, and never pools its connection again', async () => {
    const started = Date.now();
    const failure = await onFrozenBackend((trx) => sql`select 1`.execute(trx));
    expect(failure).toBeInstanceOf(WarehouseSilentError);
    expect(Date.now() - started).toBeGreaterThanOrEqual(WORK.clientMs - 50);
    expect(classifyWarehouseError(failure)).toMatchObject({ kind: 'unavailable' });
    // A statement after the cut on the same connection (a cleanup, a rollback) fails for the same reason.
    const again = await onFrozenBackend(async (trx) => {
      const cutFirst = await sql`select 1`.execute(trx).then(
        () => undefined,
        (error: unknown) => error,
      );
      throw Object.assign(new Error('both'), {
        first: cutFirst,
        second: await sql`select 2`.execute(trx).catch((e) => e),
      });
    });
    expect((again as { first: unknown }).first).toBeInstanceOf(WarehouseSilentError);
    expect((again as { second: unknown }).second).toBe((again as { first: unknown }).first);
    // The pool made a new connection: the next statement is answered (by another backend).
    const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(db);
    expect(frozen.has(rows[0]!.pid)).toBe(false);
  });

  it('fails a COPY whose server froze mid-stream (no drain for ever)', async () => {
    // About 24 MB of rows: far more than the socket buffers hold, so the COPY waits for 'drain'.
    const rows = Array.from({ length: 12_000 }, (_, i) => ({ id: i, body: 'x'.repeat(2_000) }));
    const failure = await onFrozenBackend(async (trx, client) => {
      await sql`create temporary table frozen_copy (id int, body text)`.execute(trx);
      await copyRows(client, 'frozen_copy', rows, { id: 'int4', body: 'text' });
    });
    expect(failure).toBeInstanceOf(WarehouseSilentError);
    expect(classifyWarehouseError(failure)).toMatchObject({ kind: 'unavailable' });
  });

  it("aborts a statement with the work's cancellation, at once", async () => {
    const controller = new AbortController();
    const reason = new Error('the activity was cancelled');
    const statement = withCancellation(controller.signal, () => sql`select pg_sleep(2)`.execute(db)).then(
      () => undefined,
      (error: unknown) => error,
    );
    controller.abort(reason);
    expect(await statement).toBe(reason);
    // Its connection is gone; the pool answers on another.
    expect((await sql<{ one: number }>`select 1 as one`.execute(db)).rows[0]!.one).toBe(1);
  });
});
