// ddsync beside its nearest peer, measured in one run on one machine: dlt 1.31's rest_api source
// (bench/peer/dlt_pipeline.py: suppliers and their plots, merged on id, GeoJSON kept as JSON, tuned
// where dlt allows) and ddsync's production worker (the built CLI, the production node flags) load
// the same simulator into the same Postgres, each into a database of its own: a full load, then a
// second run over the unchanged source. dlt is installed from PyPI into .ddsync/tools on first use.
// Prints both, their ratios and each side's CPU; never passes or fails on time.
// ddsync does more in its run than dlt does in its (own plots, buyers, invitations, history, EUDR
// findings, summaries): the ratio is what a user waits for each, not work for work.
// Usage: npm run bench:peer -- [--plots 100000] [--suppliers 10] [--json]
import { sql } from 'kysely';
import { CliCommand, wholeNumber } from '../cli/usage.ts';
import { WORKER_NODE_FLAGS } from '../infra/production.ts';
import { openWarehouse } from '../warehouse/database.ts';
import { cpuMeter, type CpuSeconds, postmasterPid } from './support/children.ts';
import { DLT_VERSION, type DltRun, ensureDlt, runDlt } from './support/dlt.ts';
import { runRefresh, startWorker, type RefreshRun } from './support/refresh-runs.ts';
import {
  buildProduction,
  phase,
  progressTo,
  runBenchmark,
  startStack,
  type Stack,
  type Teardown,
  workerEnv,
} from './support/stack.ts';
import { packagePath } from '../platform/package-root.ts';

const progress = progressTo('bench:peer');
const USAGE = 'usage: npm run bench:peer -- [--plots N] [--suppliers S] [--json]';
/** Suppliers read at once: the schedule's default, as bench:refresh uses. */
const SUPPLIER_CONCURRENCY = 4;
const CLIENT = { clientId: 'ddsync-demo', clientSecret: 'ddsync-demo-secret' };

interface Options {
  plots: number;
  suppliers: number;
  json: boolean;
}

interface Side {
  fullSeconds: number;
  noChangeSeconds: number;
  /** CPU seconds by process during each run. */
  fullCpu: CpuSeconds;
  noChangeCpu: CpuSeconds;
  /** Distinct supplier plots in the warehouse after the full load: both sides must agree. */
  supplierPlots: number;
}

interface PeerResult {
  plots: number;
  suppliers: number;
  dltVersion: string;
  dlt: Side & { fullRunSeconds: number; noChangeRunSeconds: number; rows: Record<string, number> };
  ddsync: Side & { fullRowsWritten: number; noChangeRowsWritten: number; workerNodeFlags: string[] };
  /** dlt's seconds ÷ ddsync's: how many times faster ddsync is. */
  fullLead: number;
  noChangeLead: number;
  phaseSeconds: Record<string, number>;
}

function parse(argv: string[]): Options {
  const o = new CliCommand('bench:peer')
    .option('--plots <N>', 'plots the simulator serves', wholeNumber('--plots'), 100_000)
    .option('--suppliers <N>', 'direct suppliers', wholeNumber('--suppliers', 1, 10_000), 10)
    .option('--json', 'also print the result as one JSON line')
    .parse(argv, { from: 'user' })
    .opts<{ plots: number; suppliers: number; json?: boolean }>();
  return { plots: o.plots, suppliers: o.suppliers, json: o.json ?? false };
}

async function measureDlt(stack: Stack, python: string, seconds: Record<string, number>): Promise<PeerResult['dlt']> {
  const database = `peer_dlt_${Date.now()}`;
  await stack.postgres.createDatabase(database);
  const target = {
    upstreamUrl: stack.upstreamUrl,
    ...CLIENT,
    databaseUrl: stack.postgres.urlFor(database),
    dataset: 'dlt',
    workDir: packagePath('.ddsync', 'bench', `${database}-pipelines`),
  };
  const pids = { postgres: postmasterPid(stack.postgres.dataDir), simulator: stack.simulator.pid };
  const timed = async (name: string): Promise<DltRun & { cpu: CpuSeconds }> => {
    const meter = cpuMeter(pids);
    const run = await phase(progress, seconds, name, () => runDlt(python, target));
    return { ...run, cpu: { ...meter(), dlt: run.cpuSeconds } };
  };
  const full = await timed('dlt full load');
  const noChange = await timed('dlt no-change load');
  return {
    fullSeconds: full.seconds,
    noChangeSeconds: noChange.seconds,
    fullRunSeconds: full.runSeconds,
    noChangeRunSeconds: noChange.runSeconds,
    fullCpu: full.cpu,
    noChangeCpu: noChange.cpu,
    rows: await dltRows(stack.postgres.urlFor(database)),
    supplierPlots: await countOne(
      stack.postgres.urlFor(database),
      'select count(distinct id)::int as n from dlt.plots',
    ),
  };
}

async function measureDdsync(
  stack: Stack,
  seconds: Record<string, number>,
  teardown: Teardown,
): Promise<PeerResult['ddsync']> {
  const database = `peer_ddsync_${Date.now()}`;
  await stack.postgres.createDatabase(database);
  const url = stack.postgres.urlFor(database);
  const taskQueue = `bench-peer-${process.pid}-${Date.now()}`;
  const worker = await phase(progress, seconds, 'ddsync worker start', () =>
    startWorker(workerEnv(stack, url, taskQueue), stack.temporalClient, taskQueue, WORKER_NODE_FLAGS),
  );
  teardown.add('worker', () => worker.stop(15_000));
  const pids = { postgres: postmasterPid(stack.postgres.dataDir), simulator: stack.simulator.pid, worker: worker.pid };
  const timed = async (name: string, workflowId: string): Promise<RefreshRun & { cpu: CpuSeconds }> => {
    const meter = cpuMeter(pids);
    const run = await phase(progress, seconds, name, () =>
      runRefresh(stack.temporalClient, taskQueue, [worker], workflowId, { supplierConcurrency: SUPPLIER_CONCURRENCY }),
    );
    return { ...run, cpu: meter() };
  };
  const full = await timed('ddsync full refresh', `bench/peer/full/${taskQueue}`);
  const noChange = await timed('ddsync no-change refresh', `bench/peer/no-change/${taskQueue}`);
  await worker.stop(15_000);
  return {
    fullSeconds: full.seconds,
    noChangeSeconds: noChange.seconds,
    fullCpu: full.cpu,
    noChangeCpu: noChange.cpu,
    fullRowsWritten: full.summary.rowsWritten,
    noChangeRowsWritten: noChange.summary.rowsWritten,
    workerNodeFlags: [...WORKER_NODE_FLAGS],
    supplierPlots: await countOne(url, 'select count(distinct plot_id)::int as n from plot_suppliers'),
  };
}

/** Rows in each of dlt's tables (its own bookkeeping tables left out). */
async function dltRows(url: string): Promise<Record<string, number>> {
  const db = openWarehouse(url, 1, 'ddsync-bench');
  try {
    const tables = await sql<{ name: string }>`
      select table_name as name from information_schema.tables
      where table_schema = 'dlt' and table_name not like '\_dlt\_%' order by table_name`.execute(db);
    const rows: Record<string, number> = {};
    for (const { name } of tables.rows)
      rows[name] = (await sql<{ n: number }>`select count(*)::int as n from ${sql.table(`dlt.${name}`)}`.execute(db))
        .rows[0]!.n;
    return rows;
  } finally {
    await db.destroy();
  }
}

async function countOne(url: string, query: string): Promise<number> {
  const db = openWarehouse(url, 1, 'ddsync-bench');
  try {
    return (await sql<{ n: number }>`${sql.raw(query)}`.execute(db)).rows[0]!.n;
  } finally {
    await db.destroy();
  }
}

async function run(options: Options, seconds: Record<string, number>, teardown: Teardown): Promise<PeerResult> {
  const python = await phase(progress, seconds, 'dlt install', async () => ensureDlt(progress));
  await phase(progress, seconds, 'build', async () => buildProduction());
  const stack = await phase(progress, seconds, 'setup', () =>
    startStack(['--plots', String(options.plots), '--suppliers', String(options.suppliers)], teardown),
  );
  // dlt first: ddsync's worker is stopped before dlt would share the cores with it, and the reverse.
  const dlt = await measureDlt(stack, python, seconds);
  const ddsync = await measureDdsync(stack, seconds, teardown);
  if (dlt.supplierPlots !== ddsync.supplierPlots)
    throw new Error(
      `dlt loaded ${dlt.supplierPlots} supplier plots and ddsync ${ddsync.supplierPlots}: not the same load`,
    );
  return {
    plots: options.plots,
    suppliers: options.suppliers,
    dltVersion: DLT_VERSION,
    dlt,
    ddsync,
    fullLead: dlt.fullSeconds / ddsync.fullSeconds,
    noChangeLead: dlt.noChangeSeconds / ddsync.noChangeSeconds,
    phaseSeconds: seconds,
  };
}

const s1 = (x: number) => x.toFixed(1);
const cpu = (c: CpuSeconds) =>
  Object.entries(c)
    .map(([name, v]) => `${name} ${s1(v)}`)
    .join(', ');

function report(r: PeerResult): string {
  return [
    `bench:peer: ${r.plots} plots of ${r.suppliers} suppliers (${r.dlt.supplierPlots} distinct supplier plots in each warehouse)`,
    '',
    `| | ddsync | dlt ${r.dltVersion} | ddsync's lead |`,
    '|---|---|---|---|',
    `| full load | ${s1(r.ddsync.fullSeconds)} s | ${s1(r.dlt.fullSeconds)} s (pipeline.run ${s1(r.dlt.fullRunSeconds)} s) | ${r.fullLead.toFixed(1)}× |`,
    `| unchanged source | ${s1(r.ddsync.noChangeSeconds)} s (${r.ddsync.noChangeRowsWritten} rows written) | ${s1(r.dlt.noChangeSeconds)} s (pipeline.run ${s1(r.dlt.noChangeRunSeconds)} s) | ${r.noChangeLead.toFixed(1)}× |`,
    '',
    `CPU seconds, full:      ddsync: ${cpu(r.ddsync.fullCpu)} | dlt: ${cpu(r.dlt.fullCpu)}`,
    `CPU seconds, no change: ddsync: ${cpu(r.ddsync.noChangeCpu)} | dlt: ${cpu(r.dlt.noChangeCpu)}`,
    `dlt's tables after both: ${Object.entries(r.dlt.rows)
      .map(([t, n]) => `${t} ${n}`)
      .join(', ')} rows; ddsync wrote ${r.ddsync.fullRowsWritten} rows in its full refresh`,
  ].join('\n');
}

void runBenchmark({ name: 'bench:peer', usage: USAGE, parse, run, report });
