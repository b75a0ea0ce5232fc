import { durationMs, loadConfig } from '../../platform/config.ts';
import { createLogger } from '../../platform/logger.ts';
import { connectWorker, installTemporalRuntime } from '../../infra/temporal-connection.ts';
import { createDdsyncWorker } from '../../infra/worker.ts';
import { WORKFLOW_THREAD_SEMI_SPACE_MB } from '../../infra/production.ts';
import { connectWarehouse } from '../../infra/warehouse-connection.ts';
import { stopSignal, untilAvailable } from '../../infra/dependency-wait.ts';
import { watchSilence } from '../../warehouse/database.ts';
import { migrateToLatest } from '../../warehouse/migrate.ts';
import { createUpstreamFromConfig } from '../upstream.ts';
import { connectClient } from '../../infra/temporal-connection.ts';
import type { RunningReceiver } from '../../infra/receiver.ts';
import type { Config } from '../../platform/config.ts';
import { Client } from '@temporalio/client';
import { Outage } from '../../platform/outage.ts';
import { closeAbandonedRuns } from '../../infra/abandoned-runs.ts';
import { failRunningRuns } from '../../warehouse/refresh/run-ledger.ts';
import type { Logger } from '../../platform/logger.ts';
import type { Warehouse } from '../../warehouse/database.ts';
import { prepareProcessMetrics, serveProcessMetrics, type ProcessMetrics } from '../../infra/process-metrics.ts';
import { CredentialsRefusedError, UpstreamError, type UpstreamClient } from '../../upstream/index.ts';

/** How long a worker that met a fatal warehouse error goes on, so its workflows can record it. */
const FATAL_GRACE_MS = 10_000;

/** DDSYNC_RECEIVER_IN_WORKER: the webhook receiver in this process (its own Temporal client to signal). */
async function startReceiverInWorker(
  config: Config,
  db: Warehouse,
  api: UpstreamClient,
  log: Logger,
  onWarehouseFatal: (reason: string) => void,
  warehouseOutage: Outage,
  metrics: ProcessMetrics | undefined,
): Promise<RunningReceiver & { close(): Promise<void> }> {
  // Imported only here: the receiver's HTTP server and signature checks (hono, svix: 300 modules) are
  // memory a worker without DDSYNC_RECEIVER_IN_WORKER would keep for nothing.
  const { startReceiver } = await import('../../infra/receiver.ts');
  const client = await connectClient(config.temporal!);
  const { host, port, maxBodyBytes } = config.webhooks!.receiver;
  const receiver = await startReceiver({
    db,
    api,
    temporal: client,
    log,
    host,
    port,
    maxBodyBytes,
    onWarehouseFatal,
    warehouseOutage,
    ...(metrics ? { onDelivery: metrics.onDelivery } : {}),
  });
  return {
    ...receiver,
    close: async () => {
      await receiver.close();
      await client.connection.close();
    },
  };
}

/**
 * Credentials the service refuses are a configuration error: fail now, in one line, not at the first
 * activity. A service that cannot be reached now (network, 5xx) is not: its calls are retried, and a
 * worker that refused to start would hold up everything else it runs.
 */
async function checkUpstream(api: UpstreamClient, log: Logger): Promise<void> {
  try {
    await api.authenticate();
    log.info('the service accepts the credentials');
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (error instanceof CredentialsRefusedError) {
      const said = error.serviceMessage ? ` (${error.status}: ${error.serviceMessage})` : ` (${error.status})`;
      throw new Error(
        `the service at DDSYNC_UPSTREAM_URL refuses DDSYNC_CLIENT_ID / DDSYNC_CLIENT_SECRET${said}: correct them and start the worker again`,
      );
    }
    if (error instanceof UpstreamError && !error.retryable)
      throw new Error(`the service at DDSYNC_UPSTREAM_URL cannot issue a token: ${message}`);
    log.warn({ error: message }, 'the service cannot be reached now; starting anyway (its calls are retried)');
  }
}

export async function run(o: { bundle?: string }): Promise<number> {
  const config = loadConfig([
    'upstream',
    'database',
    'temporal',
    'worker',
    'refresh',
    'webhooks',
    'pdfs',
    'monitoring',
    'logging',
  ]);
  const log = createLogger({ level: config.logging!.level, format: config.logging!.format });
  const metricsAddress = config.monitoring!.metricsAddress;
  const metrics = await prepareProcessMetrics(metricsAddress, true);
  metrics?.metrics.setRefreshInterval(durationMs(config.refresh!.interval) / 1000);
  const temporalOutage = installTemporalRuntime(log, config.temporal!.address, metrics?.coreBindAddress);

  // Started while the warehouse or Temporal is away (a boot order, a restart of theirs): wait for them.
  const stop = stopSignal();
  const db = await untilAvailable(
    () => connectWarehouse(config.database!, config.database!.poolSize, 'ddsync-worker'),
    { name: 'the warehouse', log, signal: stop.signal },
  );
  // Every worker migrates on start; the migrator's advisory lock makes concurrent starts safe.
  const migrated = await migrateToLatest(db);
  if (migrated.applied.length > 0) log.info({ applied: migrated.applied }, 'warehouse migrated');
  const api = createUpstreamFromConfig(config.upstream!, log, metrics?.metrics.upstreamObserver());
  await checkUpstream(api, log);
  const temporal = config.temporal!;
  const connection = await untilAvailable(() => connectWorker(temporal), {
    name: 'Temporal',
    log,
    signal: stop.signal,
  });
  stop.done();
  // A warehouse no wait can mend (credentials refused, its schema broken by another tool): the worker
  // stops, loudly, rather than fail every activity for ever. It keeps running a little first, so the
  // workflows whose activity failed record the reason on their run (sync_runs, the batch).
  // One record of warehouse outages for the activities and an in-process receiver: one line per outage.
  const warehouseOutage = new Outage({ name: 'the warehouse', log });
  // A server frozen whole fails no statement until its bound: said within seconds, as any outage.
  watchSilence(db, {
    silent: (reason) => warehouseOutage.failed(reason, 'activities wait for it and run again'),
    answering: () => warehouseOutage.recovered(),
  });
  let fatal: string | undefined;
  // Only the runs this worker was working for: others may be in healthy workers' hands.
  const runsHit = new Set<string>();
  const onWarehouseFatal = (reason: string, runId: string | undefined) => {
    if (runId) runsHit.add(runId);
    if (fatal) return;
    fatal = reason;
    log.error({ reason }, `the warehouse cannot be used: ${reason}; the worker stops in ${FATAL_GRACE_MS / 1000} s`);
    setTimeout(() => {
      // What the workflows could not record themselves meanwhile: no run stays `running` behind a dead worker.
      void failRunningRuns(db, `the worker stopped: the warehouse cannot be used: ${reason}`, [...runsHit])
        .catch(() => undefined)
        .finally(() => worker.shutdown());
    }, FATAL_GRACE_MS).unref();
  };
  const worker = await createDdsyncWorker({
    connection,
    namespace: temporal.namespace,
    taskQueue: temporal.taskQueue,
    onWarehouseFatal,
    warehouseOutage,
    deps: { db, api, log, pdfArchiveDir: config.pdfs!.archiveDir },
    maxConcurrentActivities: config.worker!.maxConcurrentActivities,
    cachedWorkflows: config.worker!.cachedWorkflows,
    taskQueueActivitiesPerSecond: config.worker!.taskQueueActivitiesPerSecond,
    workflowBundlePath: o.bundle,
    workflowThreadSemiSpaceMb: WORKFLOW_THREAD_SEMI_SPACE_MB,
  });
  const receiver = config.webhooks!.receiver.inWorker
    ? await startReceiverInWorker(
        config,
        db,
        api,
        log,
        (reason) => onWarehouseFatal(reason, undefined),
        warehouseOutage,
        metrics,
      )
    : undefined;
  const metricsServer =
    metrics && metricsAddress
      ? await serveProcessMetrics(metrics, { address: metricsAddress, log, db, warehouseOutage, temporalOutage })
      : undefined;
  log.info(
    {
      taskQueue: temporal.taskQueue,
      namespace: temporal.namespace,
      address: temporal.address,
      receiver: receiver?.url,
      metrics: metricsServer?.url,
    },
    'worker ready',
  );
  // Runs left `running` by a worker that died or a workflow that ended without closing them.
  void closeAbandonedRuns(db, new Client({ connection, namespace: temporal.namespace }), log).catch((error: unknown) =>
    log.warn({ err: error }, 'could not check for refresh runs left running; the next worker start does'),
  );
  // Worker.run resolves after SIGINT/SIGTERM once in-flight tasks are done (the SDK's shutdown signals).
  await worker.run();
  await receiver?.close();
  await metricsServer?.close();
  await connection.close();
  await db.destroy();
  if (fatal) {
    process.stderr.write(`ddsync worker: the warehouse cannot be used: ${fatal}\n`);
    return 1;
  }
  log.info('worker stopped');
  return 0;
}
