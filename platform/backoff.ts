/**
 * Exponential backoff with full jitter (AWS architecture blog, "Exponential Backoff And Jitter"):
 * delay = random(0, min(cap, base * 2^(attempt-1))). Full jitter spreads many workers that failed
 * together, which matters for 429s. Pure: the random source is passed in.
 */

export interface BackoffOptions {
  baseMs: number;
  maxMs: number;
}

/** Upper bound of the delay before retry number `retry` (1 = first retry). */
export function backoffCeiling(retry: number, { baseMs, maxMs }: BackoffOptions): number {
  if (retry < 1) return 0;
  // 2^exponent overflows to Infinity long after the cap has been reached; clamp the exponent anyway.
  const exponent = Math.min(retry - 1, 30);
  return Math.min(maxMs, baseMs * 2 ** exponent);
}

/** A delay in [0, ceiling]; `random` returns a value in [0, 1). */
export function backoffDelay(retry: number, options: BackoffOptions, random: () => number = Math.random): number {
  return Math.floor(random() * (backoffCeiling(retry, options) + 1));
}

/**
 * The delay to wait before the next attempt: the service's Retry-After when it sent one (already
 * bounded by parseRetryAfter), otherwise jittered backoff.
 */
export function nextDelay(
  retry: number,
  retryAfterMs: number | undefined,
  options: BackoffOptions,
  random?: () => number,
): number {
  return retryAfterMs ?? backoffDelay(retry, options, random);
}
