import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Logger } from '../platform/logger.ts';
import type { Warehouse } from '../warehouse/database.ts';
import { failRunningRuns, runningRuns } from '../warehouse/refresh/run-ledger.ts';
import { failureMessage } from '../workflows/failure-message.ts';

/** How old a run whose workflow Temporal does not know must be before it is ended: no refresh lasts a week. */
const UNKNOWN_WORKFLOW_AGE_MS = 7 * 24 * 3600_000;

/**
 * Nothing stays `running` for ever: a refresh run the warehouse still calls running whose workflow has
 * ended (terminated, timed out, failed before it could record why, or gone from Temporal) is ended as
 * failed, saying so. A worker does this when it starts, so a run left behind by a crash, a terminate or
 * a warehouse that was away when its workflow ended is closed by the next worker. Runs whose workflow
 * is still open are left to it; so are runs without a recorded workflow (they cannot be checked), and
 * recent runs whose workflow this namespace does not know (it may be another namespace's).
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
      // Unknown here may mean another namespace (a worker configured with the wrong one): a recent
      // run is left alone; one older than any refresh lasts had its workflow removed after retention.
      if (Date.now() - run.startedAt.getTime() < UNKNOWN_WORKFLOW_AGE_MS) continue;
      reason = `its workflow ${run.workflowId} is not in Temporal and the run started over 7 days ago (its workflow was removed after its retention)`;
    }
    const ended = await failRunningRuns(db, reason, [run.id]);
    if (ended.length > 0) {
      closed.push(run.id);
      log.warn({ runId: run.id, reason }, `refresh run ${run.id} was left running: ended as failed`);
    }
  }
  return closed;
}
