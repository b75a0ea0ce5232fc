import { embeddedStack } from './stack.ts';
import { randomUUID } from 'node:crypto';
import { bundleWorkflowCode, NativeConnection } from '@temporalio/worker';
import { Client, Connection } from '@temporalio/client';
import { WORKFLOWS_PATH } from '../../infra/worker.ts';
import { installTemporalRuntime } from '../../infra/temporal-connection.ts';
import { createLogger } from '../../platform/logger.ts';

let bundle: Promise<{ code: string }> | undefined;

/** The workflow bundle, built once per test process and shared by every Worker in it. */
export function workflowBundle(): Promise<{ code: string }> {
  return (bundle ??= bundleWorkflowCode({
    workflowsPath: WORKFLOWS_PATH,
    logger: { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} } as never,
  }));
}

export interface TemporalForTest {
  client: Client;
  workerConnection: NativeConnection;
  namespace: string;
  /** A task queue nobody else polls, so tests never steal each other's tasks. */
  taskQueue: string;
  close(): Promise<void>;
}

export async function connectTemporal(): Promise<TemporalForTest> {
  // The runtime must be installed before the first native connection creates a default one.
  installTemporalRuntime(createLogger({ level: 'warn', format: 'json' }));
  const address = embeddedStack().temporalAddress;
  const namespace = embeddedStack().temporalNamespace;
  const connection = await Connection.connect({ address });
  const workerConnection = await NativeConnection.connect({ address });
  return {
    client: new Client({ connection, namespace }),
    workerConnection,
    namespace,
    taskQueue: `test-${randomUUID()}`,
    async close() {
      await connection.close();
      await workerConnection.close();
    },
  };
}
