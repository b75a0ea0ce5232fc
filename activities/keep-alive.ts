import type { ActivityInterceptorsFactory } from '@temporalio/worker';

/**
 * The worker's activity interceptor that heartbeats every activity given a heartbeat timeout: a
 * third of the timeout apart, for as long as the activity runs (a page waiting on upstream retries
 * included). A worker that dies is then noticed within the timeout, not after the start-to-close
 * timeout, and cancellation reaches the activity. Activities that heartbeat with details of their
 * own still may. Local activities have no heartbeat timeout: they run as they are.
 */
export const keepAlive: ActivityInterceptorsFactory = (context) => ({
  inbound: {
    async execute(input, next) {
      const timeout = context.info.heartbeatTimeoutMs;
      if (!timeout) return next(input);
      context.heartbeat();
      const timer = setInterval(() => context.heartbeat(), Math.max(100, timeout / 3));
      try {
        return await next(input);
      } finally {
        clearInterval(timer);
      }
    },
  },
});
