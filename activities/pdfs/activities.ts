import { resolve } from 'node:path';
import { Context } from '@temporalio/activity';
import type { UpstreamClient } from '../api/index.ts';
import { NotFoundError, UnprocessableError, UpstreamError } from '../api/index.ts';
import type { Warehouse } from '../warehouse/database.ts';
import type { Logger } from '../../infra/logger.ts';
import { mapFailures } from '../failures.ts';
import { keepAlive } from '../keep-alive.ts';
import { NotAPdfError, removeStaleTempFiles, storePdf } from './archive.ts';
import type { PdfBackoff } from './backoff.ts';
import { claimDuePdfs, databaseNow, noteFailedTry, recordArchived, recordGone, recordRetryLater } from './queue.ts';

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

export const DEFAULT_PDF_ARCHIVE_DIR = '.ddsync/pdf-archive';

/** Temporary files older than this are a dead worker's leftovers. */
const STALE_TEMP_MS = 3_600_000;
const MAX_ERROR_LENGTH = 1_000;

export interface ArchivePdfInput {
  id: string;
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
  | { id: string; outcome: 'gone'; status: number };

function errorText(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.length > MAX_ERROR_LENGTH ? `${text.slice(0, MAX_ERROR_LENGTH)}…` : text;
}

export function createPdfActivities({ db, api, log, pdfArchiveDir }: PdfDeps) {
  const archiveDir = resolve(pdfArchiveDir ?? DEFAULT_PDF_ARCHIVE_DIR);

  return mapFailures(keepAlive({
    /**
     * The next due entries, leased to this run. `cutoff` (the database's time at the run's first
     * claim) keeps a run from taking up again what it already tried and rescheduled.
     */
    async claimDueSurveyPdfs(input: { limit: number; cutoff: string | null; leaseMs: number }): Promise<{ cutoff: string; ids: string[] }> {
      const cutoff = input.cutoff ?? await databaseNow(db);
      return { cutoff, ids: await claimDuePdfs(db, cutoff, input.limit, input.leaseMs) };
    },

    /** Removes what workers that died mid-download left in the archive's tmp/ folder. */
    async sweepPdfTempFiles(): Promise<{ removed: number }> {
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
      const { id } = input;
      let responded = false;
      try {
        const download = await api.getSurveyResponsePdf(id, { signal });
        responded = true;
        const stored = await storePdf(archiveDir, download.body, { expectedLength: download.contentLength, signal });
        await recordArchived(db, id, stored, 200);
        log.info({ surveyResponseId: id, sha256: stored.sha256, sizeBytes: stored.sizeBytes, deduplicated: stored.deduplicated }, 'survey-response PDF archived');
        return { id, outcome: 'archived', sha256: stored.sha256, sizeBytes: stored.sizeBytes, deduplicated: stored.deduplicated };
      } catch (error) {
        // Cancelled: nothing to record; the lease makes the entry due again later.
        if (signal.aborted) throw error;
        const message = errorText(error);
        if (error instanceof UnprocessableError) {
          const later = await recordRetryLater(db, id, 'waiting', 422, message, input.backoff);
          return { id, outcome: 'waiting', status: 422, error: message, nextAttemptAt: later?.nextAttemptAt.toISOString() ?? null };
        }
        if (error instanceof NotFoundError) {
          await recordGone(db, id, 404, message);
          log.warn({ surveyResponseId: id }, 'survey response not found (404): recorded as gone');
          return { id, outcome: 'gone', status: 404 };
        }
        const status = error instanceof UpstreamError ? (error.status ?? null) : responded ? 200 : null;
        const transient = (error instanceof UpstreamError && error.retryable) || error instanceof NotAPdfError;
        if (transient && context.info.attempt < input.quickAttempts) {
          await noteFailedTry(db, id, status, message);
          throw error;
        }
        const later = await recordRetryLater(db, id, 'retrying', status, message, input.backoff);
        log.warn({ surveyResponseId: id, status, error: message, nextAttemptAt: later?.nextAttemptAt }, 'survey-response PDF not archived: retried later');
        return { id, outcome: 'failed', status, error: message, nextAttemptAt: later?.nextAttemptAt.toISOString() ?? null };
      }
    },
  }));
}

export type PdfActivities = ReturnType<typeof createPdfActivities>;
