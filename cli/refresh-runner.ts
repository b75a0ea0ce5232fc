import { randomUUID } from 'node:crypto';
import type { Client, WorkflowHandle } from '@temporalio/client';
import type { Warehouse } from '../warehouse/database.ts';
import { readProgress } from '../warehouse/refresh/run-ledger.ts';
import type { RunSummary } from '../warehouse/refresh/sweep.ts';
import { refreshWarehouse, refreshWorkflowId, type RefreshInput } from '../workflows/refresh-warehouse.ts';
import { progressPrinter, refreshProgress } from './progress.ts';
import { resultThroughOutages } from './follow-through-outages.ts';

/** Starting a refresh and following it to the end: shared by `ddsync refresh` and `ddsync demo`. */

export interface StartedRefresh {
  runId: string;
  workflowId: string;
  /** An already running refresh was found and is followed instead of starting a second one. */
  attached: boolean;
  handle: WorkflowHandle<typeof refreshWarehouse>;
}

/**
 * Two refreshes at once would sweep each other's new rows, so a refresh already running (started
 * by hand or by the schedule) is followed instead of starting another.
 */
export async function startRefresh(
  client: Client,
  taskQueue: string,
  input: Omit<RefreshInput, 'runId'>,
): Promise<StartedRefresh> {
  // Only refreshes of this deployment: another task queue in the namespace is another warehouse.
  const query = `WorkflowType = 'refreshWarehouse' AND ExecutionStatus = 'Running' AND TaskQueue = '${taskQueue.replace(/'/g, "\\'")}'`;
  for await (const running of client.workflow.list({ query })) {
    const handle = client.workflow.getHandle<typeof refreshWarehouse>(running.workflowId);
    const progress = await handle.query<{ runId: string }>('progress').catch(() => undefined);
    return { runId: progress?.runId ?? running.workflowId, workflowId: running.workflowId, attached: true, handle };
  }
  const runId = randomUUID();
  const workflowId = refreshWorkflowId(runId);
  const handle = await client.workflow.start(refreshWarehouse, { taskQueue, workflowId, args: [{ ...input, runId }] });
  return { runId, workflowId, attached: false, handle };
}

/** Waits for the refresh, drawing progress from the warehouse (on `stream`) until it ends. */
export async function followRefresh(
  db: Warehouse,
  started: StartedRefresh,
  stream: NodeJS.WriteStream | null,
): Promise<RunSummary> {
  const printer = stream ? progressPrinter(stream) : undefined;
  let finished = false;
  const result = resultThroughOutages<RunSummary>(started.handle, {
    what: `refresh ${started.runId}`,
    again: 'ddsync refresh --wait',
    note: (line) => (printer ? printer.note(line) : process.stderr.write(`${line}\n`)),
  }).finally(() => {
    finished = true;
  });
  if (printer) {
    const draw = async () => {
      const p = await readProgress(db, started.runId).catch(() => undefined);
      if (p && !finished) printer.update(refreshProgress(p, Date.now()));
    };
    const timer = setInterval(() => void draw(), 500);
    try {
      await result.catch(() => undefined);
    } finally {
      clearInterval(timer);
      const p = await readProgress(db, started.runId).catch(() => undefined);
      printer.done(p ? refreshProgress(p, (p.finishedAt ?? new Date()).getTime()) : undefined);
    }
  }
  return result;
}
