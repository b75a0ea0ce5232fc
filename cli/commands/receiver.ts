import { loadConfig } from '../../platform/config.ts';
import { createLogger } from '../../platform/logger.ts';
import { connectClient } from '../../infra/temporal-connection.ts';
import { startReceiver } from '../../infra/receiver.ts';
import { connectWarehouse } from '../../infra/warehouse-connection.ts';
import { migrateToLatest } from '../../warehouse/migrate.ts';
import { createUpstreamFromConfig } from '../upstream.ts';
import { prepareProcessMetrics, serveProcessMetrics } from '../../infra/process-metrics.ts';
import { Outage } from '../../platform/outage.ts';
import { stopSignal, untilAvailable } from '../../infra/dependency-wait.ts';
import { watchSilence } from '../../warehouse/database.ts';

export async function run(): Promise<number> {
  const config = loadConfig(['upstream', 'database', 'temporal', 'webhooks', 'monitoring', 'logging']);
  const log = createLogger({ level: config.logging!.level, format: config.logging!.format });
  // Started while the warehouse or Temporal is away: wait for them (infra/dependency-wait.ts).
  const waiting = stopSignal();
  const db = await untilAvailable(() => connectWarehouse(config.database!, 4, 'ddsync-receiver'), {
    name: 'the warehouse',
    log,
    signal: waiting.signal,
  });
  await migrateToLatest(db);
  const temporal = await untilAvailable(() => connectClient(config.temporal!), {
    name: 'Temporal',
    log,
    signal: waiting.signal,
  });
  waiting.done();
  const metricsAddress = config.monitoring!.metricsAddress;
  const metrics = await prepareProcessMetrics(metricsAddress, false);
  const api = createUpstreamFromConfig(config.upstream!, log, metrics?.metrics.upstreamObserver());
  const warehouseOutage = new Outage({ name: 'the warehouse', log });
  watchSilence(db, {
    silent: (reason) =>
      warehouseOutage.failed(reason, 'deliveries are refused with 503 and the service sends them again'),
    answering: () => warehouseOutage.recovered(),
  });
  const { host, port, maxBodyBytes } = config.webhooks!.receiver;
  // A warehouse no wait can mend stops the receiver, loudly (deliveries meanwhile get 503, never lost).
  let fatal: string | undefined;
  let stop!: () => void;
  const stopped = new Promise<void>((resolve) => {
    stop = resolve;
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  const receiver = await startReceiver({
    db,
    api,
    temporal,
    log,
    host,
    port,
    maxBodyBytes,
    warehouseOutage,
    ...(metrics ? { onDelivery: metrics.onDelivery } : {}),
    onWarehouseFatal: (reason) => {
      if (fatal) return;
      fatal = reason;
      // A moment for the answers under way (503) to go out before the connections close.
      setTimeout(stop, 1_000).unref();
    },
  });
  const metricsServer =
    metrics && metricsAddress
      ? await serveProcessMetrics(metrics, { address: metricsAddress, log, db, warehouseOutage })
      : undefined;
  process.stdout.write(
    `webhook receiver listening on ${receiver.url} (deliveries to ${receiver.url}/hooks/<webhook name>)\n`,
  );
  await stopped;
  await receiver.close();
  await metricsServer?.close();
  await temporal.connection.close();
  await db.destroy();
  if (fatal) {
    process.stderr.write(`ddsync receiver: the warehouse cannot be used: ${fatal}\n`);
    return 1;
  }
  log.info('webhook receiver stopped');
  return 0;
}
