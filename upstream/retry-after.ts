/**
 * Retry-After (RFC 9110 §10.2.3): delta-seconds or an HTTP-date. Pure: the clock is passed in.
 * The result is clamped so a hostile or broken value neither hammers the service (floor) nor
 * parks a worker for hours (cap); garbage yields undefined so the caller falls back to backoff.
 */

export interface RetryAfterBounds {
  floorMs: number;
  capMs: number;
}

export const DEFAULT_RETRY_AFTER_BOUNDS: RetryAfterBounds = { floorMs: 100, capMs: 60_000 };

export function parseRetryAfter(
  value: string | null | undefined,
  nowMs: number,
  bounds: RetryAfterBounds = DEFAULT_RETRY_AFTER_BOUNDS,
): number | undefined {
  if (value == null) return undefined;
  const text = value.trim();
  if (text === '') return undefined;
  let ms: number;
  if (/^\d+(\.\d+)?$/.test(text)) {
    // The RFC allows only integers; tolerate a fraction, some proxies send one.
    ms = Number(text) * 1000;
  } else {
    // Only an HTTP-date that names a weekday or month parses here; bare numbers went above.
    if (!/[a-z]{3}/i.test(text)) return undefined;
    const at = Date.parse(text);
    if (Number.isNaN(at)) return undefined;
    ms = at - nowMs;
  }
  if (!Number.isFinite(ms)) return undefined;
  return Math.min(bounds.capMs, Math.max(bounds.floorMs, ms));
}
