import type pg from 'pg';
import type { EventEmitter } from 'node:events';
import type { Socket } from 'node:net';
import { currentCancellation } from '../platform/cancellation.ts';

/** A connection attempt (TCP, startup, authentication) that takes longer than this fails. */
export const CONNECT_TIMEOUT_MS = 10_000;

/**
 * A statement the server did not answer within the client's bound (warehouse/statement-bounds.ts): the
 * server is frozen or unreachable (a live one cancels the statement itself, earlier). Its connection
 * was destroyed, so it never goes back to the pool.
 */
export class WarehouseSilentError extends Error {
  override name = 'WarehouseSilentError';
  constructor(readonly boundMs: number) {
    super(
      `the warehouse did not answer a statement within ${formatSeconds(boundMs)} (the client's bound; a live server would have cancelled it sooner): it is frozen or unreachable; the connection was dropped`,
    );
  }
}

function formatSeconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(1))} s`;
}

const bounded = new WeakSet<pg.ClientBase>();

/** Ends a connection now, without waiting for the server (which may never answer). */
export function dropConnection(client: pg.ClientBase): void {
  const socket = (client as unknown as { connection?: { stream?: Socket } }).connection?.stream;
  if (socket && !socket.destroyed) socket.destroy();
}

/** Why a connection was cut: every later statement on it fails with the same reason, not pg's "not queryable". */
const cutReasons = new WeakMap<pg.ClientBase, Error>();

/** Ends a connection now, failing whatever it has in flight with `reason`. */
function cut(client: pg.ClientBase, reason: unknown): void {
  const socket = (client as unknown as { connection?: { stream?: Socket } }).connection?.stream;
  const error = reason instanceof Error ? reason : new Error(String(reason));
  if (!cutReasons.has(client)) cutReasons.set(client, error);
  // Destroying the socket, not `client.end()`: end() says goodbye to the server and waits for it, and a
  // frozen server never answers. The client fails every query it holds with `error` and is unusable, so
  // the pool drops it when it is released.
  if (socket && !socket.destroyed) socket.destroy(error);
}

type Query = (...args: unknown[]) => unknown;

/**
 * Every statement of `client` (a promise, a callback, a COPY stream) is bounded by `clientMs`, counted by
 * `watch` (if given) while in flight, and aborted with the work's cancellation (platform/cancellation.ts): on either,
 * the connection is destroyed (cut). Made once per client, when the pool makes it.
 */
export function boundStatements(client: pg.ClientBase, clientMs: number, watch?: StatementWatch): void {
  if (bounded.has(client)) return;
  bounded.add(client);
  const query = client.query.bind(client) as Query;
  (client as unknown as { query: Query }).query = (...args: unknown[]) => {
    // A statement after the cut (a rollback, a cleanup in a finally) fails as the cut did, so the error
    // that reaches the log says why (the server's silence, a cancellation) whichever statement throws last.
    const cutBy = cutReasons.get(client);
    if (cutBy) {
      const first = args[0] as { submit?: unknown; emit?: (event: string, error: Error) => void } | undefined;
      if (first && typeof first.submit === 'function') {
        // A COPY stream: it fails as a stream does (its pipeline rejects), never waits for a server.
        queueMicrotask(() => first.emit?.('error', cutBy));
        return first;
      }
      const callback = args.at(-1);
      if (typeof callback === 'function') {
        queueMicrotask(() => (callback as (e: Error) => void)(cutBy));
        return undefined;
      }
      return Promise.reject(cutBy);
    }
    const signal = currentCancellation();
    const started = watch?.begin();
    let settled = false;
    const onAbort = () => cut(client, signal?.reason);
    const timer = setTimeout(() => cut(client, new WarehouseSilentError(clientMs)), clientMs);
    const settle = () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      if (started) watch?.end(started);
    };
    if (signal) {
      if (signal.aborted) queueMicrotask(onAbort);
      else signal.addEventListener('abort', onAbort, { once: true });
    }
    const last = args.length - 1;
    const callback = args[last];
    if (typeof callback === 'function')
      args[last] = (...results: unknown[]) => {
        settle();
        return (callback as (...r: unknown[]) => unknown)(...results);
      };
    let result: unknown;
    try {
      result = query(...args);
    } catch (error) {
      settle();
      throw error;
    }
    if (result && typeof (result as Promise<unknown>).then === 'function')
      (result as Promise<unknown>).then(settle, settle);
    else if (args[0] && typeof (args[0] as { submit?: unknown }).submit === 'function') {
      // A COPY stream (pg-copy-streams): it ends in 'finish' once the server confirmed, or in 'error'.
      const stream = args[0] as EventEmitter;
      stream.once('finish', settle);
      stream.once('error', settle);
      stream.once('close', settle);
    }
    return result;
  };
}

/**
 * The statements in flight on a warehouse's pools, and a probe of the server while one of them has
 * waited long: a server frozen whole (its kernel still acknowledges TCP, so nothing fails) is told
 * apart from a slow statement within seconds, not when the statement's own bound ends (minutes at the
 * end of a refresh). Listeners hear `silent` once when a probe on a fresh connection is not answered,
 * and `answering` once when one is again; while silent the probe repeats whether or not statements wait.
 */
export class StatementWatch {
  private readonly inFlight = new Set<{ at: number }>();
  private readonly listeners = new Set<{ silent(reason: string): void; answering(): void }>();
  private timer: NodeJS.Timeout | undefined;
  private probing = false;
  private silent = false;

  constructor(
    private readonly probe: () => Promise<void>,
    private readonly options: { checkEveryMs?: number; silentAfterMs?: number; now?: () => number } = {},
  ) {}

  begin(): { at: number } {
    const started = { at: this.now() };
    this.inFlight.add(started);
    return started;
  }

  end(started: { at: number }): void {
    this.inFlight.delete(started);
  }

  listen(listener: { silent(reason: string): void; answering(): void }): () => void {
    this.listeners.add(listener);
    if (!this.timer) {
      this.timer = setInterval(() => void this.check(), this.options.checkEveryMs ?? 5_000);
      this.timer.unref();
    }
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0) this.stop();
    };
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  /** One look: probe when a statement has waited past `silentAfterMs`, or while the server is silent. */
  async check(): Promise<void> {
    if (this.probing) return;
    const silentAfter = this.options.silentAfterMs ?? 15_000;
    const now = this.now();
    let waitedLong = false;
    for (const started of this.inFlight)
      if (now - started.at >= silentAfter) {
        waitedLong = true;
        break;
      }
    if (!waitedLong && !this.silent) return;
    this.probing = true;
    try {
      await this.probe();
      if (this.silent) {
        this.silent = false;
        for (const l of this.listeners) l.answering();
      }
    } catch (error) {
      if (!this.silent) {
        this.silent = true;
        const reason = `the server does not answer (a probe on a new connection failed: ${error instanceof Error ? error.message : String(error)}); statements wait for their bound`;
        for (const l of this.listeners) l.silent(reason);
      }
    } finally {
      this.probing = false;
    }
  }
}
