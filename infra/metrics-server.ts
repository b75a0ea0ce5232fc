import { createServer, type Server } from 'node:http';
import type { Logger } from '../platform/logger.ts';
import type { DdsyncMetrics } from '../platform/metrics.ts';

/**
 * The process's /metrics endpoint (DDSYNC_METRICS_ADDRESS): ddsync's metrics, then the Temporal core's
 * own worker metrics, which its native exporter serves on a loopback port only this endpoint reads.
 * One address to scrape per process. A scrape never fails because a part is missing: the core's part
 * is left out (and said once in the log) when it cannot be read, the warehouse's figures likewise
 * (`ddsync_warehouse_figures_up 0`).
 */
export interface MetricsServerOptions {
  metrics: DdsyncMetrics;
  /** host:port to listen on; port 0 takes any free port (the URL says which). */
  address: string;
  log: Logger;
  /** The Temporal core's exporter (http://127.0.0.1:PORT/metrics), in a worker. */
  coreMetricsUrl?: string;
}

export interface RunningMetricsServer {
  /** http://host:port/metrics */
  url: string;
  close(): Promise<void>;
}

const CORE_READ_TIMEOUT_MS = 5_000;

export function splitAddress(address: string): { host: string; port: number } {
  const at = address.lastIndexOf(':');
  return { host: address.slice(0, at), port: Number(address.slice(at + 1)) };
}

export async function startMetricsServer(o: MetricsServerOptions): Promise<RunningMetricsServer> {
  let coreUnreadable = false;
  const coreText = async (): Promise<string> => {
    if (!o.coreMetricsUrl) return '';
    try {
      const res = await fetch(o.coreMetricsUrl, { signal: AbortSignal.timeout(CORE_READ_TIMEOUT_MS) });
      if (!res.ok) throw new Error(`status ${res.status}`);
      const text = await res.text();
      if (coreUnreadable) o.log.info('the Temporal core metrics can be read again');
      coreUnreadable = false;
      return text;
    } catch (error) {
      if (!coreUnreadable)
        o.log.warn({ err: error }, 'the Temporal core metrics cannot be read; /metrics serves ddsync metrics only');
      coreUnreadable = true;
      return '';
    }
  };
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain' }).end('method not allowed\n');
      return;
    }
    if (path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: metrics are at /metrics\n');
      return;
    }
    void Promise.all([o.metrics.text(), coreText()]).then(
      ([own, core]) => {
        const body = core ? `${own.trimEnd()}\n${core.trimEnd()}\n` : own;
        res.writeHead(200, { 'content-type': o.metrics.contentType });
        res.end(req.method === 'HEAD' ? undefined : body);
      },
      (error: unknown) => {
        o.log.warn({ err: error }, 'metrics could not be gathered');
        res.writeHead(500, { 'content-type': 'text/plain' }).end('metrics could not be gathered\n');
      },
    );
  });
  const { host, port } = splitAddress(o.address);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  // Idle scrapers' keep-alive connections must not hold the process open at shutdown.
  server.keepAliveTimeout = 5_000;
  const bound = server.address();
  const boundPort = bound && typeof bound === 'object' ? bound.port : port;
  const shownHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return {
    url: `http://${shownHost.includes(':') ? `[${shownHost}]` : shownHost}:${boundPort}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
