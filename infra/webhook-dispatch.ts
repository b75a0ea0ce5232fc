import type { Client } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { Warehouse } from '../warehouse/database.ts';
import type { Logger } from '../platform/logger.ts';
import type { Outage } from '../platform/outage.ts';
import { temporalUnreachable } from './temporal-outages.ts';
import { transactionUpdatedSignal, transactionWorkflowId } from '../workflows/submit-transaction.ts';
import { submitBatchWorkflowId, transactionsUpdatedSignal } from '../workflows/submit-batch.ts';
import { markHandled, noteDispatchFailure, pendingEvents } from '../warehouse/webhooks/ledger.ts';
import { wakeTransaction } from '../warehouse/submission/bulk-ledger.ts';

/**
 * What an accepted event leads to: `transaction.updated` marks the transaction due in the ledger and
 * wakes its batch's workflow (signal `transactionsUpdated` to submitBatch), which reads the due
 * transactions and records their new status. A transaction of a batch started by an earlier version
 * (not followed in bulk) has a workflow of its own, woken as before (signal `transactionUpdated`). An
 * event for a transaction ddsync did not submit, or of another kind, is kept and marked, never an error.
 */
export const TRANSACTION_UPDATED = 'transaction.updated';

export interface StoredEvent {
  msg_id: string;
  event_type: string | null;
  transaction_id: string | null;
  payload: unknown;
}

function statusOf(payload: unknown): string | undefined {
  const data = (payload as { data?: { status?: unknown } } | null)?.data;
  return typeof data?.status === 'string' ? data.status : undefined;
}

export async function dispatchEvent(
  db: Warehouse,
  temporal: Client,
  event: StoredEvent,
  log: Logger,
  /** The receiver's record of Temporal outages: one line per outage instead of one per event. */
  temporalOutage?: Outage,
): Promise<string> {
  if (event.event_type !== TRANSACTION_UPDATED) {
    await markHandled(db, event.msg_id, 'ignored');
    return 'ignored';
  }
  const found = event.transaction_id ? await wakeTransaction(db, event.transaction_id) : undefined;
  if (!found) {
    await markHandled(db, event.msg_id, 'no_transaction');
    return 'no_transaction';
  }
  const status = statusOf(event.payload);
  try {
    if (found.inBulk)
      await temporal.workflow
        .getHandle(submitBatchWorkflowId(found.batchId))
        .signal(transactionsUpdatedSignal, { key: found.key, ...(status ? { status } : {}) });
    else
      await temporal.workflow
        .getHandle(transactionWorkflowId(found.key))
        .signal(transactionUpdatedSignal, status ? { status } : {});
    temporalOutage?.recovered();
    await markHandled(db, event.msg_id, 'signalled');
    return 'signalled';
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) {
      await markHandled(db, event.msg_id, 'workflow_closed');
      return 'workflow_closed';
    }
    const unreachable = temporalOutage && temporalUnreachable(error);
    if (unreachable)
      temporalOutage.failed(unreachable, 'events are kept and their workflows signalled when it answers');
    else log.warn({ msgId: event.msg_id, err: error }, 'could not signal the transaction workflow; will retry');
    await noteDispatchFailure(db, event.msg_id, error instanceof Error ? error.message : String(error)).catch(
      () => undefined,
    );
    throw error;
  }
}

/** Events accepted but not yet dispatched (the receiver stopped in between): dispatched now. */
export async function dispatchPending(
  db: Warehouse,
  temporal: Client,
  log: Logger,
  temporalOutage?: Outage,
): Promise<number> {
  let n = 0;
  for (const event of await pendingEvents(db)) {
    await dispatchEvent(db, temporal, event, log, temporalOutage).then(
      () => n++,
      () => undefined,
    );
  }
  return n;
}
