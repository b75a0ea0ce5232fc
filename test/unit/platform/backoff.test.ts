import { describe, expect, it } from 'vitest';
import { backoffCeiling, backoffDelay, nextDelay } from '../../../platform/backoff.ts';
import { parseRetryAfter } from '../../../upstream/retry-after.ts';

const opts = { baseMs: 250, maxMs: 30_000 };

describe('backoff with full jitter', () => {
  it('doubles the ceiling per retry up to the cap', () => {
    expect([1, 2, 3, 4].map((r) => backoffCeiling(r, opts))).toEqual([250, 500, 1000, 2000]);
    expect(backoffCeiling(8, opts)).toBe(30_000);
    expect(backoffCeiling(1000, opts)).toBe(30_000);
    expect(backoffCeiling(0, opts)).toBe(0);
  });

  it('draws the delay from [0, ceiling]', () => {
    expect(backoffDelay(3, opts, () => 0)).toBe(0);
    expect(backoffDelay(3, opts, () => 0.999999)).toBe(1000);
    expect(backoffDelay(3, opts, () => 0.5)).toBe(500);
    for (let i = 0; i < 200; i++) {
      const d = backoffDelay(20, opts);
      expect(d).toBeGreaterThanOrEqual(0);
      expect(d).toBeLessThanOrEqual(30_000);
    }
  });

  it('prefers the service Retry-After over backoff', () => {
    expect(nextDelay(1, 5000, opts, () => 0)).toBe(5000);
    expect(nextDelay(2, undefined, opts, () => 0.5)).toBe(250);
  });
});

describe('Retry-After', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  it('reads delta-seconds', () => {
    expect(parseRetryAfter('3', now)).toBe(3000);
    expect(parseRetryAfter(' 1.5 ', now)).toBe(1500);
  });
  it('reads an HTTP-date relative to now', () => {
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:10 GMT', now)).toBe(10_000);
  });
  it('ignores garbage', () => {
    for (const v of ['', 'soon', '-5', '1e3', 'NaN', null, undefined]) expect(parseRetryAfter(v, now)).toBeUndefined();
  });
  it('applies the floor and the cap', () => {
    expect(parseRetryAfter('0', now)).toBe(100);
    expect(parseRetryAfter('Wed, 31 Dec 2025 23:59:00 GMT', now)).toBe(100); // a date in the past
    expect(parseRetryAfter('3600', now)).toBe(60_000);
    expect(parseRetryAfter('5', now, { floorMs: 0, capMs: 2000 })).toBe(2000);
  });
});
