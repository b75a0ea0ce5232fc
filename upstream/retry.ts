import type { Logger } from 'pino';
import { nextDelay, type BackoffOptions } from '../platform/backoff.ts';
import { RateLimitedError, ServerError } from './errors.ts';
import { shouldRetry } from './retry-policy.ts';
import type { Sleep } from './sleep.ts';
import { count, type ClientStats } from './stats.ts';
import type { UpstreamObserver } from './observer.ts';

/**
 * The retry loop: bounded attempts, Retry-After when the service sent one, full-jitter backoff
 * otherwise. Time is injected (sleep, random) so tests run instantly.
 */

export interface RetryOptions {
  endpoint: string;
  /** Whether the request may be repeated when its outcome is unknown (see retry-policy.ts). */
  repeatable: boolean;
  maxAttempts: number;
  backoff: BackoffOptions;
  sleep: Sleep;
  random?: () => number;
  signal?: AbortSignal | undefined;
  stats: ReadonlyArray<ClientStats | undefined>;
  logger?: Logger | undefined;
  observer?: UpstreamObserver | undefined;
}

function retryAfterOf(error: unknown): number | undefined {
  return error instanceof RateLimitedError || error instanceof ServerError ? error.retryAfterMs : undefined;
}

export async function withRetries<T>(attemptFn: (attempt: number) => Promise<T>, o: RetryOptions): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await attemptFn(attempt);
    } catch (error) {
      if (attempt >= o.maxAttempts || !shouldRetry(error, o.repeatable)) throw error;
      const delayMs = nextDelay(attempt, retryAfterOf(error), o.backoff, o.random);
      count(o.stats, 'retries');
      o.observer?.retry(o.endpoint, (error as Error)?.name ?? 'Error');
      o.logger?.debug(
        { endpoint: o.endpoint, attempt, delayMs, error: (error as Error).name },
        'upstream request will be retried',
      );
      await o.sleep(delayMs, o.signal);
    }
  }
}
