import { setTimeout as delay } from 'node:timers/promises';
import { sql } from 'kysely';
import { warehouseFor, type Warehouse } from './database.ts';
import { classifyWarehouseError } from './connection-errors.ts';
import { backoffCeiling } from '../platform/backoff.ts';

/**
 * Whether the warehouse takes work now: it answers and it is writable (not a standby after a failover,
 * not `default_transaction_read_only`). Returns why not, or undefined when it does.
 */
export async function warehouseRefusesWork(db: Warehouse): Promise<string | undefined> {
  try {
    // On the pool of short bounds: a probe stuck on a connection to a frozen server ends in seconds.
    const { rows } = await sql<{ readOnly: string; standby: boolean }>`
      select current_setting('transaction_read_only') as "readOnly", pg_is_in_recovery() as standby`.execute(
      warehouseFor(db, 'read'),
    );
    const row = rows[0];
    if (row?.standby) return 'the warehouse is a standby (in recovery): it takes no writes';
    if (row?.readOnly === 'on') return 'the warehouse is read-only (default_transaction_read_only)';
    return undefined;
  } catch (error) {
    return classifyWarehouseError(error)?.reason ?? (error instanceof Error ? error.message : String(error));
  }
}

const waits = new WeakMap<Warehouse, Promise<void>>();

/**
 * Resolves once the warehouse takes work again (warehouseRefusesWork), probing with backoff from a
 * quarter of a second to `maxDelayMs`. Every caller of one warehouse shares one probe loop, so a
 * hundred waiting activities cost one `select` per interval. `signal` ends one caller's wait early
 * (rejecting with its reason), never the shared loop.
 */
export function waitForWarehouse(db: Warehouse, signal?: AbortSignal, maxDelayMs = 5_000): Promise<void> {
  let shared = waits.get(db);
  if (!shared) {
    shared = (async () => {
      for (let attempt = 0; ; attempt++) {
        await delay(backoffCeiling(attempt + 1, { baseMs: 250, maxMs: maxDelayMs }));
        if ((await warehouseRefusesWork(db)) === undefined) return;
      }
    })().finally(() => waits.delete(db));
    waits.set(db, shared);
  }
  if (!signal) return shared;
  return new Promise<void>((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    shared.then(
      () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
