// Durable bulk submission against a plain script making the same calls with the same concurrency and
// no Temporal: create (customId = key), submit, then read on the same schedule until the transaction
// is AVAILABLE. Both against the simulator with its clock sped up, in one run. Prints both
// throughputs, the ratio and the duplicates (transactions sharing a customId: must be 0); never
// passes or fails on time.
// Usage: npm run bench:submit -- --transactions N [--concurrency C] [--json]
import { rmSync, writeFileSync } from 'node:fs';
import type { Client } from '@temporalio/client';
import { openWarehouse } from '../warehouse/database.ts';
import { migrateToLatest } from '../warehouse/migrate.ts';
import { takeInShipments } from '../warehouse/submission/intake.ts';
import { createUpstreamClient, type UpstreamClient } from '../upstream/index.ts';
import { CliCommand, wholeNumber } from '../cli/usage.ts';
import { packagePath } from '../platform/package-root.ts';
import { WORKER_NODE_FLAGS } from '../infra/production.ts';
import { submitBatch, submitBatchWorkflowId } from '../workflows/submit-batch.ts';
import type { TransactionTiming } from '../workflows/submit-transaction.ts';
import { procStatusMb } from './support/children.ts';
import { startWorker } from './support/refresh-runs.ts';
import {
  buildProduction,
  phase,
  progressTo,
  runBenchmark,
  startStack,
  type Teardown,
  workerEnv,
} from './support/stack.ts';

const progress = progressTo('bench:submit');
const USAGE = 'usage: npm run bench:submit -- --transactions N [--concurrency C] [--json]';
/** The simulator's clock: 20–90 minutes of EU validation take 0.12–0.54 s. */
const TIME_SCALE = 0.0001;
/** The same waits for both (scaled like the simulator: 30 minutes are 180 ms). */
const TIMING: TransactionTiming = {
  firstPollMs: 50,
  maxPollMs: 400,
  euWaitMs: 180,
  deadlineMs: 600_000,
  createSettleMs: 100,
};
const FINAL = new Set(['AVAILABLE', 'ERROR', 'WITHDRAWN']);
/** Requests in flight at most, for the plain script's client and the worker's alike. */
const HTTP_CONCURRENCY = 64;

interface SubmitBenchResult {
  transactions: number;
  concurrency: number;
  ddsyncSeconds: number;
  plainSeconds: number;
  ddsyncPerSec: number;
  plainPerSec: number;
  /** ddsync's throughput over the plain script's (plainSeconds / ddsyncSeconds): target ≥ 0.5. */
  ddsyncToPlainRatio: number;
  /** The same figure under its earlier name. */
  ratio: number;
  /** customIds with more than one transaction at the service: must be 0. */
  duplicates: number;
  workerPeakRssMb: number | null;
  /** Runs of the batch's workflow (it continues as new as its history grows). */
  batchRuns: number;
  /** History events over all its runs, and of its largest run (Temporal's limit: 51,200). */
  batchHistoryEvents: number;
  batchLargestRunEvents: number;
  phaseSeconds: Record<string, number>;
}

interface Options {
  transactions: number;
  concurrency: number;
  json: boolean;
}

function parseOptions(argv: string[]): Options {
  const o = new CliCommand('bench:submit')
    .requiredOption('--transactions <N>', 'transactions to submit', wholeNumber('--transactions', 1, 1_000_000))
    .option('--concurrency <N>', 'transactions created or submitted at once', wholeNumber('--concurrency', 1, 500), 20)
    .option('--json', 'also print the result as one JSON line')
    .parse(argv, { from: 'user' })
    .opts<{ transactions: number; concurrency: number; json?: boolean }>();
  return { transactions: o.transactions, concurrency: o.concurrency, json: o.json ?? false };
}

function rows(prefix: string, n: number, supplierId: string): string {
  const lines: string[] = [];
  for (let i = 0; i < n; i++) {
    lines.push(
      JSON.stringify({
        key: `${prefix}-${String(i).padStart(7, '0')}`,
        activityType: 'IMPORT',
        countryOfActivity: 'NL',
        components: [{ hsn: '18010000', quantity: 1000 + i, unit: 'KGM', supplierBusinessId: supplierId }],
      }),
    );
  }
  return `${lines.join('\n')}\n`;
}

/** The plain script: a pool of `concurrency` creating and submitting; following holds no slot, as in ddsync. */
async function plainScript(
  api: UpstreamClient,
  prefix: string,
  n: number,
  concurrency: number,
  supplierId: string,
): Promise<number> {
  const started = performance.now();
  const following: Array<Promise<void>> = [];
  let next = 0;
  const follow = async (id: string) => {
    let delay = TIMING.firstPollMs;
    let submittedAt: number | undefined;
    for (;;) {
      let wait = delay;
      if (submittedAt !== undefined) wait = Math.max(wait, submittedAt + TIMING.euWaitMs - performance.now());
      await new Promise((resolve) => setTimeout(resolve, wait));
      const t = await api.getTransaction(id);
      if (t.status === 'SUBMITTED' && submittedAt === undefined) submittedAt = performance.now();
      if (FINAL.has(t.status)) return;
      delay = Math.min(delay * 2, TIMING.maxPollMs);
    }
  };
  const lane = async () => {
    while (next < n) {
      const i = next++;
      const t = await api.createTransaction({
        customId: `${prefix}-${String(i).padStart(7, '0')}`,
        activityType: 'IMPORT',
        countryOfActivity: 'NL',
        components: [{ hsn: '18010000', quantity: 1000 + i, unit: 'KGM', supplierBusinessId: supplierId }],
      });
      await api.submitTransaction(t.id);
      following.push(follow(t.id));
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  await Promise.all(following);
  return (performance.now() - started) / 1000;
}

/** The history length of each run of a workflow, first to last. */
async function historyOfRuns(client: Client, workflowId: string): Promise<number[]> {
  const described = await client.workflow.getHandle(workflowId).describe();
  const lengths: number[] = [];
  let runId: string | undefined = described.raw.workflowExecutionInfo?.firstRunId ?? undefined;
  while (runId) {
    const events = (await client.workflow.getHandle(workflowId, runId).fetchHistory()).events ?? [];
    lengths.push(events.length);
    runId = events.at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
  }
  return lengths;
}

async function duplicates(upstreamUrl: string, prefix: string): Promise<number> {
  const counts = (await (await fetch(`${upstreamUrl}/_sim/transactions/counts`)).json()) as Record<string, number>;
  return Object.entries(counts).filter(([key, n]) => key.startsWith(prefix) && n > 1).length;
}

async function run(options: Options, seconds: Record<string, number>, teardown: Teardown): Promise<SubmitBenchResult> {
  await phase(progress, seconds, 'build', async () => buildProduction());
  const stack = await phase(progress, seconds, 'setup', () =>
    startStack(
      ['--suppliers', '3', '--plots', '100', '--time-scale', String(TIME_SCALE), '--error-ratio', '0'],
      teardown,
    ),
  );
  const database = `submit_${Date.now()}`;
  await stack.postgres.createDatabase(database);
  const db = openWarehouse(stack.postgres.urlFor(database), 4, 'ddsync-bench');
  teardown.add('warehouse pool', () => db.destroy());
  await migrateToLatest(db);
  const api = createUpstreamClient({
    baseUrl: stack.upstreamUrl,
    clientId: 'ddsync-demo',
    clientSecret: 'ddsync-demo-secret',
    concurrency: HTTP_CONCURRENCY,
  });
  const supplierId = (await api.listSuppliers())[0]!.sourceBusiness!.id;

  const plainSeconds = await phase(progress, seconds, 'plain script', () =>
    plainScript(api, 'plain', options.transactions, options.concurrency, supplierId),
  );

  const taskQueue = `bench-submit-${process.pid}`;
  const worker = await phase(progress, seconds, 'worker start', () =>
    startWorker(
      // The worker's HTTP client as the plain script's: up to HTTP_CONCURRENCY requests in flight.
      {
        ...workerEnv(stack, stack.postgres.urlFor(database), taskQueue),
        DDSYNC_HTTP_CONCURRENCY: String(HTTP_CONCURRENCY),
      },
      stack.temporalClient,
      taskQueue,
      WORKER_NODE_FLAGS,
    ),
  );
  teardown.add('worker', () => worker.stop(15_000));
  const file = packagePath('.ddsync', 'bench', `shipments-${process.pid}.ndjson`);
  writeFileSync(file, rows('ddsync', options.transactions, supplierId));
  // The shipments file and the intake's report are the benchmark's own: gone with its teardown.
  teardown.add('shipments file', async () => {
    rmSync(file, { force: true });
    rmSync(`${file}.report.ndjson`, { force: true });
  });
  let batchWorkflowId = '';
  const ddsyncSeconds = await phase(progress, seconds, 'ddsync', async () => {
    const started = performance.now();
    const intake = await takeInShipments(db, file, `${file}.report.ndjson`);
    seconds['ddsync intake'] = (performance.now() - started) / 1000;
    batchWorkflowId = submitBatchWorkflowId(intake.batchId);
    const result = await stack.temporalClient.workflow.execute(submitBatch, {
      taskQueue,
      workflowId: submitBatchWorkflowId(intake.batchId),
      args: [{ batchId: intake.batchId, concurrency: options.concurrency, timing: TIMING }],
    });
    if (result.available !== options.transactions)
      throw new Error(
        `ddsync: ${result.available} of ${options.transactions} transactions AVAILABLE: ${JSON.stringify(result)}`,
      );
    return (performance.now() - started) / 1000;
  });
  const dup = (await duplicates(stack.upstreamUrl, 'plain')) + (await duplicates(stack.upstreamUrl, 'ddsync'));
  const runs = await historyOfRuns(stack.temporalClient, batchWorkflowId);
  return {
    transactions: options.transactions,
    concurrency: options.concurrency,
    ddsyncSeconds,
    plainSeconds,
    ddsyncPerSec: options.transactions / ddsyncSeconds,
    plainPerSec: options.transactions / plainSeconds,
    ddsyncToPlainRatio: plainSeconds / ddsyncSeconds,
    ratio: plainSeconds / ddsyncSeconds,
    duplicates: dup,
    workerPeakRssMb: procStatusMb(worker.pid, 'VmHWM') ?? null,
    batchRuns: runs.length,
    batchHistoryEvents: runs.reduce((a, b) => a + b, 0),
    batchLargestRunEvents: Math.max(...runs),
    phaseSeconds: seconds,
  };
}

function report(result: SubmitBenchResult, options: Options): string {
  const dup = result.duplicates;
  return [
    `submission benchmark: ${options.transactions} transactions, ${options.concurrency} creating/submitting at once, simulator clock x${1 / TIME_SCALE}`,
    '',
    `plain script   ${result.plainSeconds.toFixed(2).padStart(8)} s  ${result.plainPerSec.toFixed(1).padStart(8)} transactions/s   (create, submit, read until AVAILABLE; no durability)`,
    `ddsync         ${result.ddsyncSeconds.toFixed(2).padStart(8)} s  ${result.ddsyncPerSec.toFixed(1).padStart(8)} transactions/s   (read file, submitBatch, every transaction AVAILABLE)`,
    '',
    `ddsync / plain      ${result.ratio.toFixed(2).padStart(6)}   target >= 0.5   ${result.ratio >= 0.5 ? 'ok' : 'MISSED'}`,
    `duplicates          ${String(dup).padStart(6)}   must be 0       ${dup === 0 ? 'ok' : 'FAILED'}`,
    `worker peak RSS     ${(result.workerPeakRssMb ?? 0).toFixed(0).padStart(6)} MB`,
    `batch workflow      ${String(result.batchRuns).padStart(6)} run(s), ${result.batchHistoryEvents} history events, at most ${result.batchLargestRunEvents} in a run (limit 51,200)`,
  ].join('\n');
}

await runBenchmark({ name: 'bench:submit', usage: USAGE, parse: parseOptions, run, report });
