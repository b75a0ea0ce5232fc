import { setMaxListeners } from 'node:events';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';

/**
 * Requests at once that may each listen on one activity's cancellation signal. A chunk of a bulk
 * submission sends up to DDSYNC_SUBMIT_CONCURRENCY requests, each listening for the cancellation
 * (fetch, the client's waits): past Node's default of 10 that is no leak, yet Node warned
 * (MaxListenersExceededWarning) twice in every demo. A real leak still passes this bound and is told.
 */
const LISTENERS_PER_ACTIVITY = 1_000;

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
      setMaxListeners(LISTENERS_PER_ACTIVITY, context.cancellationSignal);
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
