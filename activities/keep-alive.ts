import { Context } from '@temporalio/activity';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- activities of any signature
type AnyActivity = (...args: any[]) => Promise<unknown>;

/**
 * Heartbeats for every activity of a group that was given a heartbeat timeout: a third of the
 * timeout apart, for as long as the activity runs (a page waiting on upstream retries included). A
 * worker that dies is then noticed within the timeout, not after the start-to-close timeout, and
 * cancellation reaches the activity. Activities that heartbeat with details of their own still may.
 */
export function keepAlive<T extends Record<string, AnyActivity>>(activities: T): T {
  const wrapped: Record<string, AnyActivity> = {};
  for (const [name, fn] of Object.entries(activities)) {
    wrapped[name] = async (...args: unknown[]) => {
      const context = Context.current();
      const timeout = context.info.heartbeatTimeoutMs;
      if (!timeout) return fn(...args);
      context.heartbeat();
      const timer = setInterval(() => context.heartbeat(), Math.max(100, timeout / 3));
      try {
        return await fn(...args);
      } finally {
        clearInterval(timer);
      }
    };
  }
  return wrapped as T;
}
