import { setTimeout as delay } from 'node:timers/promises';
import type { Logger } from '../platform/logger.ts';
import { Outage } from '../platform/outage.ts';
import { backoffCeiling } from '../platform/backoff.ts';
import { classifyWarehouseError } from '../warehouse/connection-errors.ts';
import { ConnectionFailedError } from './connection-failure.ts';

/**
 * A long-running process (a worker, the receiver) started while a dependency is away waits for it
 * instead of exiting: under systemd without a restart policy, or started before the database at boot,
 * it comes up on its own when the dependency does. What waiting cannot mend (a password refused, a
 * database that does not exist, an API key refused) still ends the start at once, in one sentence.
 */

/** Whether `error` from a first connection means "not there yet" (wait) rather than "refused" (stop). */
export function worthWaitingFor(error: unknown): boolean {
  if (error instanceof ConnectionFailedError) {
    if (!error.answered) return true;
    // Postgres answered, and what it said may be passing: starting up, shutting down, all connections taken.
    return classifyWarehouseError(error.underlying)?.kind === 'unavailable';
  }
  return classifyWarehouseError(error)?.kind === 'unavailable';
}

export interface WaitOptions {
  /** "the warehouse", "Temporal". */
  name: string;
  log: Logger;
  /** Default a minute: the reminder while it stays away. */
  remindEveryMs?: number;
  /** The longest pause between attempts; default 10 s. */
  maxDelayMs?: number;
  /** Ends the wait (SIGINT, SIGTERM): the attempt's last error is thrown. */
  signal?: AbortSignal;
}

/**
 * `connect()` again and again until it succeeds or fails in a way waiting cannot mend. Says so once when
 * the wait begins, once a minute while it lasts, and once when the dependency answers.
 */
export async function untilAvailable<T>(connect: () => Promise<T>, o: WaitOptions): Promise<T> {
  const outage = new Outage({ name: o.name, log: o.log, remindEveryMs: o.remindEveryMs ?? 60_000 });
  for (let attempt = 1; ; attempt++) {
    try {
      const connected = await connect();
      outage.recovered();
      return connected;
    } catch (error) {
      if (!worthWaitingFor(error) || o.signal?.aborted) throw error;
      outage.failed(error instanceof Error ? error.message : String(error), 'waiting for it before starting');
      try {
        await delay(backoffCeiling(attempt, { baseMs: 500, maxMs: o.maxDelayMs ?? 10_000 }), undefined, {
          signal: o.signal,
        });
      } catch {
        throw error;
      }
    }
  }
}

/** Aborted on the first SIGINT or SIGTERM, until `done()`: a process waiting to start stops when told to. */
export function stopSignal(): { signal: AbortSignal; done(): void } {
  const controller = new AbortController();
  const abort = () => controller.abort(new Error('stopped while waiting to start'));
  process.once('SIGINT', abort);
  process.once('SIGTERM', abort);
  return {
    signal: controller.signal,
    done() {
      process.removeListener('SIGINT', abort);
      process.removeListener('SIGTERM', abort);
    },
  };
}
