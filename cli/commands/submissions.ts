import { setTimeout as delay } from 'node:timers/promises';
import { WorkflowNotFoundError, type WorkflowHandle } from '@temporalio/client';
import type { Warehouse } from '../../warehouse/database.ts';
import { loadConfig } from '../../platform/config.ts';
import { connectClient } from '../../infra/temporal-connection.ts';
import { connectWarehouse } from '../../infra/warehouse-connection.ts';
import { batchReport, batchStatus, recentBatches } from '../../warehouse/submission/batch-report.ts';
import { bulkProgressQuery, bulkSubmitWorkflowId } from '../../workflows/bulk-submit.ts';
import { batchExitCode, formatBatch } from '../submission-summary.ts';
import { resubmittableKeys } from '../../warehouse/submission/resubmission.ts';
import { retryBatch } from '../submission-retry.ts';
import { followBatch } from '../submission-runner.ts';

/** `batchId` is checked (a UUID) for every subcommand but list. */
export async function run(
  sub: 'list' | 'status' | 'cancel' | 'retry',
  batchId: string | undefined,
  values: { json?: boolean; wait?: boolean },
): Promise<number> {
  const config = loadConfig(
    sub === 'list' ? ['database'] : sub === 'retry' ? ['database', 'temporal', 'submission'] : ['database', 'temporal'],
  );
  const db = await connectWarehouse(config.database!, 2, 'ddsync-submissions');
  try {
    if (sub === 'list') {
      const batches = await recentBatches(db);
      if (values.json) process.stdout.write(`${JSON.stringify(batches)}\n`);
      else
        for (const b of batches)
          process.stdout.write(
            `${b.id}  ${b.created_at.toISOString()}  ${b.status.padEnd(9)} ${String(b.accepted).padStart(7)} accepted  ${b.source}\n`,
          );
      return 0;
    }
    const recorded = await batchReport(db, batchId!);
    if (!recorded) {
      process.stderr.write(`ddsync submissions: no batch ${batchId} in the warehouse\n`);
      return 1;
    }
    const client = await connectClient(config.temporal!);
    try {
      if (sub === 'retry') {
        const outcome = await retryBatch(db, client, recorded, {
          taskQueue: config.temporal!.taskQueue,
          concurrency: config.submission!.concurrency,
          timing: config.submission!.timing,
        });
        if (outcome.kind === 'refused') {
          process.stderr.write(`ddsync submissions: ${outcome.reason}\n`);
          return 1;
        }
        if (outcome.kind === 'nothing') {
          process.stdout.write(
            values.json
              ? `${JSON.stringify({ batchId, reopened: 0, started: false })}\n`
              : `batch ${batchId}: nothing to send again\n`,
          );
          return 0;
        }
        const sent = {
          batchId,
          reopened: outcome.reopened,
          pending: outcome.pending,
          started: true,
          workflowId: outcome.handle.workflowId,
        };
        if (!values.json)
          process.stdout.write(
            `batch ${batchId}: ${outcome.pending} transaction(s) sent again under their keys (follow with: ddsync submissions status ${batchId} --wait)\n`,
          );
        if (!values.wait) {
          if (values.json) process.stdout.write(`${JSON.stringify(sent)}\n`);
          return 0;
        }
        const after = await followBatch(db, outcome.handle, batchId!, values.json ? null : process.stderr);
        process.stdout.write(
          values.json ? `${JSON.stringify({ ...sent, report: after })}\n` : `${formatBatch(after)}\n`,
        );
        return batchExitCode(after);
      }
      const handle = client.workflow.getHandle(bulkSubmitWorkflowId(batchId!));
      if (sub === 'cancel') {
        try {
          await handle.cancel();
        } catch (error) {
          if (!(error instanceof WorkflowNotFoundError)) throw error;
          process.stderr.write(`ddsync submissions: batch ${batchId} has no running workflow (${recorded.status})\n`);
          return 1;
        }
        await cancellationTakenIn(db, handle, batchId!);
        process.stdout.write(
          `batch ${batchId} cancelled: nothing more is sent; transactions already submitted are followed to the end\n`,
        );
        return 0;
      }
      // --wait: the batch followed to its end first, as `ddsync submit --wait` does (a batch whose
      // workflow ended answers at once); what a follower that gave up on Temporal tells the user to run.
      const report =
        values.wait && (await followedToEnd(db, handle, batchId!, values.json))
          ? ((await batchReport(db, batchId!)) ?? recorded)
          : recorded;
      const live = await handle.query(bulkProgressQuery).catch(() => undefined);
      const resubmittable = await resubmittableKeys(db, batchId!);
      if (values.json)
        process.stdout.write(
          `${JSON.stringify({ ...report, workflow: live ?? null, resubmittable: resubmittable.count })}\n`,
        );
      else {
        process.stdout.write(`${formatBatch(report)}\n`);
        if (live)
          process.stdout.write(
            `  workflow: started ${live.started}, ended ${live.ended}, pending ${live.pending}${live.allStarted ? '' : ' (still starting)'}\n`,
          );
        if (resubmittable.count > 0)
          process.stdout.write(
            `  ${resubmittable.count} failed without the service refusing them (e.g. ${resubmittable.keys.join(', ')}): ddsync submissions retry ${batchId} sends them again\n`,
          );
      }
      return batchExitCode(report);
    } finally {
      await client.connection.close();
    }
  } finally {
    await db.destroy();
  }
}

/**
 * Until the cancellation is taken in: the batch's workflow ended (a batch of an earlier version), or
 * the warehouse says the batch is cancelled (drafts deleted, nothing more sent; its workflow goes on
 * following what was submitted, which can take hours).
 */
async function cancellationTakenIn(db: Warehouse, handle: WorkflowHandle, batchId: string): Promise<void> {
  let ended = false;
  const result = handle.result().then(
    () => {
      ended = true;
    },
    () => {
      ended = true;
    },
  );
  while (!ended) {
    await Promise.race([result, delay(250)]);
    if ((await batchStatus(db, batchId)) === 'cancelled') return;
  }
}

/** Follows the batch's workflow to its end; false when it has none (a batch that never started, or one Temporal forgot). */
async function followedToEnd(db: Warehouse, handle: WorkflowHandle, batchId: string, json?: boolean): Promise<boolean> {
  try {
    await followBatch(db, handle, batchId, json ? null : process.stderr);
    return true;
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return false;
    throw error;
  }
}
