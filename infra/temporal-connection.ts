import { readFileSync } from 'node:fs';
import { Runtime, NativeConnection, DefaultLogger, type LogLevel, type LogMetadata } from '@temporalio/worker';
import { Connection, Client } from '@temporalio/client';
import type { Config } from './config.ts';
import type { Logger } from './logger.ts';

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

export async function connectClient(config: TemporalConfig): Promise<Client> {
  const connection = await Connection.connect(connectionSettings(config));
  return new Client({ connection, namespace: config.namespace });
}

export async function connectWorker(config: TemporalConfig): Promise<NativeConnection> {
  return NativeConnection.connect(connectionSettings(config));
}

const LEVELS: Record<LogLevel, 'trace' | 'debug' | 'info' | 'warn' | 'error'> = {
  TRACE: 'trace', DEBUG: 'debug', INFO: 'info', WARN: 'warn', ERROR: 'error',
};

let installed = false;

/**
 * Routes the SDK's own logs (worker, workflow `log`, activity `log`) into our pino logger.
 * Runtime.install may run once per process, so later calls are no-ops.
 */
export function installTemporalRuntime(log: Logger): void {
  if (installed) return;
  installed = true;
  const logger = new DefaultLogger('INFO', (entry) => {
    const meta: LogMetadata = entry.meta ?? {};
    log[LEVELS[entry.level]]({ ...meta, component: 'temporal' }, entry.message);
  });
  Runtime.install({ logger });
}
