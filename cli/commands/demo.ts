import { resolve } from 'node:path';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, stat } from 'node:fs/promises';
import { untilSignal } from '../../infra/exit-hooks.ts';
import { Client, Connection } from '@temporalio/client';
import { DEMO_SHIPMENTS, demoTiming, formatDemoSubmission, runDemoSubmission, timingEnv } from '../demo-submission.ts';
import { startEmbeddedPostgres } from '../../infra/embedded-postgres.ts';
import { startTemporalDevServer } from '../../infra/temporal-dev-server.ts';
import { createLogger } from '../../platform/logger.ts';
import { installTemporalRuntime } from '../../infra/temporal-connection.ts';
import { createDdsyncWorker } from '../../infra/worker.ts';
import { NativeConnection } from '@temporalio/worker';
import { startSimulator } from '../../simulator/index.ts';
import { createUpstreamClient } from '../../upstream/index.ts';
import { openWarehouse } from '../../warehouse/database.ts';
import { demoFigures } from '../../warehouse/demo-figures.ts';
import { createReaderLogin } from '../../warehouse/reader-login.ts';
import { migrateToLatest } from '../../warehouse/migrate.ts';
import { followRefresh, startRefresh } from '../refresh-runner.ts';
import { formatRunSummary } from '../refresh-summary.ts';
import { formatDemoFigures } from '../demo-report.ts';
import { writeReport } from '../../report/write.ts';
import { describeSpatialMode, readSpatialMode } from '../../warehouse/spatial/mode.ts';
import { demoStatus } from '../demo-status.ts';
import { formatStatus, statusJson } from '../status/render.ts';

const BI_LOGIN = 'ddsync_bi';
const BI_PASSWORD = 'ddsync-bi';

export async function run(values: {
  suppliers: number;
  plots: number;
  timeScale: number;
  keep?: boolean;
  json?: boolean;
}): Promise<number> {
  const { suppliers, plots, timeScale } = values;
  const timing = demoTiming(timeScale);
  const started = Date.now();
  const say = (line: string) => process.stderr.write(`[${((Date.now() - started) / 1000).toFixed(1)}s] ${line}\n`);
  const log = createLogger({ level: 'warn', format: 'pretty', destination: process.stderr });
  installTemporalRuntime(log);

  // Ctrl-C or SIGTERM is a normal way to end the demo. Whatever ends it (the end, a signal, an error),
  // everything started so far is stopped in reverse order and nothing is left behind.
  const interrupted = untilSignal();
  const cleanup: Array<() => Promise<unknown>> = [];
  const until = <T>(work: Promise<T>) =>
    Promise.race([
      work,
      interrupted.then(() => {
        throw new Interrupted();
      }),
    ]);
  try {
    say(
      `ddsync demo: starting PostgreSQL, the Temporal dev server and the simulator (${suppliers} suppliers, ${plots.toLocaleString('en-US')} plots, clock ${1 / timeScale}x)…`,
    );
    // A demo always starts from an empty warehouse: a cluster of its own, removed when it ends.
    const workDir = await freshDemoDir();
    cleanup.push(() => rm(workDir, { recursive: true, force: true }));
    const pgStart = startEmbeddedPostgres({ dataDir: resolve(workDir, 'postgres'), persistent: false });
    const temporalStart = startTemporalDevServer({ ui: true });
    const simStart = startSimulator({ port: 0, suppliers, plots, seed: 1, timeScale });
    // Whatever started is stopped, even when another part failed to start.
    cleanup.push(() =>
      Promise.allSettled([
        pgStart.then((p) => p.stop()),
        temporalStart.then((t) => t.stop()),
        simStart.then((x) => x.close()),
      ]),
    );
    const [postgres, temporal, sim] = await until(Promise.all([pgStart, temporalStart, simStart]));
    const db = openWarehouse(postgres.url, 10, 'ddsync-demo');
    cleanup.push(() => db.destroy());
    const connection = await Connection.connect({ address: temporal.address });
    cleanup.push(() => connection.close());
    const workerConnection = await NativeConnection.connect({ address: temporal.address });
    cleanup.push(() => workerConnection.close());
    const taskQueue = 'ddsync';
    const worker = await createDdsyncWorker({
      connection: workerConnection,
      namespace: temporal.namespace,
      taskQueue,
      deps: {
        db,
        api: createUpstreamClient({
          baseUrl: sim.url,
          clientId: 'ddsync-demo',
          clientSecret: 'ddsync-demo-secret',
          logger: log,
        }),
        log,
      },
      maxConcurrentActivities: 8,
    });
    const working = worker.run();
    // A signal may already have drained the worker (the SDK listens too): shut down only a running one.
    cleanup.push(async () => {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await working;
    });

    const migrated = await until(migrateToLatest(db));
    await createReaderLogin(db, BI_LOGIN, BI_PASSWORD);
    say(`warehouse ready (${migrated.current}); simulator at ${sim.url}; Temporal at ${temporal.address}`);
    // Embedded Postgres has no PostGIS: the demo says so, as `ddsync config` does (docs/postgis.md).
    say(`spatial mode: ${describeSpatialMode(await readSpatialMode(db))}`);
    const client = new Client({ connection, namespace: temporal.namespace });
    const supplierConcurrency = 4;
    const refresh = await startRefresh(client, taskQueue, { supplierConcurrency });
    say(`refresh ${refresh.runId} started`);
    const result = await until(followRefresh(db, refresh, values.json ? null : process.stderr));
    const figures = await demoFigures(db);
    const plotsAtSource = sim.control.countPlots();
    // The HTML report is drawn while the shipments go out (they mostly wait on the EU system's clock).
    // It outlives the demo's folder: .ddsync/reports/, named after the refresh (two demos never share one).
    const reporting = writeReport(db, {
      outDir: resolve('.ddsync/reports'),
      fileName: `demo-report-${refresh.runId.slice(0, 8)}.html`,
    });
    reporting.catch(() => undefined);

    say(
      `submitting ${DEMO_SHIPMENTS.replace(/.*\/examples\//, 'examples/')} durably; the EU system's 20–90 minutes take ${Math.round(20 * 60 * timeScale)}–${Math.round(90 * 60 * timeScale)} s on the simulator's clock`,
    );
    const submission = await until(
      runDemoSubmission(db, client, {
        taskQueue,
        timing,
        reportPath: resolve(workDir, 'shipments.report.ndjson'),
        progress: values.json ? null : process.stderr,
      }),
    );

    const report = await until(reporting);
    say(`report written: ${report.path} (${(report.bytes / 1e6).toFixed(1)} MB; open it in a browser)`);
    const biUrl = postgres.url.replace(/\/\/[^@]+@/, `//${BI_LOGIN}:${BI_PASSWORD}@`);
    // Last, what `ddsync status` says of it all, read as the BI login.
    const status = await until(
      demoStatus({ biUrl, client, temporalAddress: temporal.address, taskQueue, supplierConcurrency }),
    );
    say(`ddsync's schedules applied; ddsync status: ${status.level}`);
    if (!values.json) {
      process.stdout.write(
        [
          formatRunSummary(result),
          '',
          formatDemoFigures(figures, plotsAtSource),
          '',
          formatDemoSubmission(submission),
          '',
          `EUDR readiness report:      ${report.path}`,
          `query it (read-only role):  psql '${biUrl}'`,
          `  e.g.  select * from bi_suppliers order by flagged_plots desc limit 10;`,
          `Temporal UI:                ${temporal.uiUrl ?? '(headless)'}`,
          '',
          formatStatus(status),
        ].join('\n'),
      );
    } else {
      const states = submission.report.states;
      process.stdout.write(
        `${JSON.stringify({
          plots: figures.plots,
          plotsAtSource,
          suppliers: figures.suppliers,
          analyses: figures.analyses,
          runId: result.runId,
          status: result.status,
          seconds: Math.round((Date.now() - started) / 100) / 10,
          refreshSeconds: result.seconds,
          rowsWritten: result.rowsWritten,
          hectares: figures.hectares,
          flaggedPlots: figures.flaggedPlots,
          plotsReady: figures.plotsReady,
          plotsNotReady: figures.plotsNotReady,
          overlapChecked: figures.overlapChecked,
          report: report.path,
          psql: biUrl,
          temporalUi: temporal.uiUrl ?? null,
          timeScale,
          submission: {
            batchId: submission.intake.batchId,
            rows: submission.intake.rows,
            accepted: submission.intake.accepted,
            refused: submission.intake.invalid,
            readinessWarned: submission.intake.readiness?.warned ?? 0,
            readinessRefused: submission.intake.readiness?.refused ?? 0,
            available: states['available'] ?? 0,
            error: states['error'] ?? 0,
            failed: states['failed'] ?? 0,
            references: submission.references,
          },
          syncStatus: statusJson(status),
        })}\n`,
      );
    }
    if (values.keep) {
      say(
        [
          `everything keeps running until Ctrl-C, the simulator's clock still ${1 / timeScale}x fast (EU validation in seconds). From another terminal:`,
          `  export DATABASE_URL='${postgres.url}' TEMPORAL_ADDRESS=${temporal.address}`,
          '  npx ddsync refresh --wait',
          `  DDSYNC_READER_URL='${biUrl}' npx ddsync status`,
          `  ${timingEnv(timing)} npx ddsync submit examples/shipments.ndjson --wait   # (its keys were sent already: use your own file)`,
          `  (the simulator's control API: ${sim.url}/_sim/state)`,
        ].join('\n'),
      );
      await interrupted;
      say('stopping everything');
    }
    return result.status === 'succeeded' ? 0 : 1;
  } catch (error) {
    if (!(error instanceof Interrupted)) throw error;
    say('interrupted: stopping everything');
    return 130;
  } finally {
    for (const step of cleanup.reverse()) await step().catch(() => undefined);
  }
}

class Interrupted extends Error {}

const DEMO_ROOT = resolve('.ddsync/demo');
/** How long a demo's folder may go without a running cluster while the demo starts. */
const STARTING_MS = 10 * 60_000;

/**
 * A new folder for this demo's cluster, after removing what earlier demos left (a demo killed with
 * SIGKILL cannot clean up); a folder whose Postgres still runs belongs to a demo still running.
 */
async function freshDemoDir(): Promise<string> {
  await mkdir(DEMO_ROOT, { recursive: true });
  for (const entry of await readdir(DEMO_ROOT)) {
    const dir = resolve(DEMO_ROOT, entry);
    const pidFile = [resolve(dir, 'postmaster.pid'), resolve(dir, 'postgres', 'postmaster.pid')].find((f) =>
      existsSync(f),
    );
    const pid = pidFile ? Number((await readFile(pidFile, 'utf8')).split('\n')[0]) : NaN;
    if (Number.isInteger(pid) && pid > 0 && alive(pid)) continue;
    // Without a postmaster.pid, a young folder may be another demo's, still starting (initdb).
    if (!pidFile && Date.now() - (await stat(dir)).mtimeMs < STARTING_MS) continue;
    await rm(dir, { recursive: true, force: true });
  }
  return mkdtemp(resolve(DEMO_ROOT, 'run-'));
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
