// Throughput of a whole warehouse refresh on this machine's embedded stack, against two baselines
// measured in the same run: reading every page with no database (fetch-only) and COPYing the same
// plot rows into a bare table (COPY-only). Then a second, no-change refresh, which should cost
// about a read and write nothing. Prints figures and ratios; never passes or fails on time.
// With --postgis, also a full and a no-change refresh into two warehouses on a PostgreSQL 15 cluster,
// one without PostGIS and one with it (the geom triggers, the overlap check): their ratio in one run.
// Usage: npm run bench:refresh -- --plots N [--suppliers S] [--pg-stats] [--postgis] [--json]
import { openWarehouse, type Warehouse } from '../warehouse/database.ts';
import { CliCommand, wholeNumber } from '../cli/usage.ts';
import { createUpstreamFromConfig } from '../cli/upstream.ts';
import { loadConfig } from '../platform/config.ts';
import { createLogger } from '../platform/logger.ts';
import { rowVersions } from '../test/support/warehouse-facts.ts';
import { warehouseDigest } from './support/warehouse-digest.ts';
import { cpuMeter, type CpuSeconds, postmasterPid, procStatusMb, resetPeakRss, sampleRss } from './support/children.ts';
import { measureCeiling } from './support/ceiling.ts';
import { costliestStatements, resetStatements, type StatementCost } from './support/pg-stats.ts';
import { measureCopyOnly, type CopyResult } from './support/copy-baseline.ts';
import { measureFetchOnly, type FetchOnlyResult, type WalkApi } from './support/plot-walk.ts';
import { type RefreshArgs, runRefresh, startWorker, type RefreshRun } from './support/refresh-runs.ts';
import { type CeilingFigures, formatReport, type RefreshBenchResult } from './support/report.ts';
import { sql } from 'kysely';
import { availableParallelism } from 'node:os';
import {
  buildProduction,
  phase,
  progressTo,
  runBenchmark,
  startStack,
  type Teardown,
  workerEnv,
  type Stack,
} from './support/stack.ts';
import { WORKER_NODE_FLAGS } from '../infra/production.ts';
import { formatTimeline, refreshTimeline } from './support/timeline.ts';
import { readSpatialFacts, requirePostgis, startPostgisWarehouses } from './support/postgis.ts';
import type { PostgisComparison, PostgisRefresh } from './support/report.ts';

const progress = progressTo('bench:refresh');
const USAGE =
  'usage: npm run bench:refresh -- --plots N [--suppliers S] [--vertices V] [--huge-plot-vertices V] [--workers W] [--page-window P] [--task-queue-pages] [--worker-node-flags "..."] [--pg-stats] [--timeline] [--ceiling] [--ceiling-keys] [--postgis] [--json]';
/** Suppliers read at once, by the refresh (the schedule's default) and by the fetch-only baseline alike. */
const SUPPLIER_CONCURRENCY = 4;

interface Options {
  plots: number;
  suppliers: number;
  vertices?: number;
  hugePlotVertices?: number;
  json: boolean;
  workerNodeFlags: string[];
  pgStats: boolean;
  workers: number;
  pageWindow?: number;
  pageActivities?: 'local' | 'task-queue';
  timeline: boolean;
  ceiling: boolean;
  ceilingKeys: boolean;
  postgis: boolean;
  pgSettings: string[];
}

function parseOptions(argv: string[]): Options {
  const o = new CliCommand('bench:refresh')
    .requiredOption('--plots <N>', 'plots the simulator serves', wholeNumber('--plots'))
    .option('--suppliers <N>', 'direct suppliers', wholeNumber('--suppliers', 1, 10_000), 10)
    .option(
      '--vertices <N>',
      "vertices of every plot's outer ring (default: the simulator's 5 to 9; a surveyed boundary has thousands)",
      wholeNumber('--vertices', 3, 100_000),
    )
    .option(
      '--huge-plot-vertices <N>',
      "vertices of one plot, the first supplier's first (about 25 bytes of JSON each: 2000000 make 50 MB)",
      wholeNumber('--huge-plot-vertices', 3, 5_000_000),
    )
    .option('--worker-node-flags <FLAGS>', "the worker's node flags (default: the production ones)")
    .option('--json', 'also print the result as one JSON line')
    .option('--pg-stats', "print the full refresh's costliest statements (pg_stat_statements)")
    .option('--workers <N>', 'worker processes on the task queue (scale-out)', wholeNumber('--workers', 1, 16), 1)
    .option(
      '--page-window <N>',
      "pages of a supplier read at once (default: the refresh's)",
      wholeNumber('--page-window', 1, 64),
    )
    .option('--task-queue-pages', 'page loads as ordinary activities on the task queue (default: local activities)')
    .option(
      '--pg-setting <NAME=VALUE>',
      "a setting of the benchmark's embedded Postgres (repeatable), e.g. shared_buffers=1GB",
      (value: string, previous: string[]) => {
        if (!/^[a-z_.]+=\S+$/.test(value)) throw new Error(`--pg-setting: expected name=value, got ${value}`);
        return [...previous, value];
      },
      [] as string[],
    )
    .option('--timeline', "print where the full and the no-change refresh's wall time went (from Temporal's histories)")
    .option('--ceiling', 'also measure the most any full refresh could reach here (read, map, COPY into bare tables)')
    .option('--ceiling-keys', 'with --ceiling: measure it again into bare tables that have their primary keys')
    .option(
      '--postgis',
      'also refresh two warehouses on a PostgreSQL 15 cluster, without and with PostGIS (needs postgresql-15-postgis-3)',
    )
    .parse(argv, { from: 'user' })
    .opts<{
      plots: number;
      suppliers: number;
      vertices?: number;
      hugePlotVertices?: number;
      workerNodeFlags?: string;
      json?: boolean;
      pgStats?: boolean;
      workers: number;
      pageWindow?: number;
      taskQueuePages?: boolean;
      timeline?: boolean;
      ceiling?: boolean;
      ceilingKeys?: boolean;
      postgis?: boolean;
      pgSetting: string[];
    }>();
  const workerNodeFlags =
    o.workerNodeFlags === undefined ? [...WORKER_NODE_FLAGS] : o.workerNodeFlags.split(/\s+/).filter(Boolean);
  return {
    plots: o.plots,
    suppliers: o.suppliers,
    json: o.json ?? false,
    workerNodeFlags,
    pgStats: o.pgStats ?? false,
    workers: o.workers,
    timeline: o.timeline ?? false,
    ceiling: (o.ceiling ?? false) || (o.ceilingKeys ?? false),
    ceilingKeys: o.ceilingKeys ?? false,
    postgis: o.postgis ?? false,
    pgSettings: o.pgSetting,
    ...(o.vertices !== undefined ? { vertices: o.vertices } : {}),
    ...(o.hugePlotVertices !== undefined ? { hugePlotVertices: o.hugePlotVertices } : {}),
    ...(o.pageWindow !== undefined ? { pageWindow: o.pageWindow } : {}),
    ...(o.taskQueuePages ? { pageActivities: 'task-queue' as const } : {}),
  };
}

interface RefreshPhases {
  full: RefreshRun;
  noChange: RefreshRun;
  tablesTouched: string[];
  peakRssMb: number;
  peakRssCoversStartup: boolean;
  startupPeakRssMb: number;
  /** What the full refresh left in the warehouse (support/warehouse-digest.ts). */
  fullWarehouse: string;
  fullStatements?: StatementCost[];
  noChangeStatements?: StatementCost[];
  fullCpu: CpuSeconds;
  noChangeCpu: CpuSeconds;
  /** Stops the workers (idempotent; teardown stops them too). */
  stopWorkers: () => Promise<void>;
}

/** Both refreshes on the same workers and a new database; the no-change one is checked row by row. */
async function measureRefreshes(
  stack: Stack,
  postgresPid: number | undefined,
  env: NodeJS.ProcessEnv,
  taskQueue: string,
  db: Warehouse,
  seconds: Record<string, number>,
  teardown: Teardown,
  nodeFlags: readonly string[],
  pgStats: boolean,
  workerCount: number,
  refreshArgs: RefreshArgs,
  timeline: boolean,
): Promise<RefreshPhases> {
  const workers = await phase(progress, seconds, 'worker start', () =>
    Promise.all(
      Array.from({ length: workerCount }, () => startWorker(env, stack.temporalClient, taskQueue, nodeFlags)),
    ),
  );
  for (const worker of workers) teardown.add('worker', () => worker.stop(15_000));
  const peakOf = () => Math.max(...workers.map((w) => procStatusMb(w.pid, 'VmHWM') ?? 0));
  const startupPeakRssMb = peakOf();
  if (pgStats) await resetStatements(db);
  const reset = workers.map((w) => resetPeakRss(w.pid)).every(Boolean);
  const pids: Record<string, number | undefined> = {
    postgres: postgresPid,
    simulator: stack.simulator.pid,
  };
  for (const [i, worker] of workers.entries()) pids[workers.length === 1 ? 'worker' : `worker${i + 1}`] = worker.pid;
  const fullMeter = cpuMeter(pids);
  const full = await phase(progress, seconds, 'full refresh', () =>
    runRefresh(stack.temporalClient, taskQueue, workers, `bench/refresh/full/${taskQueue}`, refreshArgs),
  );
  const fullCpu = fullMeter();
  const fullWarehouse = await warehouseDigest(db, full.summary.runId);
  const fullStatements = pgStats ? await costliestStatements(db, 15) : undefined;
  if (pgStats) await resetStatements(db);
  const before = await rowVersions(db);
  const noChangeMeter = cpuMeter(pids);
  const noChange = await phase(progress, seconds, 'no-change refresh', () =>
    runRefresh(stack.temporalClient, taskQueue, workers, `bench/refresh/no-change/${taskQueue}`, refreshArgs),
  );
  const noChangeCpu = noChangeMeter();
  const noChangeStatements = pgStats ? await costliestStatements(db, 15) : undefined;
  if (timeline)
    for (const which of ['full', 'no-change'])
      process.stderr.write(
        `${which} refresh:\n${formatTimeline(await refreshTimeline(stack.temporalClient, `bench/refresh/${which}/${taskQueue}`))}\n`,
      );
  const after = await rowVersions(db);
  const peakRssMb = peakOf() || Math.max(full.sampledPeakRssMb, noChange.sampledPeakRssMb);
  const tablesTouched = Object.keys(before).filter((table) => before[table] !== after[table]);
  return {
    full,
    noChange,
    tablesTouched,
    peakRssMb,
    peakRssCoversStartup: !reset,
    startupPeakRssMb,
    fullWarehouse,
    fullCpu,
    noChangeCpu,
    stopWorkers: async () => {
      await Promise.all(workers.map((w) => w.stop(15_000)));
    },
    ...(fullStatements ? { fullStatements } : {}),
    ...(noChangeStatements ? { noChangeStatements } : {}),
  };
}

function toResult(
  options: Options,
  fetched: FetchOnlyResult & { cpu: CpuSeconds },
  copied: CopyResult & { benchRssMb: number },
  refreshes: RefreshPhases,
  phaseSeconds: Record<string, number>,
  ceiling: CeilingFigures | undefined,
  postgis: PostgisComparison | undefined,
  keyedCeiling?: CeilingFigures,
): RefreshBenchResult {
  const { full, noChange } = refreshes;
  const fetchOnlyPlotsPerSec = fetched.plots / fetched.seconds;
  const copyOnlyRowsPerSec = copied.rows / copied.seconds;
  const fullPlotsPerSec = full.summary.plotsSeen / full.seconds;
  return {
    plots: options.plots,
    suppliers: fetched.supplierIds.length,
    ...(options.vertices !== undefined ? { vertices: options.vertices } : {}),
    ...(options.hugePlotVertices !== undefined ? { hugePlotVertices: options.hugePlotVertices } : {}),
    fullWarehouse: refreshes.fullWarehouse,
    fetchOnlySeconds: fetched.seconds,
    fetchOnlyPlots: fetched.plots,
    fetchOnlyPages: fetched.pages,
    fetchOnlyPlotsPerSec,
    copyOnlySeconds: copied.seconds,
    copyOnlyRows: copied.rows,
    copyOnlyStatements: copied.statements,
    copyOnlyMegabytes: copied.megabytes,
    copyOnlyRowsPerSec,
    fullSeconds: full.seconds,
    fullPlotsSeen: full.summary.plotsSeen,
    fullPages: full.summary.pages,
    fullRowsWritten: full.summary.rowsWritten,
    fullStatus: full.summary.status,
    fullPlotsPerSec,
    fullFinishSeconds: full.finishSeconds ?? null,
    fullFinishSteps: full.finishSteps ?? null,
    fullToCopyRatio: fullPlotsPerSec / copyOnlyRowsPerSec,
    fullToFetchRatio: fullPlotsPerSec / fetchOnlyPlotsPerSec,
    cpuSeconds: { fetchOnly: fetched.cpu, full: refreshes.fullCpu, noChange: refreshes.noChangeCpu },
    fetchOnlyToCopyRatio: fetchOnlyPlotsPerSec / copyOnlyRowsPerSec,
    noChangeSeconds: noChange.seconds,
    noChangePlotsSeen: noChange.summary.plotsSeen,
    noChangeStatus: noChange.summary.status,
    noChangeFinishSeconds: noChange.finishSeconds ?? null,
    noChangeFinishSteps: noChange.finishSteps ?? null,
    noChangeToFetchRatio: noChange.seconds / fetched.seconds,
    noChangeRowsWritten: noChange.summary.rowsWritten,
    noChangeTablesTouched: refreshes.tablesTouched,
    peakRssMb: refreshes.peakRssMb,
    peakRssCoversStartup: refreshes.peakRssCoversStartup,
    fullSampledRssMb: full.sampledPeakRssMb,
    noChangeSampledRssMb: noChange.sampledPeakRssMb,
    fullRssByMapping: full.sampledPeakRssByMapping,
    noChangeRssByMapping: noChange.sampledPeakRssByMapping,
    workerStartupPeakRssMb: refreshes.startupPeakRssMb,
    benchCopyPhaseRssMb: copied.benchRssMb,
    phaseSeconds,
    workerNodeFlags: options.workerNodeFlags,
    workers: options.workers,
    ...(ceiling ? { ceiling, fullToCeilingRatio: fullPlotsPerSec / ceiling.plotsPerSec } : {}),
    ...(keyedCeiling ? { keyedCeiling, fullToKeyedCeilingRatio: fullPlotsPerSec / keyedCeiling.plotsPerSec } : {}),
    ...(postgis ? { postgis, postgisToPlainFullRatio: postgis.postgisToPlainFullRatio } : {}),
    ...(refreshes.fullStatements ? { fullStatements: refreshes.fullStatements } : {}),
    ...(refreshes.noChangeStatements ? { noChangeStatements: refreshes.noChangeStatements } : {}),
  };
}

async function run(options: Options, seconds: Record<string, number>, teardown: Teardown): Promise<RefreshBenchResult> {
  // Before anything is built or started: a missing PostGIS should not cost a whole run to find out.
  if (options.postgis) requirePostgis();
  await phase(progress, seconds, 'build', async () => buildProduction());
  const stack = await phase(progress, seconds, 'setup', () =>
    startStack(
      [
        '--plots',
        String(options.plots),
        '--suppliers',
        String(options.suppliers),
        ...(options.vertices === undefined ? [] : ['--vertices', String(options.vertices)]),
        ...(options.hugePlotVertices === undefined ? [] : ['--huge-plot-vertices', String(options.hugePlotVertices)]),
      ],
      teardown,
      [...(options.pgStats ? ['shared_preload_libraries=pg_stat_statements'] : []), ...options.pgSettings],
    ),
  );
  const taskQueue = `bench-refresh-${process.pid}-${Date.now()}`;
  const database = `refresh_${Date.now()}`;
  await stack.postgres.createDatabase(database);
  const env = workerEnv(stack, stack.postgres.urlFor(database), taskQueue);
  // The same client as the worker's: built from the same settings, with the same defaults.
  const api: WalkApi = createUpstreamFromConfig(
    loadConfig(['upstream'], env).upstream!,
    createLogger({ level: 'warn' }),
  );
  const fetchMeter = cpuMeter({ simulator: stack.simulator.pid });
  const fetchCpuBefore = process.cpuUsage();
  const fetched = await phase(progress, seconds, 'fetch-only', () => measureFetchOnly(api, SUPPLIER_CONCURRENCY));
  const fetchCpuUsed = process.cpuUsage(fetchCpuBefore);
  const fetchOnlyCpu = { client: (fetchCpuUsed.user + fetchCpuUsed.system) / 1e6, ...fetchMeter() };
  const benchRss = sampleRss(process.pid);
  const copied = {
    ...(await phase(progress, seconds, 'COPY-only (re-read, map, COPY)', () =>
      measureCopyOnly(api, fetched.supplierIds, stack.postgres),
    )),
    benchRssMb: benchRss.stop(),
  };
  const ceiling = options.ceiling ? await measureCeilingPhase(api, stack, fetched, seconds, false) : undefined;
  const keyedCeiling = options.ceilingKeys ? await measureCeilingPhase(api, stack, fetched, seconds, true) : undefined;
  const db = openWarehouse(stack.postgres.urlFor(database), 2, 'ddsync-bench');
  teardown.add('warehouse pool', () => db.destroy());
  const refreshArgs: RefreshArgs = {
    supplierConcurrency: SUPPLIER_CONCURRENCY,
    ...(options.pageWindow !== undefined ? { pageWindow: options.pageWindow } : {}),
    ...(options.pageActivities ? { pageActivities: options.pageActivities } : {}),
  };
  const refreshes = await measureRefreshes(
    stack,
    postmasterPid(stack.postgres.dataDir),
    env,
    taskQueue,
    db,
    seconds,
    teardown,
    options.workerNodeFlags,
    options.pgStats,
    options.workers,
    refreshArgs,
    options.timeline,
  );
  // The embedded refreshes' workers would only compete for the two cores from here on.
  await refreshes.stopWorkers();
  const postgis = options.postgis ? await comparePostgis(stack, options, seconds, teardown, refreshArgs) : undefined;
  return toResult(
    options,
    { ...fetched, cpu: fetchOnlyCpu },
    copied,
    refreshes,
    seconds,
    ceiling,
    postgis,
    keyedCeiling,
  );
}

/**
 * The same two refreshes into a warehouse without PostGIS and one with it, both on one PostgreSQL 15
 * cluster (bench/support/postgis.ts), each by its own worker of the same build; the plain one first.
 */
async function comparePostgis(
  stack: Stack,
  options: Options,
  seconds: Record<string, number>,
  teardown: Teardown,
  refreshArgs: RefreshArgs,
): Promise<PostgisComparison> {
  const cluster = await phase(progress, seconds, 'PostGIS cluster setup', () => startPostgisWarehouses(teardown));
  const measure = async (name: 'plain' | 'postgis', url: string): Promise<PostgisRefresh> => {
    const taskQueue = `bench-refresh-${name}-${process.pid}-${Date.now()}`;
    const db = openWarehouse(url, 2, 'ddsync-bench');
    teardown.add(`${name} warehouse pool`, () => db.destroy());
    const phases: Record<string, number> = {};
    const r = await measureRefreshes(
      stack,
      postmasterPid(cluster.dataDir),
      workerEnv(stack, url, taskQueue),
      taskQueue,
      db,
      phases,
      teardown,
      options.workerNodeFlags,
      false,
      options.workers,
      refreshArgs,
      false,
    );
    for (const [phaseName, s] of Object.entries(phases)) seconds[`${name}: ${phaseName}`] = s;
    // Exited workers have flushed their sessions' function statistics.
    await r.stopWorkers();
    const spatial = await readSpatialFacts(db);
    const expected = name === 'postgis' ? 'postgis' : 'none';
    if (spatial.mode !== expected)
      throw new Error(`the ${name} warehouse is in spatial mode ${spatial.mode}, not ${expected}`);
    // Autovacuum would otherwise work off this load during the next warehouse's refreshes, on the
    // same server, and count as that one's Postgres CPU.
    await sql`vacuum analyze`.execute(db);
    if (spatial.plotsOutOfStep > 0)
      throw new Error(
        `${spatial.plotsOutOfStep} plots of the ${name} warehouse have a GeoJSON but neither geom nor geom_issue`,
      );
    return {
      fullSeconds: r.full.seconds,
      fullRowsWritten: r.full.summary.rowsWritten,
      fullPlotsSeen: r.full.summary.plotsSeen,
      fullFinishSeconds: r.full.finishSeconds ?? null,
      noChangeSeconds: r.noChange.seconds,
      noChangeRowsWritten: r.noChange.summary.rowsWritten,
      noChangeTablesTouched: r.tablesTouched,
      cpuSeconds: { full: r.fullCpu, noChange: r.noChangeCpu },
      spatial,
    };
  };
  const plain = await measure('plain', cluster.plainUrl);
  const withPostgis = await measure('postgis', cluster.postgisUrl);
  const cpuOf = (x: PostgisRefresh) => Object.values(x.cpuSeconds.full).reduce((a, b) => a + b, 0);
  return {
    server: 'PostgreSQL 15 + PostGIS 3 (Debian)',
    plain,
    postgis: withPostgis,
    postgisToPlainFullRatio: withPostgis.fullSeconds / plain.fullSeconds,
    postgisToPlainFullCpuRatio: cpuOf(withPostgis) / cpuOf(plain),
    postgisToPlainNoChangeRatio: withPostgis.noChangeSeconds / plain.noChangeSeconds,
  };
}

/** The ceiling (bench/support/ceiling.ts), with the CPU each process spent on it. */
async function measureCeilingPhase(
  api: WalkApi,
  stack: Stack,
  fetched: FetchOnlyResult,
  seconds: Record<string, number>,
  keyed: boolean,
): Promise<CeilingFigures> {
  const meter = cpuMeter({ postgres: postmasterPid(stack.postgres.dataDir), simulator: stack.simulator.pid });
  const before = process.cpuUsage();
  const what = keyed ? 'keyed ceiling (the same into tables with their keys)' : 'ceiling (read, map, COPY every row)';
  const result = await phase(progress, seconds, what, () =>
    measureCeiling(api, stack.postgres, SUPPLIER_CONCURRENCY, keyed),
  );
  const used = process.cpuUsage(before);
  const cpu = { bench: (used.user + used.system) / 1e6, ...meter() };
  const fetchRate = fetched.plots / fetched.seconds;
  const plotsPerSec = result.plots / result.seconds;
  // Its CPU seconds spread over every core with none idle: no schedule of that work can be faster.
  const cpuBoundSeconds = Object.values(cpu).reduce((a, b) => a + b, 0) / availableParallelism();
  return {
    ...result,
    plotsPerSec,
    toFetchRatio: plotsPerSec / fetchRate,
    cpuBoundToFetchRatio: result.plots / cpuBoundSeconds / fetchRate,
    cpu,
  };
}

await runBenchmark({
  name: 'bench:refresh',
  usage: USAGE,
  parse: parseOptions,
  run,
  report: (result) => formatReport(result),
});
