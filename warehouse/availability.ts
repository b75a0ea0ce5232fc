import { setTimeout as delay } from 'node:timers/promises';
import { warehouseFor, type Warehouse } from './database.ts';
import { classifyWarehouseError } from './connection-errors.ts';
import { probeWrites } from './write-probe.ts';
import { backoffCeiling } from '../platform/backoff.ts';

/**
 * Whether the warehouse takes work now: it answers and it can write (not a standby after a failover,
 * not `default_transaction_read_only`, not out of disk under ddsync's tables). A read alone answered
 * on a full data disk, so every waiting activity ran again at once, re-read its page from the service
 * and failed on the disk again (63 failed attempts in a 24 s outage; 6 in 26 s once it waited for the
 * write probe, write-probe.ts, to succeed). Returns why not, or undefined when it does.
 */
export async function warehouseRefusesWork(db: Warehouse): Promise<string | undefined> {
  try {
    // On the pool of short bounds: a probe stuck on a connection to a frozen server ends in seconds.
    const writes = await probeWrites(warehouseFor(db, 'read'));
    return writes.outcome === 'refused' ? `the warehouse cannot write: ${writes.reason}` : undefined;
  } catch (error) {
    return classifyWarehouseError(error)?.reason ?? (error instanceof Error ? error.message : String(error));
  }
}

const waits = new WeakMap<Warehouse, Promise<void>>();

/**
 * Resolves once the warehouse takes work again (warehouseRefusesWork), probing with backoff from a
 * quarter of a second to `maxDelayMs`. Every caller of one warehouse shares one probe loop, so a
 * hundred waiting activities cost one probe per interval. `signal` ends one caller's wait early
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
