import { DdsyncMetrics } from '../platform/metrics.ts';
import type { Logger } from '../platform/logger.ts';
import type { Outage } from '../platform/outage.ts';
import { warehouseFor, type Warehouse } from '../warehouse/database.ts';
import { readWarehouseFigures } from '../warehouse/metrics-figures.ts';
import { freePort } from './ports.ts';
import { startMetricsServer, type RunningMetricsServer } from './metrics-server.ts';
import type { DeliveryReason } from './receiver.ts';

/**
 * A process's metrics, assembled in two steps because the Temporal runtime and the upstream client
 * must know of them before they are made, and the endpoint can only open once the warehouse is there.
 */
export interface ProcessMetrics {
  metrics: DdsyncMetrics;
  /** Where the Temporal core's exporter is to listen (a worker installs its runtime with it). */
  coreBindAddress: string | undefined;
  /** For the receiver: counts each delivery answered. */
  onDelivery(outcome: 'accepted' | 'rejected', reason: DeliveryReason): void;
}

/** DDSYNC_METRICS_ADDRESS unset: no metrics at all (undefined). `withCore`: a worker, whose core has metrics. */
export async function prepareProcessMetrics(
  address: string | undefined,
  withCore: boolean,
): Promise<ProcessMetrics | undefined> {
  if (!address) return undefined;
  const metrics = new DdsyncMetrics();
  return {
    metrics,
    coreBindAddress: withCore ? `127.0.0.1:${await freePort()}` : undefined,
    onDelivery: (outcome, reason) => metrics.webhookDeliveries.inc({ outcome, reason }),
  };
}

export interface ServeOptions {
  address: string;
  log: Logger;
  db: Warehouse;
  warehouseOutage: Outage;
  temporalOutage?: { readonly down: boolean } | undefined;
}

/** Opens the endpoint: the warehouse's figures read at scrape, the dependencies' state, the core's metrics. */
export async function serveProcessMetrics(p: ProcessMetrics, o: ServeOptions): Promise<RunningMetricsServer> {
  // On the pool of short bounds: a scrape never waits minutes on a frozen server.
  p.metrics.readWarehouse(() => readWarehouseFigures(warehouseFor(o.db, 'read')));
  p.metrics.watchDependency('warehouse', () => !o.warehouseOutage.down);
  const temporal = o.temporalOutage;
  if (temporal) p.metrics.watchDependency('temporal', () => !temporal.down);
  try {
    const server = await startMetricsServer({
      metrics: p.metrics,
      address: o.address,
      log: o.log,
      ...(p.coreBindAddress ? { coreMetricsUrl: `http://${p.coreBindAddress}/metrics` } : {}),
    });
    o.log.info({ url: server.url }, `metrics served at ${server.url}`);
    return server;
  } catch (error) {
    const code = (error as { code?: string }).code;
    throw new Error(
      `DDSYNC_METRICS_ADDRESS ${o.address} cannot be listened on (${code ?? (error as Error).message}): choose a free host:port`,
    );
  }
}
