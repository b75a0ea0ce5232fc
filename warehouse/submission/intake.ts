import { randomUUID } from 'node:crypto';
import { createWriteStream, type WriteStream } from 'node:fs';
import { basename } from 'node:path';
import { finished } from 'node:stream/promises';
import { sql } from 'kysely';
import type { CreateTransactionInput } from '../../schema/upstream.ts';
import type { Row, Warehouse } from '../database.ts';
import { jsonRecordset, type RecordsetColumns } from '../refresh/json-recordset.ts';
import type { ColumnValues } from '../refresh/rows.ts';
import { printable, printableExcerpt } from '../../domain/submission/printable.ts';
import { FileFormatError, type FileRow, readShipmentFile, ShipmentFileError } from './shipment-file.ts';
import { checkShipmentRow, type RowError } from '../../domain/submission/shipment-rules.ts';
import type { ReadinessGate } from './readiness-gate.ts';

/**
 * `ddsync submit FILE`, up to the point where transactions are started: every row is read (streamed),
 * checked and recorded in transaction_requests (in chunks, so memory stays bounded), and a report of
 * the rows that will not be sent is written. Nothing is sent to the service here: the caller starts
 * the bulk submission only once the whole file was read. A key accepted in an earlier batch is
 * recorded as a duplicate and not sent again. A batch without an accepted row is closed (done) here.
 * A file without a single row is a FileFormatError (nothing to send is not a success), as is one that
 * cannot be read: no batch is kept for them. Whatever of the file is kept to be shown (a refused row's
 * key, fields, rules; the file's name) is made printable first (printable.ts): the report, the
 * warehouse and the terminal never get a control character from a file.
 */

export interface IntakeSummary {
  batchId: string;
  rows: number;
  accepted: number;
  invalid: number;
  duplicates: number;
  /** The first few problems, for the summary printed to people (all are in the report). */
  samples: ReportLine[];
  reportPath: string | null;
  /** What the readiness gate did: its policy, what it said of its data, rows sent with warnings, rows it refused. */
  readiness: { policy: ReadinessGate['policy']; note: string | null; warned: number; refused: number } | null;
}

export interface ReportLine {
  line: number;
  key: string | null;
  status: 'invalid' | 'duplicate';
  errors: RowError[];
  earlierBatchId?: string;
}

interface Candidate {
  line: number;
  key: string;
  payload: CreateTransactionInput;
  readiness_warnings?: unknown;
}

/** An accepted row as recorded; the payload (the create body) and the gate's warnings as JSON text. */
type AcceptedRow = ColumnValues<'transaction_requests', 'line' | 'key' | 'payload' | 'readiness_warnings'>;
const ACCEPTED_COLUMNS: RecordsetColumns<AcceptedRow> = {
  line: 'int4',
  key: 'text',
  payload: 'jsonb',
  readiness_warnings: 'jsonb',
};

/** An invalid or duplicate row as recorded; its errors as JSON text. */
type RefusedRow = ColumnValues<'transaction_requests', 'line' | 'key' | 'status' | 'errors' | 'earlier_batch_id'>;
const REFUSED_COLUMNS: RecordsetColumns<RefusedRow> = {
  line: 'int4',
  key: 'text',
  status: 'text',
  errors: 'jsonb',
  earlier_batch_id: 'uuid',
};

const CHUNK = 1000;
const SAMPLES = 10;
/** Errors kept per refused row: a row of a million unknown fields gets the first ones and a count. */
const ERRORS_PER_ROW = 20;

/** The cannot-write of the report: the file's rows are not kept either (nothing is sent). */
export class ReportWriteError extends ShipmentFileError {
  override name = 'ReportWriteError';
}

/** A refused row's errors as they are kept and shown: printable, bounded in length and number. */
function shownErrors(errors: readonly RowError[]): RowError[] {
  const shown = errors
    .slice(0, ERRORS_PER_ROW)
    .map((e) => ({ field: printableExcerpt(e.field, 200), rule: printableExcerpt(e.rule, 600) }));
  if (errors.length > ERRORS_PER_ROW)
    shown.push({ field: '(row)', rule: `and ${errors.length - ERRORS_PER_ROW} more problems not listed` });
  return shown;
}

/**
 * A row of the file → accepted (its create body) or refused, with every reason (the file's first),
 * made printable. Pure: the intake below records what it says.
 */
export function checkFileRow(
  row: FileRow,
): { ok: true; key: string; body: CreateTransactionInput } | { ok: false; key: string | null; errors: RowError[] } {
  const result = row.value === undefined && row.errors ? undefined : checkShipmentRow(row.value);
  const errors = [...(row.errors ?? []), ...(result && !result.ok ? result.errors : [])];
  if (result?.ok && errors.length === 0) return result;
  const key = result?.key ?? null;
  return { ok: false as const, key: key === null ? null : printableExcerpt(key, 255), errors: shownErrors(errors) };
}

export async function takeInShipments(
  db: Warehouse,
  path: string,
  /** Where the rows not sent are written (only if there are any); a function of the batch id, or a path. */
  reportPath: string | ((batchId: string) => string),
  /** The readiness gate (readiness-gate.ts): rows it refuses are invalid rows; its warnings go with the row. */
  gate?: ReadinessGate,
): Promise<IntakeSummary> {
  const batchId = randomUUID();
  const source = printableExcerpt(basename(path), 200);
  const asOf = gate?.freshness && gate.freshness.state !== 'never' ? gate.freshness.asOf.toISOString() : null;
  await sql`
    insert into submission_batches (id, source, readiness_policy, readiness_data_as_of, readiness_note)
    values (${batchId}::uuid, ${source}, ${gate?.policy ?? null}, ${asOf}::timestamptz, ${gate?.note ?? null})`.execute(
    db,
  );
  const summary: IntakeSummary = {
    batchId,
    rows: 0,
    accepted: 0,
    invalid: 0,
    duplicates: 0,
    samples: [],
    reportPath: null,
    readiness: gate ? { policy: gate.policy, note: gate.note, warned: 0, refused: 0 } : null,
  };
  let report: WriteStream | undefined;
  let reportError: Error | undefined;
  const note = (line: ReportLine) => {
    if (!report) {
      summary.reportPath = typeof reportPath === 'string' ? reportPath : reportPath(batchId);
      report = createWriteStream(summary.reportPath, { encoding: 'utf8' });
      report.on('error', (error) => (reportError ??= error));
    }
    report.write(`${JSON.stringify(line)}\n`);
    if (summary.samples.length < SAMPLES) summary.samples.push(line);
  };
  // Keys accepted earlier in this file: a key must name one shipment.
  const keysInFile = new Map<string, number>();
  let candidates: Candidate[] = [];
  let invalid: ReportLine[] = [];
  const flush = async () => {
    if (gate && candidates.length > 0) {
      // Judged before anything of the chunk is recorded: a refused row is an invalid row like any other.
      const verdicts = await gate.judge(candidates.map((c) => ({ body: c.payload })));
      const passed: Candidate[] = [];
      candidates.forEach((c, i) => {
        const v = verdicts[i]!;
        if (v.refuse.length > 0) {
          invalid.push({ line: c.line, key: printable(c.key), status: 'invalid', errors: shownErrors(v.refuse) });
          summary.readiness!.refused++;
        } else passed.push(v.warnings.length > 0 ? { ...c, readiness_warnings: v.warnings } : c);
      });
      candidates = passed;
      invalid.sort((a, b) => a.line - b.line);
    }
    const { accepted, duplicates } = await recordChunk(db, batchId, candidates, invalid);
    if (summary.readiness) summary.readiness.warned += accepted.warned;
    summary.accepted += accepted.rows;
    summary.duplicates += duplicates.length;
    summary.invalid += invalid.length;
    for (const line of [...invalid, ...duplicates].sort((a, b) => a.line - b.line)) note(line);
    candidates = [];
    invalid = [];
    if (reportError) throw cannotWriteReport(summary.reportPath!, reportError);
  };
  try {
    for await (const row of readShipmentFile(path)) {
      summary.rows++;
      const result = checkFileRow(row);
      const firstLine = result.ok ? keysInFile.get(result.key) : undefined;
      if (!result.ok) invalid.push({ line: row.line, key: result.key, status: 'invalid', errors: result.errors });
      else if (firstLine !== undefined)
        invalid.push({
          line: row.line,
          key: printable(result.key),
          status: 'invalid',
          errors: [{ field: 'key', rule: `duplicate of line ${firstLine} of this file: a key names one shipment` }],
        });
      else {
        keysInFile.set(result.key, row.line);
        candidates.push({ line: row.line, key: result.key, payload: result.body });
      }
      if (candidates.length + invalid.length >= CHUNK) await flush();
    }
    await flush();
    if (summary.rows === 0)
      throw new FileFormatError(path, 'has no rows (it is empty, or holds only blank lines or []): nothing to send');
    if (report) {
      report.end();
      await finished(report).catch((error: Error) => {
        throw cannotWriteReport(summary.reportPath!, error);
      });
    }
  } catch (error) {
    // A broken file is not what its author meant: none of it is kept, none of it will be sent.
    report?.destroy();
    await sql`delete from submission_batches where id = ${batchId}::uuid`.execute(db);
    throw error;
  }
  // A batch with nothing to send ends here: no workflow will run for it, and none would close it.
  const nothingToSend = summary.accepted === 0;
  await sql`
    update submission_batches set rows = ${summary.rows}, accepted = ${summary.accepted}, invalid = ${summary.invalid}, duplicates = ${summary.duplicates},
      status = case when ${nothingToSend} then 'done' else status end, finished_at = case when ${nothingToSend} then now() else finished_at end
    where id = ${batchId}::uuid`.execute(db);
  return summary;
}

function cannotWriteReport(reportPath: string, error: Error): ReportWriteError {
  const code = (error as NodeJS.ErrnoException).code;
  return new ReportWriteError(
    reportPath,
    `the report of the rows not sent cannot be written (${code ?? error.message}); give another with --report PATH`,
  );
}

/** One chunk in one transaction: accepted rows (unless their key was accepted before), then the rest. */
async function recordChunk(
  db: Warehouse,
  batchId: string,
  candidates: Candidate[],
  invalid: ReportLine[],
): Promise<{ accepted: { rows: number; warned: number }; duplicates: ReportLine[] }> {
  return db.transaction().execute(async (trx) => {
    let acceptedKeys = new Set<string>();
    if (candidates.length > 0) {
      const accepted = candidates.map(
        (c): AcceptedRow => ({
          line: c.line,
          key: c.key,
          payload: JSON.stringify(c.payload),
          readiness_warnings: c.readiness_warnings === undefined ? null : JSON.stringify(c.readiness_warnings),
        }),
      );
      const inserted = await sql<{ key: string }>`
        insert into transaction_requests (batch_id, line, key, status, payload, readiness_warnings)
        select ${batchId}::uuid, r.line, r.key, 'accepted', r.payload, r.readiness_warnings
        from ${jsonRecordset(accepted, ACCEPTED_COLUMNS)}
        on conflict (key) where status = 'accepted' do nothing
        returning key`.execute(trx);
      acceptedKeys = new Set(inserted.rows.map((r) => r.key));
      // Every accepted row gets its transaction row at once: the pipeline view counts it as pending.
      await sql`
        insert into transactions (key, batch_id, activity_type, country_of_activity, legal_entity_id)
        select r.key, ${batchId}::uuid, r.payload->>'activityType', r.payload->>'countryOfActivity', r.payload->>'legalEntityId'
        from transaction_requests r where r.batch_id = ${batchId}::uuid and r.key = any(${[...acceptedKeys]}::text[]) and r.status = 'accepted'`.execute(
        trx,
      );
    }
    const repeated = candidates.filter((c) => !acceptedKeys.has(c.key));
    const duplicates: ReportLine[] = [];
    if (repeated.length > 0) {
      const earlier = await sql<Pick<Row<'transaction_requests'>, 'batch_id'> & { key: string }>`
        select key, batch_id from transaction_requests where status = 'accepted' and key = any(${repeated.map((c) => c.key)}::text[])`.execute(
        trx,
      );
      const batchOf = new Map(earlier.rows.map((r) => [r.key, r.batch_id]));
      for (const c of repeated) {
        const earlierBatchId = batchOf.get(c.key) ?? '';
        duplicates.push({
          line: c.line,
          key: c.key,
          status: 'duplicate',
          earlierBatchId,
          errors: [{ field: 'key', rule: `already submitted in batch ${earlierBatchId}: not sent again` }],
        });
      }
    }
    const rest = [...invalid, ...duplicates].map(
      (r): RefusedRow => ({
        line: r.line,
        key: r.key,
        status: r.status,
        errors: JSON.stringify(r.errors),
        earlier_batch_id: r.earlierBatchId ?? null,
      }),
    );
    if (rest.length > 0) {
      await sql`
        insert into transaction_requests (batch_id, line, key, status, errors, earlier_batch_id)
        select ${batchId}::uuid, r.line, r.key, r.status, r.errors, r.earlier_batch_id
        from ${jsonRecordset(rest, REFUSED_COLUMNS)}`.execute(trx);
    }
    const warned = candidates.filter((c) => c.readiness_warnings !== undefined && acceptedKeys.has(c.key)).length;
    return { accepted: { rows: acceptedKeys.size, warned }, duplicates };
  });
}
