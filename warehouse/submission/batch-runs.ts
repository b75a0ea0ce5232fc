import { sql } from 'kysely';
import type { Warehouse } from '../database.ts';

/**
 * What starting a batch's run reads and records (`ddsync submit`, `ddsync submissions retry`): the
 * workflow that runs it, the transactions a run has still to send, and the earlier batches a file's
 * duplicate keys belong to that never ran to their end.
 */

/** The workflow now running the batch (each start, first or again, records its own). */
export async function recordBatchWorkflow(db: Warehouse, batchId: string, workflowId: string): Promise<void> {
  await sql`update submission_batches set workflow_id = ${workflowId} where id = ${batchId}::uuid`.execute(db);
}

/** The batch's transactions still pending (never started, or reopened): what its next run starts. */
export async function pendingTransactions(db: Warehouse, batchId: string): Promise<number> {
  const { rows } = await sql<{
    n: number;
  }>`select count(*)::int as n from transactions where batch_id = ${batchId}::uuid and state = 'pending'`.execute(db);
  return rows[0]?.n ?? 0;
}

/** Earlier batches this batch's duplicate keys belong to that are still open (not done, not cancelled). */
export async function unfinishedEarlierBatches(db: Warehouse, batchId: string): Promise<string[]> {
  const { rows } = await sql<{ id: string }>`
    select distinct b.id::text as id from transaction_requests r join submission_batches b on b.id = r.earlier_batch_id
    where r.batch_id = ${batchId}::uuid and r.status = 'duplicate' and b.status = 'open'
    order by 1`.execute(db);
  return rows.map((r) => r.id);
}
