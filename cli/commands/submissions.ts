import { WorkflowNotFoundError } from '@temporalio/client';
import { parseFlags, UsageError } from '../usage.ts';
import { loadConfig } from '../../infra/config.ts';
import { connectClient } from '../../infra/temporal-connection.ts';
import { openWarehouse } from '../../activities/warehouse/database.ts';
import { batchReport, recentBatches } from '../../activities/submission/batch-report.ts';
import { bulkProgressQuery, bulkSubmitWorkflowId } from '../../workflows/bulk-submit.ts';
import { batchExitCode, formatBatch } from '../submission-summary.ts';

export const summary = 'where submitted batches stand: submissions list | status BATCH | cancel BATCH';
export const help = `ddsync submissions list [--json]
ddsync submissions status BATCH [--json]
ddsync submissions cancel BATCH

list     the latest batches
status   a batch: its rows, its transactions per state (pending, in progress, available, error,
         failed, timed out, cancelled) and the reasons of those without a DDS reference; with the
         live counters of its workflow while it runs. Exit code 1 when any row was invalid or any
         transaction ended without a DDS reference.
cancel   stops a batch: nothing more is sent; drafts not yet submitted are deleted; transactions
         already submitted are followed to the end (they exist at the EU and cannot be withdrawn).`;

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(argv, { json: { type: 'boolean' } }, true);
  const [sub, batchId, ...extra] = positionals;
  if (sub !== 'list' && sub !== 'status' && sub !== 'cancel') throw new UsageError(sub === undefined ? 'a subcommand is required: list, status or cancel' : `unknown subcommand "${sub}": expected list, status or cancel`);
  if (sub !== 'list' && !batchId) throw new UsageError(`${sub} needs a BATCH id (see ddsync submissions list)`);
  if (batchId && !/^[0-9a-f-]{36}$/i.test(batchId)) throw new UsageError(`BATCH must be a batch id (a UUID), got "${batchId}"`);
  if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}"`);
  const config = loadConfig(sub === 'list' ? ['database'] : ['database', 'temporal']);
  const db = openWarehouse(config.database!.url, 2, 'ddsync-submissions');
  try {
    if (sub === 'list') {
      const batches = await recentBatches(db);
      if (values.json) process.stdout.write(`${JSON.stringify(batches)}\n`);
      else for (const b of batches) process.stdout.write(`${b.id}  ${b.created_at.toISOString()}  ${b.status.padEnd(9)} ${String(b.accepted).padStart(7)} accepted  ${b.source}\n`);
      return 0;
    }
    const report = await batchReport(db, batchId!);
    if (!report) {
      process.stderr.write(`ddsync submissions: no batch ${batchId} in the warehouse\n`);
      return 1;
    }
    const client = await connectClient(config.temporal!);
    try {
      const handle = client.workflow.getHandle(bulkSubmitWorkflowId(batchId!));
      if (sub === 'cancel') {
        try {
          await handle.cancel();
        } catch (error) {
          if (!(error instanceof WorkflowNotFoundError)) throw error;
          process.stderr.write(`ddsync submissions: batch ${batchId} has no running workflow (${report.status})\n`);
          return 1;
        }
        await handle.result().catch(() => undefined);
        process.stdout.write(`batch ${batchId} cancelled: nothing more is sent; transactions already submitted are followed to the end\n`);
        return 0;
      }
      const live = await handle.query(bulkProgressQuery).catch(() => undefined);
      if (values.json) process.stdout.write(`${JSON.stringify({ ...report, workflow: live ?? null })}\n`);
      else {
        process.stdout.write(`${formatBatch(report)}\n`);
        if (live) process.stdout.write(`  workflow: started ${live.started}, ended ${live.ended}, pending ${live.pending}${live.allStarted ? '' : ' (still starting)'}\n`);
      }
      return batchExitCode(report);
    } finally {
      await client.connection.close();
    }
  } finally {
    await db.destroy();
  }
}
