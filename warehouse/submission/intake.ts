import { randomUUID } from 'node:crypto';
import { createWriteStream, type WriteStream } from 'node:fs';
import { basename } from 'node:path';
import { sql } from 'kysely';
import type { Warehouse } from '../database.ts';
import { toJsonRecordset } from '../refresh/json-recordset.ts';
import { readShipmentFile } from './shipment-file.ts';
import { checkShipmentRow, type RowError } from './shipment-rules.ts';

/**
 * `ddsync submit FILE`, up to the point where transactions are started: every row is read (streamed),
 * checked and recorded in transaction_requests (in chunks, so memory stays bounded), and a report of
 * the rows that will not be sent is written. Nothing is sent to the service here: the caller starts
 * the bulk submission only once the whole file was read. A key accepted in an earlier batch is
 * recorded as a duplicate and not sent again. A batch without an accepted row is closed (done) here.
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
  payload: unknown;
}

const CHUNK = 1000;
const SAMPLES = 10;

export async function takeInShipments(db: Warehouse, path: string, reportPath: string): Promise<IntakeSummary> {
  const batchId = randomUUID();
  await sql`insert into submission_batches (id, source) values (${batchId}::uuid, ${basename(path)})`.execute(db);
  const summary: IntakeSummary = {
    batchId,
    rows: 0,
    accepted: 0,
    invalid: 0,
    duplicates: 0,
    samples: [],
    reportPath: null,
  };
  let report: WriteStream | undefined;
  const note = (line: ReportLine) => {
    if (!report) {
      report = createWriteStream(reportPath, { encoding: 'utf8' });
      summary.reportPath = reportPath;
    }
    report.write(`${JSON.stringify(line)}\n`);
    if (summary.samples.length < SAMPLES) summary.samples.push(line);
  };
  // Keys accepted earlier in this file: a key must name one shipment.
  const keysInFile = new Map<string, number>();
  let candidates: Candidate[] = [];
  let invalid: ReportLine[] = [];
  const flush = async () => {
    const { accepted, duplicates } = await recordChunk(db, batchId, candidates, invalid);
    summary.accepted += accepted;
    summary.duplicates += duplicates.length;
    summary.invalid += invalid.length;
    for (const line of [...invalid, ...duplicates].sort((a, b) => a.line - b.line)) note(line);
    candidates = [];
    invalid = [];
  };
  try {
    for await (const row of readShipmentFile(path)) {
      summary.rows++;
      if (row.parseError !== undefined) {
        invalid.push({
          line: row.line,
          key: null,
          status: 'invalid',
          errors: [{ field: '(row)', rule: row.parseError }],
        });
      } else {
        const result = checkShipmentRow(row.value);
        const firstLine = result.key === null ? undefined : keysInFile.get(result.key);
        if (!result.ok) invalid.push({ line: row.line, key: result.key, status: 'invalid', errors: result.errors });
        else if (firstLine !== undefined)
          invalid.push({
            line: row.line,
            key: result.key,
            status: 'invalid',
            errors: [{ field: 'key', rule: `duplicate of line ${firstLine} of this file: a key names one shipment` }],
          });
        else {
          keysInFile.set(result.key, row.line);
          candidates.push({ line: row.line, key: result.key, payload: result.body });
        }
      }
      if (candidates.length + invalid.length >= CHUNK) await flush();
    }
    await flush();
  } catch (error) {
    // A broken file is not what its author meant: none of it is kept, none of it will be sent.
    await sql`delete from submission_batches where id = ${batchId}::uuid`.execute(db);
    throw error;
  } finally {
    if (report) await new Promise<void>((resolve) => report!.end(resolve));
  }
  // A batch with nothing to send ends here: no workflow will run for it, and none would close it.
  const nothingToSend = summary.accepted === 0;
  await sql`
    update submission_batches set rows = ${summary.rows}, accepted = ${summary.accepted}, invalid = ${summary.invalid}, duplicates = ${summary.duplicates},
      status = case when ${nothingToSend} then 'done' else status end, finished_at = case when ${nothingToSend} then now() else finished_at end
    where id = ${batchId}::uuid`.execute(db);
  return summary;
}

/** One chunk in one transaction: accepted rows (unless their key was accepted before), then the rest. */
async function recordChunk(
  db: Warehouse,
  batchId: string,
  candidates: Candidate[],
  invalid: ReportLine[],
): Promise<{ accepted: number; duplicates: ReportLine[] }> {
  return db.transaction().execute(async (trx) => {
    let acceptedKeys = new Set<string>();
    if (candidates.length > 0) {
      const inserted = await sql<{ key: string }>`
        insert into transaction_requests (batch_id, line, key, status, payload)
        select ${batchId}::uuid, r.line, r.key, 'accepted', r.payload
        from json_to_recordset(${toJsonRecordset(candidates)}::json) as r(line int, key text, payload jsonb)
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
      const earlier = await sql<{ key: string; batch_id: string }>`
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
    const rest = [...invalid, ...duplicates].map((r) => ({
      line: r.line,
      key: r.key,
      status: r.status,
      errors: r.errors,
      earlier_batch_id: r.earlierBatchId ?? null,
    }));
    if (rest.length > 0) {
      await sql`
        insert into transaction_requests (batch_id, line, key, status, errors, earlier_batch_id)
        select ${batchId}::uuid, r.line, r.key, r.status, r.errors, r.earlier_batch_id
        from json_to_recordset(${toJsonRecordset(rest)}::json) as r(line int, key text, status text, errors jsonb, earlier_batch_id uuid)`.execute(
        trx,
      );
    }
    return { accepted: acceptedKeys.size, duplicates };
  });
}
