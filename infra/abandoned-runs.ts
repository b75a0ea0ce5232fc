import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Logger } from '../platform/logger.ts';
import type { Warehouse } from '../warehouse/database.ts';
import { failRunningRuns, runningRuns } from '../warehouse/refresh/run-ledger.ts';
import { failureMessage } from '../workflows/failure-message.ts';

/**
 * Nothing stays `running` for ever: a refresh run the warehouse still calls running whose workflow has
 * ended (terminated, timed out, failed before it could record why, or gone from Temporal) is ended as
 * failed, saying so. A worker does this when it starts, so a run left behind by a crash, a terminate or
 * a warehouse that was away when its workflow ended is closed by the next worker. Runs whose workflow
 * is still open are left to it; so are runs without a recorded workflow (they cannot be checked).
 */
export async function closeAbandonedRuns(db: Warehouse, client: Client, log: Logger): Promise<string[]> {
  const closed: string[] = [];
  for (const run of await runningRuns(db)) {
    if (!run.workflowId) continue;
    const handle = client.workflow.getHandle(run.workflowId);
    let reason: string;
    try {
      const { status } = await handle.describe();
      if (status.name === 'RUNNING') continue;
      const why = await handle.result().then(
        () => 'it completed',
        (error: unknown) => failureMessage(error),
      );
      reason = `its workflow ${run.workflowId} ended (${status.name.toLowerCase()}) without recording how the run ended: ${why}`;
    } catch (error) {
      if (!(error instanceof WorkflowNotFoundError)) throw error;
      reason = `its workflow ${run.workflowId} is not in Temporal (removed after its retention, or another Temporal namespace)`;
    }
    const ended = await failRunningRuns(db, reason, [run.id]);
    if (ended.length > 0) {
      closed.push(run.id);
      log.warn({ runId: run.id, reason }, `refresh run ${run.id} was left running: ended as failed`);
    }
  }
  return closed;
}
