import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadConfig } from '../../platform/config.ts';
import { connectClient } from '../../infra/temporal-connection.ts';
import { ConnectionFailedError } from '../../infra/connection-failure.ts';
import { connectWarehouse } from '../../infra/warehouse-connection.ts';
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { migrateToLatest } from '../../warehouse/migrate.ts';
import { takeInShipments, type IntakeSummary } from '../../warehouse/submission/intake.ts';
import { ShipmentFileError } from '../../warehouse/submission/shipment-file.ts';
import { printable } from '../../domain/submission/printable.ts';
import { submitBatch, submitBatchWorkflowId } from '../../workflows/submit-batch.ts';
import { followBatch } from '../submission-runner.ts';
import { batchExitCode, formatBatch, formatIntake, nothingToSend, readinessLine } from '../submission-summary.ts';
import { batchReport } from '../../warehouse/submission/batch-report.ts';
import { openReadinessGate } from '../../warehouse/submission/readiness-gate.ts';
import { recordBatchWorkflow, unfinishedEarlierBatches } from '../../warehouse/submission/batch-runs.ts';
import type { ReadinessPolicy } from '../../domain/submission/readiness-rules.ts';
import { durationMs } from '../../platform/config.ts';

/**
 * Where the rows not sent are reported: `--report`, else beside the file; for a named pipe or another
 * file that is no regular file (`ddsync submit <(…)`, /dev/stdin), where nothing can be written beside
 * it, in the current directory under the batch's id.
 */
function reportPathFor(file: string, report: string | undefined): string | ((batchId: string) => string) {
  if (report !== undefined) return resolve(report);
  let regular = true;
  try {
    regular = statSync(file).isFile();
  } catch {
    // Missing or unreadable: the intake says so, naming the file.
  }
  return regular ? `${file}.report.ndjson` : (batchId) => resolve(`ddsync-submit-${batchId}.report.ndjson`);
}

export async function run(
  path: string,
  values: { wait?: boolean; json?: boolean; report?: string; readiness?: ReadinessPolicy },
): Promise<number> {
  const file = resolve(path);
  const config = loadConfig(['database', 'temporal', 'submission', 'refresh']);
  const policy = values.readiness ?? config.submission!.readiness;
  // Data older than two refresh intervals means refreshes are failing or not scheduled (ddsync status
  // calls that critical too): the gate says so rather than vouch for it.
  const maxDataAgeMs = config.submission!.maxDataAgeMs ?? 2 * durationMs(config.refresh!.interval);
  const db = await connectWarehouse(config.database!, 2, 'ddsync-submit');
  try {
    await migrateToLatest(db);
    let intake: IntakeSummary;
    try {
      const gate = await openReadinessGate(db, { policy, maxDataAgeMs });
      intake = await takeInShipments(db, file, reportPathFor(file, values.report), gate);
    } catch (error) {
      // The file (or the report) is named in the message, printable: a name may hold control characters.
      if (error instanceof ShipmentFileError) {
        process.stderr.write(`ddsync submit: ${printable(error.message)}\nnothing was sent.\n`);
        return 1;
      }
      throw error;
    }
    // What the gate judged by, said once the file was read (a file that cannot be read gets only its error).
    if (intake.readiness?.note && !values.json) process.stderr.write(`ddsync submit: ${intake.readiness.note}\n`);
    if (!values.json) {
      process.stdout.write(`${formatIntake(intake)}\n`);
      const gate = readinessLine(intake);
      if (gate) process.stdout.write(`${gate}\n`);
    }
    const startBatch = async (client: Client, batchId: string) => {
      const workflowId = submitBatchWorkflowId(batchId);
      const handle = await client.workflow.start(submitBatch, {
        taskQueue: config.temporal!.taskQueue,
        workflowId,
        args: [{ batchId, concurrency: config.submission!.concurrency, timing: config.submission!.timing }],
      });
      await recordBatchWorkflow(db, batchId, workflowId);
      return { handle, workflowId };
    };
    // Keys recognised as sent by an earlier batch that never ran to its end (the command was killed
    // before starting it, Temporal was unreachable, its workflow was terminated): that batch is
    // started again, so running the same file again is how one finishes it.
    const unfinished = await unfinishedEarlierBatches(db, intake.batchId);
    const resumed: string[] = [];
    if (unfinished.length > 0) {
      const client = await connectClient(config.temporal!);
      try {
        for (const batchId of unfinished) {
          try {
            await startBatch(client, batchId);
            resumed.push(batchId);
          } catch (error) {
            if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
          }
        }
      } finally {
        await client.connection.close();
      }
      if (!values.json)
        for (const batchId of resumed)
          process.stdout.write(
            `batch ${batchId} had not run to its end: started again (see ddsync submissions status ${batchId})\n`,
          );
    }
    if (intake.accepted === 0) {
      // The intake closed the batch: nothing of it will run.
      if (values.json) process.stdout.write(`${JSON.stringify({ ...intake, started: false, resumed })}\n`);
      else {
        const report = await batchReport(db, intake.batchId);
        process.stdout.write(
          `${report ? nothingToSend(report) : 'nothing to send'} (batch ${intake.batchId} ${report?.status ?? 'done'})\n`,
        );
      }
      return intake.invalid > 0 ? 1 : 0;
    }
    let client: Client;
    try {
      client = await connectClient(config.temporal!);
    } catch (error) {
      if (!(error instanceof ConnectionFailedError)) throw error;
      // The rows are in the warehouse and nothing was sent: the same command finishes the job later.
      process.stderr.write(
        `ddsync submit: ${error.message}\nbatch ${intake.batchId} is kept with its ${intake.accepted} row(s) and nothing was sent: run the same command again once Temporal answers (the rows are recognised and this batch is started then).\n`,
      );
      return 1;
    }
    try {
      const { handle, workflowId } = await startBatch(client, intake.batchId);
      if (!values.json)
        process.stdout.write(
          `batch ${intake.batchId} started (workflow ${workflowId}); follow it with: ddsync submissions status ${intake.batchId} --wait\n`,
        );
      if (!values.wait) {
        if (values.json) process.stdout.write(`${JSON.stringify({ ...intake, started: true, workflowId, resumed })}\n`);
        return intake.invalid > 0 ? 1 : 0;
      }
      const report = await followBatch(db, handle, intake.batchId, values.json ? null : process.stderr);
      process.stdout.write(
        values.json
          ? `${JSON.stringify({ ...intake, started: true, workflowId, resumed, report })}\n`
          : `${formatBatch(report)}\n`,
      );
      return batchExitCode(report);
    } finally {
      await client.connection.close();
    }
  } finally {
    await db.destroy();
  }
}
