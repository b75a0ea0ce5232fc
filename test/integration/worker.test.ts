import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { randomUUID } from 'node:crypto';
import { startSimulator, type Simulator } from '../../simulator/index.ts';
import { createUpstreamClient } from '../../upstream/index.ts';
import { openWarehouse, type Warehouse } from '../../warehouse/database.ts';
import { createDdsyncWorker } from '../../infra/worker.ts';
import { createLogger } from '../../platform/logger.ts';
import { healthCheckWorkflowId } from '../../workflows/health-check.ts';
import { createTestDatabase } from '../support/databases.ts';
import { connectTemporal, workflowBundle, type TemporalForTest } from '../support/temporal.ts';

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
      temporal.client.workflow.execute('healthCheck', { taskQueue: temporal.taskQueue, workflowId: healthCheckWorkflowId(randomUUID()) }),
    );
    expect(report.warehouse.serverVersion).toMatch(/^\d+/);
    expect(report.warehouse.database).toMatch(/^worker_/);
    expect(report.upstream.suppliers).toBe(sim.control.suppliers().length);
    expect(report.upstream.suppliers).toBe(4);
  });
});
