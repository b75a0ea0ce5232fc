import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The cancellation of the work running now (an activity's, when the worker's interceptor set it), for
 * I/O far below it that takes no signal parameter: a warehouse statement started inside
 * `withCancellation(signal, …)` is aborted when `signal` is, so a cancelled activity (its heartbeat
 * timed out, the worker shuts down) holds no connection and no worker slot on a query nobody awaits.
 */
const current = new AsyncLocalStorage<AbortSignal>();

export function withCancellation<T>(signal: AbortSignal, work: () => T): T {
  return current.run(signal, work);
}

/** The signal of the enclosing `withCancellation`, if any. */
export function currentCancellation(): AbortSignal | undefined {
  return current.getStore();
}
