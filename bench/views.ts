// How fast the analysts' views answer, as the BI role reads them, on a warehouse filled by a real
// refresh (the embedded stack, the simulator, the production worker). Each summary view is read
// whole; each per-plot view's first 1,000 rows are read filtered by a supplier and by a country.
// Beside them, in the same run, a plain `select count(*) from plots`. Cold: the first query on a
// new connection (no plan or catalogue cache; Postgres's shared buffers and the OS cache as the
// refresh left them); warm: the median of the next runs on that connection. Prints figures and
// ratios; never passes or fails on time.
// Usage: npm run bench:views -- --plots N [--suppliers S] [--runs R] [--json]
//        [--hold] (keep the stack after measuring, until SIGINT or SIGTERM, to look at the plans)
//        [--database-url URL] (measure a warehouse filled already: no stack, no refresh)
//        [--summaries] (with --database-url: also time making the summaries, which writes one plot and puts it back)
// After the views, on a warehouse it filled itself: how long making the summaries takes when nothing
// was touched, when one plot of the largest supplier was, and reading every plot again (on demand).
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { sql } from 'kysely';
import { CliCommand, wholeNumber } from '../cli/usage.ts';
import { WORKER_NODE_FLAGS } from '../infra/production.ts';
import { refreshSummaries, refreshSummariesAfterRun, type SummaryOutcome } from '../warehouse/analyst-summaries.ts';
import { openWarehouse, type Warehouse } from '../warehouse/database.ts';
import { createReaderLogin } from '../warehouse/reader-login.ts';
import { median } from './support/figures.ts';
import { runRefresh, startWorker } from './support/refresh-runs.ts';
import {
  buildProduction,
  phase,
  progressTo,
  runBenchmark,
  startStack,
  type Teardown,
  workerEnv,
} from './support/stack.ts';

const progress = progressTo('bench:views');
const USAGE =
  'usage: npm run bench:views -- --plots N [--suppliers S] [--runs R] [--hold] [--database-url URL [--summaries]] [--json]';
const READER = 'bench_views_reader';
const READER_PASSWORD = 'bench-views';
const FIRST_ROWS = 1000;

/** The views of a handful of rows: read whole. */
export const SUMMARY_VIEWS = [
  'bi_suppliers',
  'bi_risk_overview',
  'bi_warehouse_totals',
  'bi_eudr_supplier_readiness',
  'bi_country_risk',
  'sync_last_seen',
  'bi_sync_health',
  'bi_sync_status',
] as const;

/** The views of a row per plot (or per change of a plot): their first 1,000 rows under a filter. */
const PER_PLOT_QUERIES = (supplier: string, country: string) => {
  const s = `'${supplier.replaceAll("'", "''")}'`;
  const c = `'${country.replaceAll("'", "''")}'`;
  const bySupplier = `plot_id in (select plot_id from plot_suppliers where supplier_id = ${s} and deleted_at is null)`;
  const byCountry = `plot_id in (select id from plots where country_code = ${c})`;
  return [
    { view: 'bi_current_plots', filter: 'supplier', query: `${s} = any(supplier_business_ids)` },
    { view: 'bi_current_plots', filter: 'country', query: `country_code = ${c}` },
    { view: 'bi_eudr_plot_readiness', filter: 'supplier', query: `${s} = any(supplier_business_ids)` },
    { view: 'bi_eudr_plot_readiness', filter: 'country', query: `country_code = ${c}` },
    { view: 'bi_plot_changes', filter: 'supplier', query: bySupplier },
    { view: 'bi_plot_changes', filter: 'country', query: byCountry },
  ].map((q) => ({ ...q, sql: `select * from ${q.view} where ${q.query} limit ${FIRST_ROWS}` }));
};

interface Options {
  plots: number;
  suppliers: number;
  runs: number;
  json: boolean;
  hold: boolean;
  summaries: boolean;
  databaseUrl?: string;
}

export interface Making {
  seconds: number;
  rowsWritten: number;
  /** Plots read again (all current plots when whole). */
  plotsRead: number;
  whole: boolean;
}

export interface ViewLatency {
  view: string;
  /** whole, or the filter of a per-plot view's first rows. */
  read: string;
  rows: number;
  coldMs: number;
  warmMs: number;
  warmMinMs: number;
  warmMaxMs: number;
}

export interface ViewsBenchResult {
  plots: number;
  suppliers: number;
  plotsStored: number;
  supplier: string;
  country: string;
  refreshSeconds: number | null;
  finishRefreshSeconds: number | null;
  /** Of finishRefresh, making the summary tables agree (summary_refreshes.seconds, the last time they were made). */
  summariesSeconds: number | null;
  /** Making the summaries again after the views were read (wall time of each call); null when not measured. */
  makings: {
    /** Nothing touched since the last making: what the end of a no-change refresh pays. */
    untouched: Making;
    /** One plot of the largest supplier touched (its risk level flipped by SQL). */
    onePlot: Making;
    /** Every plot read again (refreshSummaries: what a first load's end and migrations pay). */
    whole: Making;
  } | null;
  countPlots: ViewLatency;
  views: ViewLatency[];
}

function parseOptions(argv: string[]): Options {
  const o = new CliCommand('bench:views')
    .requiredOption('--plots <N>', 'plots the simulator serves', wholeNumber('--plots'))
    .option('--suppliers <N>', 'direct suppliers', wholeNumber('--suppliers', 1, 10_000), 10)
    .option('--runs <N>', 'warm runs of each query after the cold one', wholeNumber('--runs', 1, 100), 5)
    .option('--json', 'also print the result as one JSON line')
    .option('--hold', 'keep the stack after measuring, until SIGINT or SIGTERM (prints the URL)')
    .option('--database-url <URL>', 'measure this warehouse, filled already: no stack, no refresh')
    .option('--summaries', 'with --database-url: also time making the summaries (writes one plot, then puts it back)')
    .parse(argv, { from: 'user' })
    .opts<{
      plots: number;
      suppliers: number;
      runs: number;
      json?: boolean;
      hold?: boolean;
      summaries?: boolean;
      databaseUrl?: string;
    }>();
  return {
    plots: o.plots,
    suppliers: o.suppliers,
    runs: o.runs,
    json: o.json === true,
    hold: o.hold === true,
    summaries: o.summaries === true || !o.databaseUrl,
    ...(o.databaseUrl ? { databaseUrl: o.databaseUrl } : {}),
  };
}

/** One query on a new connection (cold), then `runs` more on it (warm). */
async function measure(url: string, view: string, read: string, text: string, runs: number): Promise<ViewLatency> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => {});
  await client.connect();
  try {
    const timed = async () => {
      const started = performance.now();
      const result = await client.query(text);
      return { ms: performance.now() - started, rows: result.rowCount ?? 0 };
    };
    const cold = await timed();
    const warm: number[] = [];
    for (let i = 0; i < runs; i++) warm.push((await timed()).ms);
    return {
      view,
      read,
      rows: cold.rows,
      coldMs: cold.ms,
      warmMs: median(warm),
      warmMinMs: Math.min(...warm),
      warmMaxMs: Math.max(...warm),
    };
  } finally {
    await client.end();
  }
}

/** One making of the summaries, timed from outside (lock, transaction and all). */
async function timeMaking(make: () => Promise<SummaryOutcome>): Promise<Making> {
  const started = performance.now();
  const outcome = await make();
  return {
    seconds: (performance.now() - started) / 1000,
    rowsWritten: outcome.rowsWritten,
    plotsRead: outcome.refreshed ? (outcome.plotsTouched ?? 0) : 0,
    whole: outcome.whole ?? false,
  };
}

/**
 * Making the summaries when nothing was touched, when one plot of `supplier` was (its risk level
 * flipped, then put back and made again), and reading every plot again.
 */
async function timeMakings(db: Warehouse, supplier: string): Promise<NonNullable<ViewsBenchResult['makings']>> {
  const run = () => refreshSummariesAfterRun(db, randomUUID());
  await run(); // whatever was left noted: none for the measures below
  const untouched = await timeMaking(run);
  const { rows } = await sql<{ id: string; risk_level: string | null }>`
    select p.id, p.risk_level from plots p join plot_suppliers ps on ps.plot_id = p.id
    where ps.supplier_id = ${supplier} and ps.deleted_at is null and p.deleted_at is null
    order by p.id limit 1`.execute(db);
  const plot = rows[0]!;
  const flip = (level: string | null) => sql`update plots set risk_level = ${level} where id = ${plot.id}`.execute(db);
  await flip(plot.risk_level === 'high' ? 'low' : 'high');
  const onePlot = await timeMaking(run);
  await flip(plot.risk_level);
  await run();
  const whole = await timeMaking(() => refreshSummaries(db));
  return { untouched, onePlot, whole };
}

/** A warehouse filled by a real refresh of the simulator's N plots. */
async function fill(options: Options, seconds: Record<string, number>, teardown: Teardown) {
  await phase(progress, seconds, 'build', async () => buildProduction());
  const stack = await phase(progress, seconds, 'setup', () =>
    startStack(['--plots', String(options.plots), '--suppliers', String(options.suppliers)], teardown),
  );
  const taskQueue = `bench-views-${process.pid}-${Date.now()}`;
  const database = `views_${Date.now()}`;
  await stack.postgres.createDatabase(database);
  const databaseUrl = stack.postgres.urlFor(database);
  const env = workerEnv(stack, databaseUrl, taskQueue);
  const worker = await phase(progress, seconds, 'worker start', () =>
    startWorker(env, stack.temporalClient, taskQueue, WORKER_NODE_FLAGS),
  );
  teardown.add('worker', () => worker.stop(15_000));
  const refresh = await phase(progress, seconds, 'refresh', () =>
    runRefresh(stack.temporalClient, taskQueue, [worker], `bench/views/${taskQueue}`, { supplierConcurrency: 4 }),
  );
  // The worker is idle from here on; stopped so it shares no core with the reads.
  await worker.stop(15_000);
  return { databaseUrl, refreshSeconds: refresh.seconds, finishRefreshSeconds: refresh.finishSeconds ?? null };
}

async function run(options: Options, seconds: Record<string, number>, teardown: Teardown): Promise<ViewsBenchResult> {
  const { databaseUrl, refreshSeconds, finishRefreshSeconds } = options.databaseUrl
    ? { databaseUrl: options.databaseUrl, refreshSeconds: null, finishRefreshSeconds: null }
    : await fill(options, seconds, teardown);
  const db = openWarehouse(databaseUrl, 1, 'bench-views');
  teardown.add('the pool', () => db.destroy());
  await createReaderLogin(db, READER, READER_PASSWORD);
  // The largest supplier and country: the filters a dashboard would open first.
  const { rows: picked } = await sql<{ supplier: string; country: string; plots: string }>`
    select (select supplier_id from plot_suppliers where deleted_at is null group by 1 order by count(*) desc, 1 limit 1) as supplier,
           (select country_code from plots where deleted_at is null and country_code is not null group by 1 order by count(*) desc, 1 limit 1) as country,
           (select count(*) from plots where deleted_at is null) as plots`.execute(db);
  const { supplier, country, plots } = picked[0]!;
  const { rows: made } = await sql<{ seconds: number }>`select seconds from summary_refreshes`.execute(db);

  const readerUrl = databaseUrl.replace(/\/\/[^@]+@/, `//${READER}:${READER_PASSWORD}@`);

  const views: ViewLatency[] = [];
  const countPlots = await phase(progress, seconds, 'count(*) from plots', () =>
    measure(readerUrl, 'plots', 'count(*)', 'select count(*) from plots', options.runs),
  );
  await phase(progress, seconds, 'views', async () => {
    for (const view of SUMMARY_VIEWS)
      views.push(await measure(readerUrl, view, 'whole', `select * from ${view}`, options.runs));
    for (const q of PER_PLOT_QUERIES(supplier, country))
      views.push(await measure(readerUrl, q.view, `first ${FIRST_ROWS}, by ${q.filter}`, q.sql, options.runs));
  });
  const makings = options.summaries
    ? await phase(progress, seconds, 'summaries', () => timeMakings(db, supplier))
    : null;
  const result = {
    plots: options.plots,
    suppliers: options.suppliers,
    plotsStored: Number(plots),
    supplier,
    country,
    refreshSeconds,
    finishRefreshSeconds,
    summariesSeconds: made[0]?.seconds ?? null,
    makings,
    countPlots,
    views,
  };
  if (options.hold) {
    process.stderr.write(
      `${report(result)}\nholding the stack: DATABASE_URL=${databaseUrl} (SIGINT or SIGTERM ends it)\n`,
    );
    await new Promise((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
  }
  return result;
}

function report(r: ViewsBenchResult): string {
  const ms = (x: number) => `${x < 10 ? x.toFixed(1) : Math.round(x)} ms`.padStart(8);
  const ratio = (x: number) => `${(x / r.countPlots.warmMs).toFixed(2)}×`.padStart(7);
  const line = (v: ViewLatency) =>
    `  ${`${v.view} (${v.read})`.padEnd(52)}${String(v.rows).padStart(6)} rows  cold${ms(v.coldMs)}  warm${ms(v.warmMs)} (${Math.round(v.warmMinMs)}–${Math.round(v.warmMaxMs)})  ÷ count(*) warm${ratio(v.warmMs)}`;
  return [
    `Analyst views as ${READER} (in ddsync_reader) reads them, at ${r.plotsStored.toLocaleString('en-US')} plots (${r.suppliers} suppliers; refresh ${r.refreshSeconds?.toFixed(1) ?? '-'} s, finishRefresh ${r.finishRefreshSeconds?.toFixed(2) ?? '-'} s, of which the summaries ${r.summariesSeconds?.toFixed(2) ?? '-'} s)`,
    `  filters: supplier ${r.supplier}, country ${r.country}; cold = first query on a new connection, warm = median of the next runs`,
    line(r.countPlots),
    ...r.views.map(line),
    ...(r.makings
      ? Object.entries(r.makings).map(
          ([what, m]) =>
            `  making the summaries, ${what.padEnd(9)} ${m.seconds.toFixed(3).padStart(8)} s  ${m.whole ? 'whole' : 'touched'}: ${m.plotsRead} plots read, ${m.rowsWritten} rows written`,
        )
      : []),
    '  goals (issue 24): summary views ≤ 100 ms at 100,000 plots, ≤ 300 ms at 1,000,000; first 1,000 filtered rows of a per-plot view ≤ 100 ms',
  ].join('\n');
}

await runBenchmark<Options, ViewsBenchResult>({
  name: 'bench:views',
  usage: USAGE,
  parse: parseOptions,
  run,
  report,
});
