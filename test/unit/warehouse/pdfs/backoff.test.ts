import { describe, it, expect } from 'vitest';
import { pdfRetryDelayMs } from '../../../../warehouse/pdfs/backoff.ts';
import { PDF_ARCHIVE_DEFAULTS } from '../../../../workflows/archive-pdfs.ts';

describe('PDF retry backoff', () => {
  const defaults = { baseMs: PDF_ARCHIVE_DEFAULTS.backoffBaseMs, maxMs: PDF_ARCHIVE_DEFAULTS.backoffMaxMs };

  it('defaults to 1 minute, doubling, capped at 12 hours', () => {
    expect(defaults).toEqual({ baseMs: 60_000, maxMs: 43_200_000 });
    const minutes = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11].map((a) => pdfRetryDelayMs(a, defaults) / 60_000);
    expect(minutes).toEqual([1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 720]);
    expect(pdfRetryDelayMs(12, defaults)).toBe(43_200_000);
  });

  it('stays at the cap for any number of attempts, without overflowing', () => {
    expect(pdfRetryDelayMs(1_000, defaults)).toBe(43_200_000);
    expect(pdfRetryDelayMs(Number.MAX_SAFE_INTEGER, defaults)).toBe(43_200_000);
  });

  it('works in milliseconds for tests, and treats a nonsense attempt count as the first', () => {
    expect([1, 2, 3, 4].map((a) => pdfRetryDelayMs(a, { baseMs: 5, maxMs: 30 }))).toEqual([5, 10, 20, 30]);
    expect(pdfRetryDelayMs(0, { baseMs: 5, maxMs: 30 })).toBe(5);
    expect(pdfRetryDelayMs(Number.NaN, { baseMs: 5, maxMs: 30 })).toBe(5);
    expect(pdfRetryDelayMs(1, { baseMs: 50, maxMs: 30 })).toBe(30);
  });
});
