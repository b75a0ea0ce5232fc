import { loadConfig } from '../../platform/config.ts';
import { connectClient } from '../../infra/temporal-connection.ts';
import { openWarehouse } from '../../warehouse/database.ts';
import { checkWarehouse } from '../../infra/warehouse-connection.ts';
import { readSummary, type RunSummary } from '../../warehouse/refresh/sweep.ts';
import { followRefresh, startRefresh } from '../refresh-runner.ts';
import { refreshInputFrom } from '../../infra/schedules.ts';
import { formatRunSummary } from '../refresh-summary.ts';

export async function run(values: { wait?: boolean; json?: boolean }): Promise<number> {
  const config = loadConfig(values.wait ? ['temporal', 'refresh', 'database'] : ['temporal', 'refresh']);
  // --wait reads progress from the warehouse: one it cannot reach must not leave a refresh started and unfollowed.
  if (values.wait) await checkWarehouse(config.database!.url, 'ddsync-refresh-cli');
  const client = await connectClient(config.temporal!);
  try {
    const started = await startRefresh(client, config.temporal!.taskQueue, refreshInputFrom(config.refresh!));
    const note = started.attached
      ? `a refresh is already running: following ${started.workflowId}`
      : `refresh ${started.runId} started (workflow ${started.workflowId})`;
    if (!values.wait) {
      process.stdout.write(
        values.json
          ? `${JSON.stringify({ runId: started.runId, workflowId: started.workflowId, attached: started.attached })}\n`
          : `${note}\n`,
      );
      return 0;
    }
    process.stderr.write(`${note}\n`);
    const db = openWarehouse(config.database!.url, 2, 'ddsync-refresh-cli');
    try {
      let result: RunSummary;
      try {
        result = await followRefresh(db, started, values.json ? null : process.stderr);
      } catch (error) {
        // The workflow failed; the warehouse holds the run's outcome and reason (if it got that far).
        // A run still `running` there is no outcome: the error says what happened (Temporal lost, …).
        const recorded = await readSummary(db, started.runId).catch(() => undefined);
        if (!recorded || recorded.status === 'running') throw error;
        result = recorded;
      }
      process.stdout.write(values.json ? `${JSON.stringify(result)}\n` : `${formatRunSummary(result)}\n`);
      return result.status === 'succeeded' ? 0 : 1;
    } finally {
      await db.destroy();
    }
  } finally {
    await client.connection.close();
  }
}
