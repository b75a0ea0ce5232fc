import { backoffCeiling, type BackoffOptions } from '../../platform/backoff.ts';

/**
 * When a queued PDF is tried again after an attempt that did not archive it (422 "not COMPLETED
 * yet", a 5xx, a network error, a body that is not a PDF): `baseMs` after the first attempt,
 * doubling with every further attempt, never more than `maxMs` (the archive workflow's defaults:
 * 1 minute, 12 hours). Pure; the workflow passes the numbers, so tests can run in milliseconds.
 */

export type PdfBackoff = BackoffOptions;

/** The wait after `attempts` attempts (1 = the first attempt just failed): base · 2^(attempts−1), capped. */
export function pdfRetryDelayMs(attempts: number, backoff: PdfBackoff): number {
  return backoffCeiling(Number.isFinite(attempts) && attempts >= 1 ? Math.floor(attempts) : 1, backoff);
}
