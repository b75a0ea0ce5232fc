import { readFileSync } from 'node:fs';
import { Runtime, NativeConnection, DefaultLogger, type LogLevel, type LogMetadata } from '@temporalio/worker';
import { Connection, Client } from '@temporalio/client';
import type { Config } from '../platform/config.ts';
import type { Logger } from '../platform/logger.ts';
import { ConnectionFailedError, networkReason, temporalEndpoint, type Endpoint } from './connection-failure.ts';
import { isConnectivityNoise, TemporalOutage } from './temporal-outages.ts';
import { tcpConnect } from './tcp-connect.ts';

type TemporalConfig = NonNullable<Config['temporal']>;

/** TLS and API-key settings shared by the client and the worker connection (Temporal Cloud or self-hosted). */
function connectionSettings(config: TemporalConfig) {
  const tls = config.tls
    ? config.tlsCertPath && config.tlsKeyPath
      ? { clientCertPair: { crt: readFileSync(config.tlsCertPath), key: readFileSync(config.tlsKeyPath) } }
      : true
    : false;
  return { address: config.address, tls, ...(config.apiKey ? { apiKey: config.apiKey } : {}) };
}

/** The SDK's default, made explicit so that the message can say how long it waited. */
const CONNECT_TIMEOUT_MS = 10_000;

/**
 * A TCP connect first: nothing listening refuses it at once, where gRPC would retry until its deadline
 * and then say only "Failed to connect before the deadline". Skipped behind a proxy, which gRPC uses
 * and a direct connect would not.
 */
async function probe(address: string, endpoint: Endpoint): Promise<void> {
  if (['grpc_proxy', 'https_proxy', 'http_proxy'].some((name) => process.env[name] ?? process.env[name.toUpperCase()]))
    return;
  await tcpConnect(address, CONNECT_TIMEOUT_MS).catch((error: unknown) => {
    throw new ConnectionFailedError(endpoint, networkReason(error), false, error);
  });
}

/** A failed gRPC connect, in the words of connection-failure.ts. */
function connectFailure(endpoint: Endpoint, error: unknown): ConnectionFailedError {
  const message = error instanceof Error ? error.message : String(error);
  // gRPC codes 16 and 7: the server answered and refused the credentials (an API key, a client certificate).
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 16 || code === 7) return new ConnectionFailedError(endpoint, message, true, error);
  const reason = /before the deadline/i.test(message)
    ? `no connection within ${CONNECT_TIMEOUT_MS / 1000} s`
    : networkReason(error);
  return new ConnectionFailedError(endpoint, reason, false, error);
}

export async function connectClient(config: TemporalConfig): Promise<Client> {
  const endpoint = temporalEndpoint(config.address, config.namespace);
  await probe(config.address, endpoint);
  const connection = await Connection.connect({
    ...connectionSettings(config),
    connectTimeout: CONNECT_TIMEOUT_MS,
  }).catch((error: unknown) => {
    throw connectFailure(endpoint, error);
  });
  return new Client({ connection, namespace: config.namespace });
}

export async function connectWorker(config: TemporalConfig): Promise<NativeConnection> {
  const endpoint = temporalEndpoint(config.address, config.namespace);
  await probe(config.address, endpoint);
  return NativeConnection.connect(connectionSettings(config)).catch((error: unknown) => {
    throw connectFailure(endpoint, error);
  });
}

const LEVELS: Record<LogLevel, 'trace' | 'debug' | 'info' | 'warn' | 'error'> = {
  TRACE: 'trace',
  DEBUG: 'debug',
  INFO: 'info',
  WARN: 'warn',
  ERROR: 'error',
};

let installed = false;
let installedOutage: TemporalOutage | undefined;

/**
 * Routes the SDK's own logs (worker, workflow `log`, activity `log`, and the native core's warnings
 * such as TMPRL1104) into our pino logger. Runtime.install may run once per process, so later calls are no-ops.
 * Given the server's `address` (a worker), the core's lines that only repeat that the server cannot be
 * reached (every failed poll and completion while it is away) become one line per outage
 * (TemporalOutage); at debug level they are still written. Given `metricsBindAddress`, the core serves
 * its Prometheus metrics there.
 */
export function installTemporalRuntime(
  log: Logger,
  address?: string,
  metricsBindAddress?: string,
): TemporalOutage | undefined {
  if (installed) return installedOutage;
  installed = true;
  const outage = address ? new TemporalOutage(log, address) : undefined;
  installedOutage = outage;
  const logger = new DefaultLogger('INFO', (entry) => {
    const { error, ...meta }: LogMetadata = entry.meta ?? {};
    const unreachable = outage && isConnectivityNoise(entry.message, entry.meta);
    if (unreachable || (outage?.down && entry.message.includes('TMPRL1104'))) {
      if (unreachable) outage!.failed(unreachable);
      log.debug({ ...meta, component: 'temporal' }, entry.message);
      return;
    }
    // pino writes an Error's type, message and stack only under `err`: under the SDK's `error` ("Activity failed") they were lost.
    log[LEVELS[entry.level]](
      { ...meta, ...(error !== undefined ? { err: error } : {}), component: 'temporal' },
      entry.message,
    );
  });
  // Without `forward` the native core prints its warnings and errors itself, on stdout, with colour codes.
  Runtime.install({
    logger,
    telemetryOptions: {
      logging: { forward: {}, filter: { core: 'WARN', other: 'ERROR' } },
      // The core's worker metrics (polls, task latencies, slots, sticky cache), served on a loopback port
      // that ddsync's own /metrics reads and appends (infra/metrics-server.ts), named as Prometheus wants.
      ...(metricsBindAddress
        ? {
            metrics: {
              prometheus: {
                bindAddress: metricsBindAddress,
                countersTotalSuffix: true,
                unitSuffix: true,
                useSecondsForDurations: true,
              },
            },
          }
        : {}),
    },
  });
  return outage;
}
