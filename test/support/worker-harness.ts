import { randomUUID } from 'node:crypto';
import type { Worker } from '@temporalio/worker';
import { startSimulator, type Simulator, type SimulatorOptions } from '../../simulator/index.ts';
import { createUpstreamClient, type UpstreamClient } from '../../upstream/index.ts';
import { openWarehouse, type Warehouse } from '../../warehouse/database.ts';
import { migrateToLatest } from '../../warehouse/migrate.ts';
import type { RunSummary } from '../../warehouse/refresh/sweep.ts';
import { createDdsyncWorker } from '../../infra/worker.ts';
import type { ActivityDeps } from '../../activities/index.ts';
import { createLogger } from '../../platform/logger.ts';
import { refreshWarehouse, refreshWorkflowId, type RefreshInput } from '../../workflows/refresh-warehouse.ts';
import { createTestDatabase } from './databases.ts';
import { ddsyncEnv, runDdsync, type RunningCommand } from './processes.ts';
import { takeInShipments, type IntakeSummary } from '../../warehouse/submission/intake.ts';
import type { BulkProgress } from '../../workflows/bulk-submit.ts';
import { submitBatch, submitBatchWorkflowId, type SubmitBatchInput } from '../../workflows/submit-batch.ts';
import type { TransactionTiming } from '../../workflows/submit-transaction.ts';

/** Transaction waits for a simulator at time scale 0.001 (30 minutes there are 1.8 s). */
export const FAST_TIMING: TransactionTiming = {
  firstPollMs: 100,
  maxPollMs: 1_000,
  euWaitMs: 1_800,
  deadlineMs: 120_000,
  createSettleMs: 300,
};
import { connectTemporal, workflowBundle, type TemporalForTest } from './temporal.ts';

/**
 * Everything a workflow test needs, real: the simulator over HTTP, a migrated database of its own,
 * the run's Temporal dev server with a task queue of its own, and a ddsync worker.
 */
export interface WorkerHarness {
  sim: Simulator;
  db: Warehouse;
  databaseUrl: string;
  api: UpstreamClient;
  temporal: TemporalForTest;
  /** Runs a refresh to completion on the harness's worker. */
  refresh(input?: RefreshInput): Promise<RunSummary>;
  /** Takes in a shipments file and runs its batch workflow (submitBatch) to the end (timing for a fast simulator). */
  submit(
    path: string,
    input?: Partial<SubmitBatchInput>,
  ): Promise<{ intake: IntakeSummary; progress: BulkProgress | null }>;
  /** Starts (or restarts) the in-process worker; refresh() starts one when none runs. */
  startWorker(): Promise<void>;
  stopWorker(): Promise<void>;
  /** `ddsync worker` as a child process on the harness's everything (killed by close()). */
  spawnWorker(): RunningCommand;
  close(): Promise<void>;
}

export interface HarnessOptions {
  /** The worker's survey-response PDF archive (DDSYNC_PDF_ARCHIVE_DIR). */
  pdfArchiveDir?: string;
  /** Attempts of each upstream call by the client (its default 6). */
  upstreamMaxAttempts?: number;
  /** Where the refresh splits a page and refuses a plot (default: the production limits). */
  pageLimits?: ActivityDeps['pageLimits'];
}

export async function startWorkerHarness(
  simulator: SimulatorOptions,
  prefix = 'refresh',
  options: HarnessOptions = {},
): Promise<WorkerHarness> {
  const sim = await startSimulator({ port: 0, ...simulator });
  const databaseUrl = await createTestDatabase(prefix);
  const db = openWarehouse(databaseUrl, 8);
  await migrateToLatest(db);
  const temporal = await connectTemporal();
  const api = createUpstreamClient({
    baseUrl: sim.url,
    clientId: 'ddsync-demo',
    clientSecret: 'ddsync-demo-secret',
    retryBaseMs: 20,
    retryMaxMs: 200,
    ...(options.upstreamMaxAttempts ? { maxAttempts: options.upstreamMaxAttempts } : {}),
  });
  const log = createLogger({ level: 'silent' });
  let worker: Worker | undefined;
  let running: Promise<void> | undefined;

  const startWorker = async () => {
    if (worker) return;
    worker = await createDdsyncWorker({
      connection: temporal.workerConnection,
      namespace: temporal.namespace,
      taskQueue: temporal.taskQueue,
      deps: { db, api, log, pdfArchiveDir: options.pdfArchiveDir, pageLimits: options.pageLimits },
      workflowBundle: await workflowBundle(),
      maxConcurrentActivities: 8,
    });
    running = worker.run();
  };
  const stopWorker = async () => {
    if (!worker) return;
    worker.shutdown();
    await running;
    worker = undefined;
  };
  const children: RunningCommand[] = [];
  const spawnWorker = () => {
    const child = runDdsync(
      ['worker'],
      ddsyncEnv({ upstreamUrl: sim.url, databaseUrl, taskQueue: temporal.taskQueue }, { DDSYNC_LOG_LEVEL: 'warn' }),
    );
    children.push(child);
    return child;
  };
  return {
    sim,
    db,
    databaseUrl,
    api,
    temporal,
    startWorker,
    stopWorker,
    spawnWorker,
    async refresh(input = {}) {
      await startWorker();
      const runId = input.runId ?? randomUUID();
      return temporal.client.workflow.execute(refreshWarehouse, {
        taskQueue: temporal.taskQueue,
        workflowId: refreshWorkflowId(runId),
        args: [{ ...input, runId }],
      });
    },
    async submit(path, input = {}) {
      await startWorker();
      const intake = await takeInShipments(db, path, `${path}.report.ndjson`);
      if (intake.accepted === 0) return { intake, progress: null };
      const progress = await temporal.client.workflow.execute(submitBatch, {
        taskQueue: temporal.taskQueue,
        workflowId: submitBatchWorkflowId(intake.batchId),
        args: [{ batchId: intake.batchId, concurrency: 10, timing: FAST_TIMING, ...input }],
      });
      return { intake, progress };
    },
    async close() {
      for (const child of children.splice(0)) {
        child.child.kill('SIGKILL');
        await child.exited;
      }
      await stopWorker();
      await temporal.close();
      await db.destroy();
      await sim.close();
    },
  };
}
