// Records the workflow histories test/integration/replay.test.ts replays: a refresh (supplier
// children in a window, pages read ahead, a child continuing as new), a bulk submission (its window,
// the transactions' poll backoff) and a PDF archive run (its download window), each run by the
// workflow code of the checkout on the embedded stack with an in-process simulator and worker.
// Re-record only on purpose: the histories are what running workflows have, and a change that
// cannot replay them needs patched() (docs/development.md).
// Usage: npx tsx test/replay/record-histories.ts [scenario ...]   (default: every scenario)
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, bundleWorkflowCode, type Worker } from '@temporalio/worker';
import { historyToPlain } from './history-json.ts';
import { startEmbeddedPostgres } from '../../infra/embedded-postgres.ts';
import { startTemporalDevServer } from '../../infra/temporal-dev-server.ts';
import { createDdsyncWorker, WORKFLOWS_PATH } from '../../infra/worker.ts';
import { installTemporalRuntime } from '../../infra/temporal-connection.ts';
import { createLogger } from '../../platform/logger.ts';
import { startSimulator, type SimulatorOptions } from '../../simulator/index.ts';
import { createUpstreamClient } from '../../upstream/index.ts';
import { openWarehouse } from '../../warehouse/database.ts';
import { migrateToLatest } from '../../warehouse/migrate.ts';
import { takeInShipments } from '../../warehouse/submission/intake.ts';
import { enqueueSurveyPdfs } from '../../warehouse/pdfs/queue.ts';
import { refreshWarehouse, refreshWorkflowId } from '../../workflows/refresh-warehouse.ts';
import { supplierPlotsWorkflowId } from '../../workflows/sync-supplier-plots.ts';
import { bulkSubmit, bulkSubmitWorkflowId } from '../../workflows/bulk-submit.ts';
import { submitBatch, submitBatchWorkflowId } from '../../workflows/submit-batch.ts';
import { transactionWorkflowId } from '../../workflows/submit-transaction.ts';
import { archiveSurveyPdfs, pdfArchiveWorkflowId } from '../../workflows/archive-pdfs.ts';

export const HISTORIES_DIR = resolve(import.meta.dirname, 'histories');
/** The scenarios to record (all when none is named): a new one is recorded without re-recording the others. */
const ONLY = new Set(process.argv.slice(2));

const log = createLogger({ level: 'warn', format: 'json' });
const dir = resolve('.ddsync', `replay-record-${process.pid}`);
mkdirSync(dir, { recursive: true });
installTemporalRuntime(log);
const [postgres, temporal] = await Promise.all([
  startEmbeddedPostgres({ dataDir: resolve(dir, 'postgres'), persistent: false }),
  startTemporalDevServer({ startTimeoutMs: 60_000 }),
]);
const connection = await Connection.connect({ address: temporal.address });
const workerConnection = await NativeConnection.connect({ address: temporal.address });
const client = new Client({ connection, namespace: temporal.namespace });
const workflowBundle = await bundleWorkflowCode({
  workflowsPath: WORKFLOWS_PATH,
  logger: { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} } as never,
});

export interface RecordedHistory {
  workflowId: string;
  /** historyToPlain of the run's history. */
  history: { events: unknown[] };
}

/** Every run of a workflow id, first to last. */
async function runsOf(workflowId: string): Promise<RecordedHistory[]> {
  const last = await client.workflow.getHandle(workflowId).describe();
  const out: RecordedHistory[] = [];
  let runId: string | undefined = last.raw.workflowExecutionInfo!.firstRunId!;
  while (runId) {
    const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
    out.push({ workflowId, history: historyToPlain(history) as RecordedHistory['history'] });
    runId = history.events?.at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
  }
  return out;
}

/** `count` shipments of one supplier, with keys new to this recording, taken in as one batch. */
async function takeInBatch(db: ReturnType<typeof openWarehouse>, supplier: string, name: string, count: number) {
  const run = randomUUID().slice(0, 8);
  const path = resolve(dir, `batch-${name}.ndjson`);
  writeFileSync(
    path,
    Array.from({ length: count }, (_, i) =>
      JSON.stringify({
        key: `replay-${name}-${run}-${i}`,
        activityType: 'IMPORT',
        countryOfActivity: 'NL',
        components: [{ hsn: '18010000', quantity: 1250, unit: 'KGM', supplierBusinessId: supplier }],
      }),
    ).join('\n'),
  );
  return takeInShipments(db, path, `${path}.report.ndjson`);
}

/** A simulator, a migrated database and a worker of their own; `run` returns the ids to record. */
async function scenario(
  name: string,
  simulator: SimulatorOptions,
  run: (ctx: {
    taskQueue: string;
    sim: Awaited<ReturnType<typeof startSimulator>>;
    db: ReturnType<typeof openWarehouse>;
  }) => Promise<string[]>,
): Promise<void> {
  if (ONLY.size > 0 && !ONLY.has(name)) return;
  const sim = await startSimulator({ port: 0, ...simulator });
  const database = `replay_${name.replace(/-/g, '_')}`;
  await postgres.createDatabase(database);
  const db = openWarehouse(postgres.urlFor(database), 8);
  await migrateToLatest(db);
  const api = createUpstreamClient({
    baseUrl: sim.url,
    clientId: 'ddsync-demo',
    clientSecret: 'ddsync-demo-secret',
    retryBaseMs: 20,
    retryMaxMs: 200,
  });
  const taskQueue = `replay-${randomUUID()}`;
  const worker: Worker = await createDdsyncWorker({
    connection: workerConnection,
    namespace: temporal.namespace,
    taskQueue,
    deps: { db, api, log: createLogger({ level: 'silent' }), pdfArchiveDir: resolve(dir, 'pdfs') },
    workflowBundle,
    maxConcurrentActivities: 8,
  });
  const running = worker.run();
  try {
    const ids = await run({ taskQueue, sim, db });
    const histories = [];
    for (const id of ids) histories.push(...(await runsOf(id)));
    writeFileSync(resolve(HISTORIES_DIR, `${name}.json`), `${JSON.stringify(histories)}\n`);
    console.log(
      `${name}: ${histories.length} histories, ${histories.reduce((n, h) => n + h.history.events.length, 0)} events`,
    );
  } finally {
    worker.shutdown();
    await running;
    await db.destroy();
    await sim.close();
  }
}

try {
  mkdirSync(HISTORIES_DIR, { recursive: true });
  // Two children at a time over five suppliers; two pages at once within the expected ones; 1,000
  // plots (two full pages, then one page past the expected ones), none, and a child that continues
  // as new after two pages. `refresh` was recorded when every page was an activity of its own: keep it
  // (re-recorded, it would hold runs of pages too); `refresh-page-runs` is the same with runs of pages
  // (patched 'supplier-page-runs').
  const refreshScenario = async ({
    taskQueue,
    sim,
  }: {
    taskQueue: string;
    sim: { control: { suppliers(): { id: string }[] } };
  }) => {
    const runId = randomUUID();
    await client.workflow.execute(refreshWarehouse, {
      taskQueue,
      workflowId: refreshWorkflowId(runId),
      args: [{ runId, supplierConcurrency: 2, pageWindow: 2, pagesPerRun: 2 }],
    });
    return [refreshWorkflowId(runId), ...sim.control.suppliers().map((s) => supplierPlotsWorkflowId(runId, s.id))];
  };
  const refreshLayout = {
    seed: 71,
    layout: {
      ownPlots: 3,
      suppliers: [{ plots: 1300 }, { plots: 1000 }, { plots: 0 }, { plots: 600 }, { plots: 501 }],
    },
  };
  await scenario('refresh', refreshLayout, refreshScenario);
  await scenario('refresh-page-runs', refreshLayout, refreshScenario);

  // Five shipments, two at a time, on a simulator whose EU validation takes seconds.
  await scenario(
    'bulk-submit',
    { seed: 72, suppliers: 2, plots: 50, timeScale: 0.001, transactionErrorRatio: 0 },
    async ({ taskQueue, sim, db }) => {
      const supplier = sim.control.suppliers()[0]!.id;
      const run = randomUUID().slice(0, 8);
      const keys = Array.from({ length: 5 }, (_, i) => `replay-${run}-${i}`);
      const path = resolve(dir, 'shipments.ndjson');
      writeFileSync(
        path,
        keys
          .map((key) =>
            JSON.stringify({
              key,
              activityType: 'IMPORT',
              countryOfActivity: 'NL',
              components: [
                {
                  hsn: '18010000',
                  quantity: 1250,
                  unit: 'KGM',
                  description: 'cocoa beans',
                  supplierBusinessId: supplier,
                },
              ],
            }),
          )
          .join('\n'),
      );
      const intake = await takeInShipments(db, path, `${path}.report.ndjson`);
      await client.workflow.execute(bulkSubmit, {
        taskQueue,
        workflowId: bulkSubmitWorkflowId(intake.batchId),
        args: [
          {
            batchId: intake.batchId,
            concurrency: 2,
            timing: { firstPollMs: 100, maxPollMs: 1_000, euWaitMs: 1_800, deadlineMs: 120_000, createSettleMs: 300 },
          },
        ],
      });
      return [bulkSubmitWorkflowId(intake.batchId), ...keys.map(transactionWorkflowId)];
    },
  );

  // Twelve shipments in chunks of three lines, two chunks at once, the due ones read together; a
  // history limit low enough that the batch continues as new.
  await scenario(
    'submit-batch',
    { seed: 74, suppliers: 2, plots: 50, timeScale: 0.001, transactionErrorRatio: 0 },
    async ({ taskQueue, sim, db }) => {
      const intake = await takeInBatch(db, sim.control.suppliers()[0]!.id, 'batch', 12);
      await client.workflow.execute(submitBatch, {
        taskQueue,
        workflowId: submitBatchWorkflowId(intake.batchId),
        args: [
          {
            batchId: intake.batchId,
            concurrency: 4,
            chunkLines: 3,
            chunksInFlight: 2,
            historyLimit: 30,
            timing: { firstPollMs: 100, maxPollMs: 1_000, euWaitMs: 1_800, deadlineMs: 120_000, createSettleMs: 300 },
          },
        ],
      });
      return [submitBatchWorkflowId(intake.batchId)];
    },
  );

  // The batch workflow with its default settings (concurrency 20: up to 10 chunks in flight of 2
  // requests, chunks spread from the batch's size, the default history limit), as `ddsync submit`
  // starts it: 100 shipments, 10 chunks of 10 lines at once, the due ones read together and the batch
  // counted per state at most every 5 s. Only the waits are short, so it ends in seconds.
  await scenario(
    'submit-batch-default',
    { seed: 76, suppliers: 2, plots: 50, timeScale: 0.001, transactionErrorRatio: 0 },
    async ({ taskQueue, sim, db }) => {
      const intake = await takeInBatch(db, sim.control.suppliers()[0]!.id, 'default', 100);
      await client.workflow.execute(submitBatch, {
        taskQueue,
        workflowId: submitBatchWorkflowId(intake.batchId),
        args: [
          {
            batchId: intake.batchId,
            timing: { firstPollMs: 100, maxPollMs: 1_000, euWaitMs: 1_800, deadlineMs: 120_000, createSettleMs: 300 },
          },
        ],
      });
      return [submitBatchWorkflowId(intake.batchId)];
    },
  );

  // Every seeded survey response (completed ones archived, the others waiting), three claimed at a
  // time, two downloads at once.
  await scenario('archive-pdfs', { seed: 73, suppliers: 2, plots: 20 }, async ({ taskQueue, sim, db }) => {
    await enqueueSurveyPdfs(
      db,
      sim.control.surveyResponses().map((r) => r.id),
    );
    const workflowId = pdfArchiveWorkflowId(randomUUID());
    await client.workflow.execute(archiveSurveyPdfs, {
      taskQueue,
      workflowId,
      args: [{ batchSize: 3, concurrency: 2, backoffBaseMs: 300, backoffMaxMs: 1_000 }],
    });
    return [workflowId];
  });
} finally {
  await connection.close();
  await workerConnection.close();
  await Promise.allSettled([temporal.stop(), postgres.stop()]);
  rmSync(dir, { recursive: true, force: true });
}
