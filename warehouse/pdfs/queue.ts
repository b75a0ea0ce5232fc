import { storableText } from '../../domain/unstorable-text.ts';
import { sql } from 'kysely';
import type { Row, Warehouse } from '../database.ts';
import type { SurveyPdfState } from '../../schema/database.ts';
import { pdfRetryDelayMs, type PdfBackoff } from './backoff.ts';

/** A PDF stored in the archive (activities/pdfs/archive.ts), as its row records it. */
export interface StoredPdf {
  sha256: string;
  sizeBytes: number;
  /** Relative to the archive directory, with forward slashes. */
  storagePath: string;
  /** The content was stored already (by another survey response, or an earlier attempt): nothing new was written. */
  deduplicated: boolean;
}

/**
 * survey_response_pdfs: the queue of survey responses whose PDF is to be archived, and what became
 * of each. Every write is idempotent (activities retry). A row is due when its state is queued,
 * waiting or retrying and next_attempt_at has passed; archived and gone rows are never due.
 */

export type EnqueueOutcome = 'queued' | 'requeued' | 'unchanged';

export interface EnqueueResult {
  id: string;
  outcome: EnqueueOutcome;
  /** The state after the call. */
  state: SurveyPdfState;
}

/**
 * Queues ids (valid, lower-case UUIDs): a new id is due now; an id already known keeps its state
 * (queued, waiting, retrying or archived: nothing changes); an id recorded as gone (404) is queued
 * again, since asking for it once more is a deliberate act. One statement for any number of ids.
 */
export async function enqueueSurveyPdfs(db: Warehouse, ids: readonly string[]): Promise<EnqueueResult[]> {
  if (ids.length === 0) return [];
  const { rows } = await sql<{ id: string; outcome: EnqueueOutcome; state: SurveyPdfState }>`
    with input as (
      select id, min(ord) as ord from unnest(${[...ids]}::text[]) with ordinality as i(id, ord) group by id
    ),
    inserted as (
      insert into survey_response_pdfs (id) select id from input order by ord
      on conflict (id) do nothing
      returning id
    ),
    requeued as (
      update survey_response_pdfs p
      set state = 'queued', queued_at = now(), next_attempt_at = now(), attempts = 0, lease_owner = null
      from input where p.id = input.id and p.state = 'gone'
      returning p.id
    )
    select input.id,
           case when ins.id is not null then 'queued' when rq.id is not null then 'requeued' else 'unchanged' end as outcome,
           -- A row another session inserted meanwhile is not in this statement's snapshot: queued.
           case when ins.id is not null or rq.id is not null then 'queued' else coalesce(p.state, 'queued') end as state
    from input
    left join inserted ins on ins.id = input.id
    left join requeued rq on rq.id = input.id
    left join survey_response_pdfs p on p.id = input.id
    order by input.ord`.execute(db);
  return rows;
}

/** The database's clock, as text Postgres reads back exactly (microseconds kept). */
export async function databaseNow(db: Warehouse): Promise<string> {
  const { rows } = await sql<{ now: string }>`select now()::text as now`.execute(db);
  return rows[0]!.now;
}

/**
 * Claims up to `limit` rows that were due at `cutoff` (oldest due first): they are leased to
 * `owner` for `leaseMs` (not due meanwhile, so two archive runs never fetch the same PDF at once)
 * and returned. Rows another transaction is claiming are skipped, not waited for.
 */
export async function claimDuePdfs(
  db: Warehouse,
  cutoff: string,
  limit: number,
  leaseMs: number,
  owner: string,
): Promise<string[]> {
  const { rows } = await sql<Pick<Row<'survey_response_pdfs'>, 'id'>>`
    with due as (
      select id from survey_response_pdfs
      where state in ('queued', 'waiting', 'retrying') and next_attempt_at <= ${cutoff}::timestamptz
      order by next_attempt_at, id
      limit ${limit}
      for update skip locked
    )
    update survey_response_pdfs p set next_attempt_at = now() + ${leaseMs} * interval '1 millisecond', lease_owner = ${owner}
    from due where p.id = due.id
    returning p.id`.execute(db);
  return rows.map((r) => r.id).sort();
}

/**
 * Before each download: extends `owner`'s lease on the entry. False when the entry is no longer
 * `owner`'s (its lease ran out and another run claimed it) or no longer to be archived: skip it.
 */
export async function renewLease(db: Warehouse, id: string, owner: string, leaseMs: number): Promise<boolean> {
  const { rows } = await sql<Pick<Row<'survey_response_pdfs'>, 'id'>>`
    update survey_response_pdfs set next_attempt_at = now() + ${leaseMs} * interval '1 millisecond'
    where id = ${id} and lease_owner = ${owner} and state in ('queued', 'waiting', 'retrying')
    returning id`.execute(db);
  return rows.length > 0;
}

/** The PDF is in the archive: where, how big, its hash. Never due again. */
export async function recordArchived(db: Warehouse, id: string, stored: StoredPdf, status: number): Promise<void> {
  await sql`
    update survey_response_pdfs set
      state = 'archived', attempts = attempts + 1, last_attempt_at = now(), next_attempt_at = null,
      size_bytes = ${stored.sizeBytes}, sha256 = ${stored.sha256}, storage_path = ${stored.storagePath},
      archived_at = now(), last_status = ${status}, last_error = null, lease_owner = null
    where id = ${id} and state <> 'archived'`.execute(db);
}

/** 404: the survey response does not exist (any more). Never due again (unless added again). */
export async function recordGone(db: Warehouse, id: string, status: number, error: string): Promise<void> {
  await sql`
    update survey_response_pdfs set
      state = 'gone', attempts = attempts + 1, last_attempt_at = now(), next_attempt_at = null,
      last_status = ${status}, last_error = ${storableText(error)}, lease_owner = null
    where id = ${id} and state not in ('archived', 'gone')`.execute(db);
}

/**
 * An attempt that did not archive the PDF and is to be repeated: `waiting` (422, not COMPLETED
 * yet) or `retrying` (5xx, network, a body that is no PDF, any other error). Due again after the
 * backoff for the attempts made so far. Returns when, in the database's time.
 */
export async function recordRetryLater(
  db: Warehouse,
  id: string,
  owner: string,
  state: 'waiting' | 'retrying',
  status: number | null,
  error: string,
  backoff: PdfBackoff,
): Promise<{ attempts: number; nextAttemptAt: Date } | undefined> {
  return db.transaction().execute(async (trx) => {
    const { rows } = await sql<Pick<Row<'survey_response_pdfs'>, 'attempts' | 'state' | 'lease_owner'>>`
      select attempts, state, lease_owner from survey_response_pdfs where id = ${id} for update`.execute(trx);
    const row = rows[0];
    // Archived or gone meanwhile, or leased to another run since: that run's outcome counts.
    if (!row || row.state === 'archived' || row.state === 'gone' || row.lease_owner !== owner) return undefined;
    const attempts = row.attempts + 1;
    const delayMs = pdfRetryDelayMs(attempts, backoff);
    const updated = await sql<{ next_attempt_at: Date }>`
      update survey_response_pdfs set
        state = ${state}, attempts = ${attempts}, last_attempt_at = now(),
        next_attempt_at = now() + ${delayMs} * interval '1 millisecond',
        last_status = ${status}, last_error = ${storableText(error)}, lease_owner = null
      where id = ${id}
      returning next_attempt_at`.execute(trx);
    return { attempts, nextAttemptAt: updated.rows[0]!.next_attempt_at };
  });
}

/** A failed try that the activity repeats at once (Temporal's retry): shown, not yet an attempt. */
export async function noteFailedTry(
  db: Warehouse,
  id: string,
  owner: string,
  status: number | null,
  error: string,
): Promise<void> {
  await sql`
    update survey_response_pdfs set last_attempt_at = now(), last_status = ${status}, last_error = ${storableText(error)}
    where id = ${id} and lease_owner = ${owner} and state not in ('archived', 'gone')`.execute(db);
}

export interface PdfArchiveStatus {
  states: Record<SurveyPdfState, number>;
  total: number;
  /** Sum of the sizes of archived survey responses (a PDF shared by two counts twice). */
  archivedBytes: number;
  /** Distinct contents stored, and their bytes (what the archive directory holds). */
  storedFiles: number;
  storedBytes: number;
  /** When the longest-waiting (422) entry was queued. */
  oldestWaitingSince: Date | null;
  /** The earliest next attempt of an entry that is not archived or gone. */
  nextAttemptAt: Date | null;
  /** The latest entries whose last attempt did not archive them (waiting, retrying, gone). */
  problems: Array<{
    id: string;
    state: SurveyPdfState;
    attempts: number;
    lastStatus: number | null;
    lastError: string | null;
    lastAttemptAt: Date | null;
    nextAttemptAt: Date | null;
  }>;
}

export async function pdfArchiveStatus(db: Warehouse, problemLimit = 10): Promise<PdfArchiveStatus> {
  const summary = await sql<{
    queued: number;
    waiting: number;
    retrying: number;
    archived: number;
    gone: number;
    total: number;
    archived_bytes: number;
    stored_files: number;
    stored_bytes: number;
    oldest_waiting_since: Date | null;
    next_attempt_at: Date | null;
  }>`select queued, waiting, retrying, archived, gone, total, archived_bytes, stored_files, stored_bytes, oldest_waiting_since, next_attempt_at from bi_pdf_archive`.execute(
    db,
  );
  const s = summary.rows[0]!;
  const problems = await sql<PdfArchiveStatus['problems'][number]>`
    select id, state, attempts, last_status as "lastStatus", last_error as "lastError", last_attempt_at as "lastAttemptAt", next_attempt_at as "nextAttemptAt"
    from survey_response_pdfs
    where state in ('waiting', 'retrying', 'gone') or (state = 'queued' and last_error is not null)
    order by last_attempt_at desc nulls last, id
    limit ${problemLimit}`.execute(db);
  return {
    states: { queued: s.queued, waiting: s.waiting, retrying: s.retrying, archived: s.archived, gone: s.gone },
    total: s.total,
    archivedBytes: s.archived_bytes,
    storedFiles: s.stored_files,
    storedBytes: s.stored_bytes,
    oldestWaitingSince: s.oldest_waiting_since,
    nextAttemptAt: s.next_attempt_at,
    problems: problems.rows,
  };
}
