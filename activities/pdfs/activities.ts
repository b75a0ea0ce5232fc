import { constants } from 'node:fs';
import { access, mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { UpstreamClient } from '../../upstream/index.ts';
import { CredentialsRefusedError, NotFoundError, UnprocessableError, UpstreamError } from '../../upstream/index.ts';
import type { Warehouse } from '../../warehouse/database.ts';
import type { Logger } from '../../platform/logger.ts';
import { NotAPdfError, removeStaleTempFiles, storePdf } from './archive.ts';
import type { StoredPdf } from '../../warehouse/pdfs/queue.ts';
import { TEMP_DIR } from './content-address.ts';
import { PDF_RUN_PROBLEM } from '../../platform/run-problem.ts';
import { DEFAULT_PDF_ARCHIVE_DIR } from '../../platform/config.ts';
import type { PdfBackoff } from '../../warehouse/pdfs/backoff.ts';
import {
  claimDuePdfs,
  databaseNow,
  noteFailedTry,
  recordArchived,
  recordGone,
  recordRetryLater,
  renewLease,
} from '../../warehouse/pdfs/queue.ts';

/**
 * The activities of the survey-response PDF archive. Each PDF is streamed from the service into the
 * archive directory and its outcome recorded on its survey_response_pdfs row; results carry ids,
 * counts and hashes only (PDF bytes never enter workflow history).
 */

export type PdfApi = Pick<UpstreamClient, 'getSurveyResponsePdf'>;

export interface PdfDeps {
  db: Warehouse;
  api: PdfApi;
  log: Logger;
  /** Where PDFs are stored (DDSYNC_PDF_ARCHIVE_DIR); relative paths are taken from the worker's working directory. */
  pdfArchiveDir?: string | undefined;
}

/** Temporary files older than this are a dead worker's leftovers. */
const STALE_TEMP_MS = 3_600_000;
const MAX_ERROR_LENGTH = 1_000;

export interface ArchivePdfInput {
  id: string;
  /** The archive run (its workflow id) that claimed the entry. */
  owner: string;
  /** How long the entry stays leased to `owner` from the start of this attempt. */
  leaseMs: number;
  backoff: PdfBackoff;
  /**
   * Tries of this activity (Temporal attempts) before a 5xx, network error or non-PDF body is
   * recorded and left to a later run; earlier tries rethrow so Temporal repeats them soon.
   */
  quickAttempts: number;
}

export type PdfAttemptOutcome =
  | { id: string; outcome: 'archived'; sha256: string; sizeBytes: number; deduplicated: boolean }
  | { id: string; outcome: 'waiting' | 'failed'; status: number | null; error: string; nextAttemptAt: string | null }
  | { id: string; outcome: 'gone'; status: number }
  /** No longer this run's (its lease ran out and another run claimed it), or no longer queued. */
  | { id: string; outcome: 'skipped' };

/** A failure of the local file system (permissions, space, read-only), as opposed to the download. */
function isStorageError(error: unknown): error is NodeJS.ErrnoException {
  return (
    error instanceof Error &&
    !(error instanceof UpstreamError) &&
    typeof (error as NodeJS.ErrnoException).syscall === 'string'
  );
}

function runProblem(message: string, cause: unknown): ApplicationFailure {
  return ApplicationFailure.create({
    message,
    type: PDF_RUN_PROBLEM,
    nonRetryable: true,
    cause: cause instanceof Error ? cause : undefined,
  });
}

function errorText(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.length > MAX_ERROR_LENGTH ? `${text.slice(0, MAX_ERROR_LENGTH)}…` : text;
}

export function createPdfActivities({ db, api, log, pdfArchiveDir }: PdfDeps) {
  const archiveDir = resolve(pdfArchiveDir ?? DEFAULT_PDF_ARCHIVE_DIR);

  return {
    /**
     * The next due entries, leased to this run. `cutoff` (the database's time at the run's first
     * claim) keeps a run from taking up again what it already tried and rescheduled.
     */
    async claimDueSurveyPdfs(input: {
      limit: number;
      cutoff: string | null;
      leaseMs: number;
      owner: string;
    }): Promise<{ cutoff: string; ids: string[] }> {
      const cutoff = input.cutoff ?? (await databaseNow(db));
      return { cutoff, ids: await claimDuePdfs(db, cutoff, input.limit, input.leaseMs, input.owner) };
    },

    /**
     * Before a run claims anything: the archive directory must be writable (else every download
     * would be wasted), and what workers that died mid-download left in its tmp/ folder goes.
     */
    async sweepPdfTempFiles(): Promise<{ removed: number }> {
      try {
        await mkdir(join(archiveDir, TEMP_DIR), { recursive: true });
        await access(join(archiveDir, TEMP_DIR), constants.W_OK);
      } catch (error) {
        throw runProblem(
          `the PDF archive directory ${archiveDir} (DDSYNC_PDF_ARCHIVE_DIR) cannot be written: ${errorText(error)}`,
          error,
        );
      }
      const removed = await removeStaleTempFiles(archiveDir, STALE_TEMP_MS);
      if (removed > 0) log.info({ removed, archiveDir }, 'stale temporary PDF downloads removed');
      return { removed };
    },

    /**
     * One survey response: download (streamed), check, hash, store by content, record. 422 → waiting
     * (backoff); 404 → gone (final); 5xx, network errors and bodies that are no PDF → retried by
     * this activity a few times, then recorded as retrying (backoff); any other error → retrying.
     */
    async archiveSurveyPdf(input: ArchivePdfInput): Promise<PdfAttemptOutcome> {
      const context = Context.current();
      const signal = context.cancellationSignal;
      const { id, owner } = input;
      if (!(await renewLease(db, id, owner, input.leaseMs))) {
        log.info(
          { surveyResponseId: id },
          'survey-response PDF skipped: claimed by another archive run, or no longer queued',
        );
        return { id, outcome: 'skipped' };
      }
      let responded = false;
      let stored: StoredPdf;
      try {
        const download = await api.getSurveyResponsePdf(id, { signal });
        responded = true;
        stored = await storePdf(archiveDir, download.body, { expectedLength: download.contentLength, signal });
      } catch (error) {
        return await failedAttempt(input, error, responded, signal, context.info.attempt);
      }
      // Not caught above: a database error here is retried by Temporal (the file is stored; the
      // next try finds it by its content), not counted as a failed download.
      await recordArchived(db, id, stored, 200);
      log.info(
        { surveyResponseId: id, sha256: stored.sha256, sizeBytes: stored.sizeBytes, deduplicated: stored.deduplicated },
        'survey-response PDF archived',
      );
      return {
        id,
        outcome: 'archived',
        sha256: stored.sha256,
        sizeBytes: stored.sizeBytes,
        deduplicated: stored.deduplicated,
      };
    },
  };

  /** An attempt that did not store the PDF: what the answer means for the entry, recorded. */
  async function failedAttempt(
    input: ArchivePdfInput,
    error: unknown,
    responded: boolean,
    signal: AbortSignal,
    attempt: number,
  ): Promise<PdfAttemptOutcome> {
    const { id, owner } = input;
    // Cancelled: nothing to record; the lease makes the entry due again later.
    if (signal.aborted) throw error;
    const message = errorText(error);
    if (isStorageError(error))
      throw runProblem(
        `the PDF archive directory ${archiveDir} (DDSYNC_PDF_ARCHIVE_DIR) cannot be written: ${message}`,
        error,
      );
    if (error instanceof CredentialsRefusedError)
      throw runProblem(`the service refuses ddsync's credentials: ${message}`, error);
    if (error instanceof UnprocessableError) {
      const later = await recordRetryLater(db, id, owner, 'waiting', 422, message, input.backoff);
      return {
        id,
        outcome: 'waiting',
        status: 422,
        error: message,
        nextAttemptAt: later?.nextAttemptAt.toISOString() ?? null,
      };
    }
    if (error instanceof NotFoundError) {
      await recordGone(db, id, 404, message);
      log.warn({ surveyResponseId: id }, 'survey response not found (404): recorded as gone');
      return { id, outcome: 'gone', status: 404 };
    }
    const status = error instanceof UpstreamError ? (error.status ?? null) : responded ? 200 : null;
    const transient = (error instanceof UpstreamError && error.retryable) || error instanceof NotAPdfError;
    if (transient && attempt < input.quickAttempts) {
      await noteFailedTry(db, id, owner, status, message);
      throw error;
    }
    const later = await recordRetryLater(db, id, owner, 'retrying', status, message, input.backoff);
    log.warn(
      { surveyResponseId: id, status, error: message, nextAttemptAt: later?.nextAttemptAt },
      'survey-response PDF not archived: retried later',
    );
    return { id, outcome: 'failed', status, error: message, nextAttemptAt: later?.nextAttemptAt.toISOString() ?? null };
  }
}

export type PdfActivities = ReturnType<typeof createPdfActivities>;
