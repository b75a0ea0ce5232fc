import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode } from '@temporalio/worker';
import { startSimulator, type Simulator } from '../../simulator/index.ts';
import { createUpstreamClient, ForbiddenError } from '../../upstream/index.ts';
import { openWarehouse, type Warehouse } from '../../warehouse/database.ts';
import { createDdsyncWorker } from '../../infra/worker.ts';
import type { ActivityDeps } from '../../activities/index.ts';
import { createLogger } from '../../platform/logger.ts';
import { healthCheckWorkflowId } from '../../workflows/health-check.ts';
import { createTestDatabase } from '../support/databases.ts';
import { connectTemporal, workflowBundle, type TemporalForTest } from '../support/temporal.ts';
import type { probeUpstream } from '../support/probe-workflows.ts';

describe('worker skeleton', () => {
  let sim: Simulator;
  let db: Warehouse;
  let temporal: TemporalForTest;

  beforeAll(async () => {
    sim = await startSimulator({ port: 0, suppliers: 4, plots: 200 });
    db = openWarehouse(await createTestDatabase('worker'), 4);
    temporal = await connectTemporal();
  });
  afterAll(async () => {
    await temporal?.close();
    await db?.destroy();
    await sim?.close();
  });

  it('runs a workflow whose activities reach Postgres and the service through Temporal', async () => {
    const api = createUpstreamClient({ baseUrl: sim.url, clientId: 'ddsync-demo', clientSecret: 'ddsync-demo-secret' });
    const worker = await createDdsyncWorker({
      connection: temporal.workerConnection,
      namespace: temporal.namespace,
      taskQueue: temporal.taskQueue,
      deps: { db, api, log: createLogger({ level: 'silent' }) },
      workflowBundle: await workflowBundle(),
    });
    const report = await worker.runUntil(
      temporal.client.workflow.execute('healthCheck', {
        taskQueue: temporal.taskQueue,
        workflowId: healthCheckWorkflowId(randomUUID()),
      }),
    );
    expect(report.warehouse.serverVersion).toMatch(/^\d+/);
    expect(report.warehouse.database).toMatch(/^worker_/);
    expect(report.upstream.suppliers).toBe(sim.control.suppliers().length);
    expect(report.upstream.suppliers).toBe(4);
  });

  it('treats every activity with its interceptors, one no factory wraps and local activities included: a refusal is not retried', async () => {
    let calls = 0;
    // checkUpstream (activities/health.ts) is a plain function: only the worker's interceptors map its error.
    const api = {
      async listSuppliers() {
        calls++;
        throw new ForbiddenError({ endpoint: 'GET /businesses/{businessId}/suppliers', status: 403 });
      },
    } as unknown as ActivityDeps['api'];
    const taskQueue = `${temporal.taskQueue}-probe`;
    const worker = await createDdsyncWorker({
      connection: temporal.workerConnection,
      namespace: temporal.namespace,
      taskQueue,
      deps: { db, api, log: createLogger({ level: 'silent' }) },
      workflowBundle: await bundleWorkflowCode({
        workflowsPath: fileURLToPath(new URL('../support/probe-workflows.ts', import.meta.url)),
        logger: { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} } as never,
      }),
    });
    const probe = (how: 'remote' | 'local') =>
      temporal.client.workflow.execute<typeof probeUpstream>('probeUpstream', {
        taskQueue,
        workflowId: `probe/${how}/${randomUUID()}`,
        args: [how],
      });
    const failures = await worker.runUntil(Promise.all([probe('remote'), probe('local')]));
    for (const failure of failures) {
      expect(failure).toEqual({
        type: 'ForbiddenError',
        nonRetryable: true,
        message: 'GET /businesses/{businessId}/suppliers: 403 forbidden',
        details: [{ status: 403, endpoint: 'GET /businesses/{businessId}/suppliers' }],
      });
    }
    // One attempt each, of the three their retry policy allows.
    expect(calls).toBe(2);
  });
});
