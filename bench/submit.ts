// Durable bulk submission against a plain script making the same calls with the same concurrency and
// no Temporal: create (customId = key), submit, then read on the same schedule until the transaction
// is AVAILABLE. Both against the simulator with its clock sped up, in one run. Prints both
// throughputs, the ratio and the duplicates (transactions sharing a customId: must be 0); never
// passes or fails on time.
// Usage: npm run bench:submit -- --transactions N [--concurrency C] [--json]
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { Client } from '@temporalio/client';
import { sql } from 'kysely';
import { openWarehouse } from '../warehouse/database.ts';
import { migrateToLatest } from '../warehouse/migrate.ts';
import { takeInShipments } from '../warehouse/submission/intake.ts';
import { createUpstreamClient, type UpstreamClient } from '../upstream/index.ts';
import { CliCommand, wholeNumber } from '../cli/usage.ts';
import { packagePath } from '../platform/package-root.ts';
import { WORKER_NODE_FLAGS } from '../infra/production.ts';
import { submitBatch, submitBatchWorkflowId } from '../workflows/submit-batch.ts';
import type { TransactionTiming } from '../workflows/submit-transaction.ts';
import { postmasterPid, procStatusMb, treeCpuSeconds } from './support/children.ts';
import { costliestStatements, resetStatements, type StatementCost } from './support/pg-stats.ts';
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
  /** ddsync's throughput over the plain script's (plainSeconds / ddsyncSeconds): target ≥ 0.85 (issue 24). */
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
  /** Activities of the batch: how many, mean dispatch (scheduled → started) and run time. */
  batchActivities: ActivityTimes;
  /** CPU seconds each process used in each phase ('bench' is this process: the plain script's client). */
  cpuSeconds: Record<'plain' | 'ddsync', Record<string, number>>;
  /** Seconds from the start until the last transaction was submitted: the rest is following the last ones. */
  sentSeconds: { plain: number; ddsync: number };
  /**
   * CPU seconds of every process of the plain script's phase over those of ddsync's: what the ratio
   * would be if the machine were busy with nothing else (a shared machine's load moves the wall-clock ratio).
   */
  cpuRatio: number;
  /** Reads of a transaction's status per transaction, by each (the same schedule: close figures). */
  readsPerTransaction: { plain: number; ddsync: number };
  /** With --pg-stats: ddsync's costliest statements (pg_stat_statements). */
  statements?: StatementCost[];
  phaseSeconds: Record<string, number>;
}

interface Options {
  transactions: number;
  concurrency: number;
  json: boolean;
  pgStats: boolean;
}

function parseOptions(argv: string[]): Options {
  const o = new CliCommand('bench:submit')
    .requiredOption('--transactions <N>', 'transactions to submit', wholeNumber('--transactions', 1, 1_000_000))
    .option('--concurrency <N>', 'transactions created or submitted at once', wholeNumber('--concurrency', 1, 500), 20)
    .option('--json', 'also print the result as one JSON line')
    .option('--pg-stats', "also print ddsync's costliest statements (pg_stat_statements)")
    .parse(argv, { from: 'user' })
    .opts<{ transactions: number; concurrency: number; json?: boolean; pgStats?: boolean }>();
  return {
    transactions: o.transactions,
    concurrency: o.concurrency,
    json: o.json ?? false,
    pgStats: o.pgStats ?? false,
  };
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
): Promise<{ seconds: number; reads: number; sentSeconds: number }> {
  const started = performance.now();
  let sentSeconds = 0;
  const following: Array<Promise<void>> = [];
  let reads = 0;
  let next = 0;
  const follow = async (id: string) => {
    let delay = TIMING.firstPollMs;
    let submittedAt: number | undefined;
    for (;;) {
      let wait = delay;
      if (submittedAt !== undefined) wait = Math.max(wait, submittedAt + TIMING.euWaitMs - performance.now());
      await new Promise((resolve) => setTimeout(resolve, wait));
      const t = await api.getTransaction(id);
      reads++;
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
      sentSeconds = (performance.now() - started) / 1000;
      following.push(follow(t.id));
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  await Promise.all(following);
  return { seconds: (performance.now() - started) / 1000, reads, sentSeconds };
}

/** The Temporal dev server's pid: the `temporal` process serving the stack's port. */
function temporalServerPid(address: string): number | undefined {
  const port = address.split(':').at(-1);
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const args = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (args.includes('start-dev') && args[args.indexOf('--port') + 1] === port) return Number(entry);
    } catch {
      // Gone meanwhile.
    }
  }
  return undefined;
}

/** CPU seconds each process (with its children) uses from now until the returned function is called. */
function cpuMeter(pids: Record<string, number | undefined>): () => Record<string, number> {
  const read = (): Record<string, number> => {
    const own = process.cpuUsage();
    const figures: Record<string, number> = { bench: (own.user + own.system) / 1e6 };
    for (const [name, pid] of Object.entries(pids)) figures[name] = pid === undefined ? 0 : treeCpuSeconds(pid);
    return figures;
  };
  const before = read();
  return () =>
    Object.fromEntries(
      Object.entries(read()).map(([name, v]) => [name, Math.round((v - (before[name] ?? 0)) * 100) / 100]),
    );
}

/** Per activity type: how many ran, mean ms from scheduled to started (dispatch) and from started to completed. */
type ActivityTimes = Record<string, { n: number; dispatchMs: number; runMs: number }>;

/** The history length of each run of a workflow, first to last, and its activities' times. */
async function historyOfRuns(
  client: Client,
  workflowId: string,
): Promise<{ lengths: number[]; activities: ActivityTimes }> {
  const described = await client.workflow.getHandle(workflowId).describe();
  const lengths: number[] = [];
  const ms = (t: { seconds?: unknown; nanos?: number | null } | null | undefined) =>
    Number(t?.seconds ?? 0) * 1000 + (t?.nanos ?? 0) / 1e6;
  const sums: Record<string, { n: number; dispatch: number; run: number }> = {};
  let runId: string | undefined = described.raw.workflowExecutionInfo?.firstRunId ?? undefined;
  while (runId) {
    const events = (await client.workflow.getHandle(workflowId, runId).fetchHistory()).events ?? [];
    lengths.push(events.length);
    const scheduled = new Map<string, { type: string; at: number }>();
    const started = new Map<string, number>();
    for (const e of events) {
      const id = String(e.eventId);
      const at = ms(e.eventTime);
      if (e.activityTaskScheduledEventAttributes)
        scheduled.set(id, { type: e.activityTaskScheduledEventAttributes.activityType?.name ?? '?', at });
      const s = e.activityTaskStartedEventAttributes;
      if (s) started.set(String(s.scheduledEventId), at);
      const c = e.activityTaskCompletedEventAttributes;
      if (c) {
        const sch = scheduled.get(String(c.scheduledEventId));
        const st = started.get(String(c.scheduledEventId));
        if (!sch || st === undefined) continue;
        const sum = (sums[sch.type] ??= { n: 0, dispatch: 0, run: 0 });
        sum.n++;
        sum.dispatch += st - sch.at;
        sum.run += at - st;
      }
    }
    runId = events.at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
  }
  const activities: ActivityTimes = {};
  for (const [type, s] of Object.entries(sums))
    activities[type] = { n: s.n, dispatchMs: Math.round(s.dispatch / s.n), runMs: Math.round(s.run / s.n) };
  return { lengths, activities };
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
      options.pgStats ? ['shared_preload_libraries=pg_stat_statements'] : [],
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

  const pids: Record<string, number | undefined> = {
    simulator: stack.simulator.pid,
    temporal: temporalServerPid(stack.temporal.address),
    postgres: postmasterPid(stack.postgres.dataDir),
  };
  const plainMeter = cpuMeter(pids);
  const plain = await phase(progress, seconds, 'plain script', () =>
    plainScript(api, 'plain', options.transactions, options.concurrency, supplierId),
  );
  const plainCpu = plainMeter();
  const plainSeconds = plain.seconds;

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
  let ddsyncStartedAt = 0;
  if (options.pgStats) {
    await resetStatements(db);
  }
  const ddsyncMeter = cpuMeter({ ...pids, worker: worker.pid });
  const ddsyncSeconds = await phase(progress, seconds, 'ddsync', async () => {
    const started = performance.now();
    ddsyncStartedAt = Date.now();
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
  const ddsyncCpu = ddsyncMeter();
  const statements = options.pgStats ? await costliestStatements(db, 12) : undefined;
  const { rows: polled } = await sql<{ reads: number; last_submitted_ms: number }>`
    select coalesce(sum(polls), 0)::int as reads, (extract(epoch from max(submitted_at)) * 1000)::float8 as last_submitted_ms
    from transactions where key like 'ddsync-%'`.execute(db);
  const dup = (await duplicates(stack.upstreamUrl, 'plain')) + (await duplicates(stack.upstreamUrl, 'ddsync'));
  const { lengths: runs, activities } = await historyOfRuns(stack.temporalClient, batchWorkflowId);
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
    batchActivities: activities,
    cpuSeconds: { plain: plainCpu, ddsync: ddsyncCpu },
    cpuRatio: total(plainCpu) / total(ddsyncCpu),
    sentSeconds: { plain: plain.sentSeconds, ddsync: ((polled[0]?.last_submitted_ms ?? 0) - ddsyncStartedAt) / 1000 },
    readsPerTransaction: {
      plain: plain.reads / options.transactions,
      ddsync: (polled[0]?.reads ?? 0) / options.transactions,
    },
    ...(statements ? { statements } : {}),
    phaseSeconds: seconds,
  };
}

const total = (cpu: Record<string, number>) => Object.values(cpu).reduce((a, b) => a + b, 0);

const cpuLine = (cpu: Record<string, number>) =>
  Object.entries(cpu)
    .map(([name, v]) => `${name} ${v.toFixed(1)}`)
    .join(', ');

function report(result: SubmitBenchResult, options: Options): string {
  const dup = result.duplicates;
  return [
    `submission benchmark: ${options.transactions} transactions, ${options.concurrency} creating/submitting at once, simulator clock x${1 / TIME_SCALE}`,
    '',
    `plain script   ${result.plainSeconds.toFixed(2).padStart(8)} s  ${result.plainPerSec.toFixed(1).padStart(8)} transactions/s   (create, submit, read until AVAILABLE; no durability)`,
    `ddsync         ${result.ddsyncSeconds.toFixed(2).padStart(8)} s  ${result.ddsyncPerSec.toFixed(1).padStart(8)} transactions/s   (read file, submitBatch, every transaction AVAILABLE)`,
    '',
    `ddsync / plain      ${result.ratio.toFixed(2).padStart(6)}   target >= 0.85  ${result.ratio >= 0.85 ? 'ok' : 'MISSED'}`,
    `duplicates          ${String(dup).padStart(6)}   must be 0       ${dup === 0 ? 'ok' : 'FAILED'}`,
    `worker peak RSS     ${(result.workerPeakRssMb ?? 0).toFixed(0).padStart(6)} MB`,
    `batch workflow      ${String(result.batchRuns).padStart(6)} run(s), ${result.batchHistoryEvents} history events, at most ${result.batchLargestRunEvents} in a run (limit 51,200)`,
    ...Object.entries(result.batchActivities).map(
      ([type, a]) =>
        `  ${type.padEnd(26)} ${String(a.n).padStart(5)} runs, dispatch ${a.dispatchMs} ms, run ${a.runMs} ms (means)`,
    ),
    `all submitted at    plain ${result.sentSeconds.plain.toFixed(2)} s, ddsync ${result.sentSeconds.ddsync.toFixed(2)} s`,
    `reads per tx        plain ${result.readsPerTransaction.plain.toFixed(2)}, ddsync ${result.readsPerTransaction.ddsync.toFixed(2)}`,
    `CPU s (plain)       ${cpuLine(result.cpuSeconds.plain)}`,
    `CPU s (ddsync)      ${cpuLine(result.cpuSeconds.ddsync)}`,
    `CPU plain / ddsync  ${result.cpuRatio.toFixed(2).padStart(6)}   (the ratio on a machine doing nothing else, if both were CPU-bound)`,
    ...(result.statements ?? []).map(
      (s) => `  ${String(s.totalMs).padStart(7)} ms ${String(s.calls).padStart(7)} calls  ${s.query}`,
    ),
  ].join('\n');
}

await runBenchmark({ name: 'bench:submit', usage: USAGE, parse: parseOptions, run, report });
