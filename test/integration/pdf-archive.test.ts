import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { createHash, randomUUID } from 'node:crypto';
import { mkdtemp, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { startWorkerHarness, type WorkerHarness } from '../support/worker-harness.ts';
import { waitUntil } from '../support/wait.ts';
import {
  claimDuePdfs,
  databaseNow,
  enqueueSurveyPdfs,
  recordRetryLater,
  renewLease,
} from '../../warehouse/pdfs/queue.ts';
import { archiveSurveyPdfs, pdfArchiveWorkflowId, type ArchivePdfsInput } from '../../workflows/archive-pdfs.ts';

interface Row {
  id: string;
  state: string;
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  sha256: string | null;
  storage_path: string | null;
  size_bytes: string | null;
  gap_ms: number | null;
}

describe('the survey-response PDF archive', () => {
  let h: WorkerHarness;
  let archiveDir: string;
  let ids: string[];
  const BACKOFF = { backoffBaseMs: 300, backoffMaxMs: 1_000 };

  const archive = (input: ArchivePdfsInput = BACKOFF) =>
    h.temporal.client.workflow.execute(archiveSurveyPdfs, {
      taskQueue: h.temporal.taskQueue,
      workflowId: pdfArchiveWorkflowId(randomUUID()),
      args: [input],
    });
  const rows = async () =>
    new Map(
      (
        await sql<Row>`
    select id, state, attempts, last_status, last_error, sha256, storage_path, size_bytes::text,
           (extract(epoch from next_attempt_at - last_attempt_at) * 1000)::int as gap_ms
    from survey_response_pdfs`.execute(h.db)
      ).rows.map((r) => [r.id, r]),
    );
  const storedFiles = async () =>
    (await readdir(archiveDir, { recursive: true, withFileTypes: true }))
      .filter((e) => e.isFile())
      .map((e) => join(e.parentPath, e.name).slice(archiveDir.length + 1))
      .sort();
  const allDue = () =>
    waitUntil('every retried entry due', async () => {
      const {
        rows: [r],
      } = await sql<{
        n: number;
      }>`select count(*)::int as n from survey_response_pdfs where state in ('waiting', 'retrying') and next_attempt_at > now()`.execute(
        h.db,
      );
      return r!.n === 0;
    });

  beforeAll(async () => {
    archiveDir = await mkdtemp(join(tmpdir(), 'ddsync-pdf-archive-'));
    // Two tries per call: the scripted 5xx outlast one archive run (3 activity tries × 2).
    h = await startWorkerHarness({ seed: 61, suppliers: 2, plots: 20 }, 'pdfs', {
      pdfArchiveDir: archiveDir,
      upstreamMaxAttempts: 2,
    });
    await h.startWorker();
    // Seeded: 3 COMPLETED, then 2 IN_PROGRESS and 1 NOT_STARTED.
    ids = h.sim.control.surveyResponses().map((r) => r.id);
  });
  afterAll(async () => {
    await h?.close();
    await rm(archiveDir, { recursive: true, force: true });
  });

  it('archives what is completed, waits for what is not, gives up on what is gone and retries server errors', async () => {
    const [completed, serverError, sameAsCompleted, notYet, notAPdf] = ids as [string, string, string, string, string];
    const gone = randomUUID();
    // The service renders two survey responses into byte-identical documents.
    const original = await h.api.getSurveyResponsePdf(completed);
    const chunks: Buffer[] = [];
    for await (const chunk of original.body) chunks.push(Buffer.from(chunk));
    const pdf = Buffer.concat(chunks);
    h.sim.control.setSurveyResponsePdf(sameAsCompleted, pdf);
    h.sim.control.failSurveyResponsePdf(serverError, 6, 503);
    h.sim.control.setSurveyResponseStatus(notAPdf, 'COMPLETED');
    h.sim.control.setSurveyResponsePdf(notAPdf, Buffer.from('<html><body>502 Bad Gateway</body></html>'));

    const queued = await enqueueSurveyPdfs(h.db, [completed, serverError, sameAsCompleted, notYet, notAPdf, gone]);
    expect(queued.map((q) => q.outcome)).toEqual(Array(6).fill('queued'));

    const first = await archive();
    expect(first).toEqual({ archived: 2, stored: 1, deduplicated: 1, waiting: 1, gone: 1, failed: 2, skipped: 0 });
    let state = await rows();
    const sha = createHash('sha256').update(pdf).digest('hex');
    expect(state.get(completed)).toMatchObject({
      state: 'archived',
      attempts: 1,
      last_status: 200,
      sha256: sha,
      size_bytes: String(pdf.length),
      storage_path: `${sha.slice(0, 2)}/${sha}.pdf`,
      gap_ms: null,
    });
    expect(state.get(sameAsCompleted)).toMatchObject({
      state: 'archived',
      sha256: sha,
      storage_path: `${sha.slice(0, 2)}/${sha}.pdf`,
    });
    expect(state.get(notYet)).toMatchObject({ state: 'waiting', attempts: 1, last_status: 422, gap_ms: 300 });
    expect(state.get(gone)).toMatchObject({ state: 'gone', attempts: 1, last_status: 404, gap_ms: null });
    expect(state.get(serverError)).toMatchObject({ state: 'retrying', attempts: 1, last_status: 503, gap_ms: 300 });
    expect(state.get(notAPdf)).toMatchObject({ state: 'retrying', attempts: 1, last_status: 200, gap_ms: 300 });
    expect(state.get(notAPdf)!.last_error).toContain('not a PDF: a body starting "<html><body>502 Bad Gateway');
    // Identical PDFs, one file; nothing left in tmp/.
    expect(await storedFiles()).toEqual([`${sha.slice(0, 2)}/${sha}.pdf`]);
    expect(await readFile(join(archiveDir, `${sha.slice(0, 2)}/${sha}.pdf`))).toEqual(pdf);

    // The next run: the server recovered, the response was completed meanwhile, the proxy still
    // answers HTML (its wait doubles), and the gone one is not asked for again.
    h.sim.control.setSurveyResponseStatus(notYet, 'COMPLETED');
    await allDue();
    const second = await archive();
    expect(second).toEqual({ archived: 2, stored: 2, deduplicated: 0, waiting: 0, gone: 0, failed: 1, skipped: 0 });
    state = await rows();
    expect(state.get(serverError)).toMatchObject({
      state: 'archived',
      attempts: 2,
      last_status: 200,
      last_error: null,
    });
    expect(state.get(notYet)).toMatchObject({ state: 'archived', attempts: 2 });
    expect(state.get(notAPdf)).toMatchObject({ state: 'retrying', attempts: 2, gap_ms: 600 });
    expect(state.get(gone)).toMatchObject({ state: 'gone', attempts: 1 });
    expect(await storedFiles()).toHaveLength(3);
    for (const id of [serverError, notYet]) {
      const row = state.get(id)!;
      const bytes = await readFile(join(archiveDir, row.storage_path!));
      expect(bytes.subarray(0, 5).toString('latin1')).toBe('%PDF-');
      expect(createHash('sha256').update(bytes).digest('hex')).toBe(row.sha256);
    }

    // The wait grows to its cap, and a run with nothing due ends at once with nothing done.
    await allDue();
    await archive();
    await allDue();
    await archive();
    expect((await rows()).get(notAPdf)).toMatchObject({ attempts: 4, gap_ms: 1_000 });
    expect(await archive()).toEqual({
      archived: 0,
      stored: 0,
      deduplicated: 0,
      waiting: 0,
      gone: 0,
      failed: 0,
      skipped: 0,
    });
  });

  it('queues an id again only when it was gone, and reports every state in the BI view', async () => {
    const [completed] = ids as [string];
    const goneId = (await sql<{ id: string }>`select id from survey_response_pdfs where state = 'gone'`.execute(h.db))
      .rows[0]!.id;
    const again = await enqueueSurveyPdfs(h.db, [completed, goneId, completed]);
    expect(again).toEqual([
      { id: completed, outcome: 'unchanged', state: 'archived' },
      { id: goneId, outcome: 'requeued', state: 'queued' },
    ]);
    const {
      rows: [view],
    } = await sql<
      Record<string, unknown>
    >`select queued::int, waiting::int, retrying::int, archived::int, gone::int, total::int, stored_files::int from bi_pdf_archive`.execute(
      h.db,
    );
    expect(view).toEqual({ queued: 1, waiting: 0, retrying: 1, archived: 4, gone: 0, total: 6, stored_files: 3 });
  });

  it("keeps an entry the business may not download (403) for a later run, with the service's reason", async () => {
    const notAPdf = ids[4]!;
    h.sim.control.setSurveyResponsePdf(notAPdf, null);
    h.sim.control.setEntitlements({ canDownloadSurveyResponses: false });
    try {
      await allDue();
      // Both due entries: this one, and the id queued again above (403 comes before 404).
      expect(await archive()).toMatchObject({ archived: 0, gone: 0, failed: 2 });
      const row = (await rows()).get(notAPdf)!;
      expect(row).toMatchObject({ state: 'retrying', last_status: 403 });
      expect(row.last_error).toContain('not entitled to download survey responses');
    } finally {
      h.sim.control.setEntitlements({ canDownloadSurveyResponses: true });
    }
    await allDue();
    expect(await archive()).toMatchObject({ archived: 1, stored: 1, gone: 1, failed: 0 });
    expect((await rows()).get(notAPdf)).toMatchObject({ state: 'archived', last_status: 200, last_error: null });
  });

  it('lets only the run holding an entry record a failed attempt; a run whose lease ran out skips it', async () => {
    const id = randomUUID();
    await enqueueSurveyPdfs(h.db, [id]);
    const backoff = { baseMs: 60_000, maxMs: 60_000 };
    expect(await claimDuePdfs(h.db, await databaseNow(h.db), 100, 60_000, 'run-a')).toEqual([id]);
    // Run A stalls past its lease; run B claims the entry.
    await sql`update survey_response_pdfs set next_attempt_at = now() - interval '1 second' where id = ${id}`.execute(
      h.db,
    );
    expect(await claimDuePdfs(h.db, await databaseNow(h.db), 100, 60_000, 'run-b')).toEqual([id]);
    expect(await renewLease(h.db, id, 'run-a', 60_000)).toBe(false);
    expect(await recordRetryLater(h.db, id, 'run-a', 'retrying', 503, 'late', backoff)).toBeUndefined();
    expect(await renewLease(h.db, id, 'run-b', 60_000)).toBe(true);
    expect(await recordRetryLater(h.db, id, 'run-b', 'waiting', 422, 'not completed', backoff)).toMatchObject({
      attempts: 1,
    });
    const row = (await rows()).get(id)!;
    expect(row).toMatchObject({ state: 'waiting', attempts: 1, last_status: 422, last_error: 'not completed' });
    await sql`delete from survey_response_pdfs where id = ${id}`.execute(h.db);
  });

  it('stops a run whose archive directory cannot be written, charging no entry an attempt', async () => {
    const [completed] = ids as [string];
    const fresh = h.sim.control
      .surveyResponses()
      .find((r) => r.status === 'COMPLETED' && !ids.slice(0, 5).includes(r.id));
    const id = fresh?.id ?? randomUUID();
    await enqueueSurveyPdfs(h.db, [id]);
    // The directory replaced by a file: nothing can be created under it (even as root).
    await rename(archiveDir, `${archiveDir}.aside`);
    await writeFile(archiveDir, 'not a directory');
    try {
      const failure = await archive().then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(failure).toBeDefined();
      const text =
        JSON.stringify(failure, Object.getOwnPropertyNames(failure)) + String((failure as { cause?: unknown }).cause);
      expect(text).toContain(`the PDF archive directory ${archiveDir} (DDSYNC_PDF_ARCHIVE_DIR) cannot be written`);
      expect((await rows()).get(id)).toMatchObject({ attempts: 0, last_error: null });
    } finally {
      await rm(archiveDir, { force: true });
      await rename(`${archiveDir}.aside`, archiveDir);
    }
    expect((await rows()).get(completed)).toMatchObject({ state: 'archived' });
  });
});
