import {
  ActivityFailure,
  ApplicationFailure,
  continueAsNew,
  isCancellation,
  log,
  proxyActivities,
  proxyLocalActivities,
  workflowInfo,
} from '@temporalio/workflow';
import type { PdfActivities, PdfAttemptOutcome } from '../activities/pdfs/activities.ts';
import { PDF_RUN_PROBLEM } from '../platform/run-problem.ts';
import { forEachInWindow } from './scheduling/sliding-window.ts';
import { historyFull } from './scheduling/continue-as-new.ts';

/**
 * The scheduled survey-response PDF archive: takes the queued entries that are due, `batchSize`
 * at a time, and archives them, `concurrency` at once (each one activity: stream, check, hash,
 * store by content, record). It ends when nothing is due any more; entries it tried and
 * rescheduled are left to a later run, even when their backoff has already passed. Continues as
 * new when its history grows. Started by the `ddsync-pdf-archive` schedule and `ddsync pdfs archive`.
 */
export interface ArchivePdfsInput {
  /** Entries claimed at a time (default 20, 1–500). */
  batchSize?: number;
  /** PDFs downloaded at once (default 4, 1–50). */
  concurrency?: number;
  /** Wait after the first attempt that did not archive an entry (422, 5xx, …), doubling with each further one (default 60000: 1 minute). */
  backoffBaseMs?: number;
  /** The longest such wait (default 43200000: 12 hours). */
  backoffMaxMs?: number;
  /** Carried across continue-as-new. */
  carried?: { cutoff: string; counts: ArchivePdfsResult };
}

export interface ArchivePdfsResult {
  archived: number;
  /** 422: not COMPLETED yet; tried again after the backoff. */
  waiting: number;
  /** 404: recorded as gone, never tried again. */
  gone: number;
  /** Any other error (5xx, network, a body that is no PDF, …): tried again after the backoff. */
  failed: number;
  /** Archived PDFs written as a new file… */
  stored: number;
  /** …and archived PDFs whose content was stored already. */
  deduplicated: number;
  /** Claimed, then found to be another run's (this run's lease had run out) or no longer queued. */
  skipped: number;
}

export const PDF_ARCHIVE_DEFAULTS = {
  batchSize: 20,
  concurrency: 4,
  backoffBaseMs: 60_000,
  backoffMaxMs: 12 * 3_600_000,
} as const;

export const pdfArchiveWorkflowId = (nonce: string) => `pdf-archive/${nonce}`;

/** Tries of one PDF within a run on a 5xx, network error or non-PDF body, before it waits for a later run. */
const QUICK_ATTEMPTS = 3;
/**
 * How long a claimed entry is not due for other runs, renewed at each try of its download (at most
 * 10 minutes each); a run that ends early (cancelled, failed) frees it when this passes.
 */
const LEASE_MS = 3_600_000;
const { claimDueSurveyPdfs, sweepPdfTempFiles } = proxyLocalActivities<PdfActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 10 },
});

const { archiveSurveyPdf } = proxyActivities<PdfActivities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '1 minute',
  // Two tries more than the activity repeats on its own, for a database hiccup while recording.
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '30 seconds',
    maximumAttempts: QUICK_ATTEMPTS + 2,
  },
});

function whole(name: string, value: number | undefined, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < min || value > max) {
    throw ApplicationFailure.nonRetryable(
      `archiveSurveyPdfs: ${name} must be a whole number from ${min} to ${max}, got ${String(value)}`,
      'InvalidInput',
    );
  }
  return value;
}

export async function archiveSurveyPdfs(input: ArchivePdfsInput = {}): Promise<ArchivePdfsResult> {
  const batchSize = whole('batchSize', input.batchSize, PDF_ARCHIVE_DEFAULTS.batchSize, 1, 500);
  const concurrency = whole('concurrency', input.concurrency, PDF_ARCHIVE_DEFAULTS.concurrency, 1, 50);
  const baseMs = whole('backoffBaseMs', input.backoffBaseMs, PDF_ARCHIVE_DEFAULTS.backoffBaseMs, 1, 30 * 86_400_000);
  const maxMs = whole(
    'backoffMaxMs',
    input.backoffMaxMs,
    Math.max(baseMs, PDF_ARCHIVE_DEFAULTS.backoffMaxMs),
    baseMs,
    30 * 86_400_000,
  );
  const backoff = { baseMs, maxMs };
  const counts: ArchivePdfsResult = {
    archived: 0,
    waiting: 0,
    gone: 0,
    failed: 0,
    stored: 0,
    deduplicated: 0,
    skipped: 0,
    ...input.carried?.counts,
  };
  let cutoff = input.carried?.cutoff ?? null;
  const owner = workflowInfo().workflowId;

  if (cutoff === null) {
    await sweepPdfTempFiles().catch((error: unknown) => {
      if (isCancellation(error) || isRunProblem(error)) throw error;
      log.warn('could not sweep stale temporary PDF downloads', { error: String(error) });
    });
  }
  for (;;) {
    const claim = await claimDueSurveyPdfs({ limit: batchSize, cutoff, leaseMs: LEASE_MS, owner });
    cutoff = claim.cutoff;
    if (claim.ids.length === 0) return counts;
    await forEachInWindow(claim.ids, { limit: concurrency }, async (id) => {
      try {
        tally(counts, await archiveSurveyPdf({ id, owner, leaseMs: LEASE_MS, backoff, quickAttempts: QUICK_ATTEMPTS }));
      } catch (error) {
        // The directory or the credentials: every other entry would fail the same way.
        if (isCancellation(error) || isRunProblem(error)) throw error;
        // Not even recorded (the warehouse unreachable, say): due again once the lease ends.
        counts.failed++;
        log.warn('survey-response PDF attempt failed', { surveyResponseId: id, error: String(error) });
      }
    });
    if (historyFull(workflowInfo())) {
      return continueAsNew<typeof archiveSurveyPdfs>({ ...input, carried: { cutoff, counts } });
    }
  }
}

function isRunProblem(error: unknown): boolean {
  const failure = error instanceof ActivityFailure ? error.cause : error;
  return failure instanceof ApplicationFailure && failure.type === PDF_RUN_PROBLEM;
}

function tally(counts: ArchivePdfsResult, result: PdfAttemptOutcome): void {
  if (result.outcome === 'archived') {
    counts.archived++;
    if (result.deduplicated) counts.deduplicated++;
    else counts.stored++;
  } else if (result.outcome === 'waiting') counts.waiting++;
  else if (result.outcome === 'gone') counts.gone++;
  else if (result.outcome === 'skipped') counts.skipped++;
  else counts.failed++;
}
