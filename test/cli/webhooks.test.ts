import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { randomUUID } from 'node:crypto';
import { startSimulator, type Simulator } from '../../simulator/index.ts';
import { freePort } from '../../infra/ports.ts';
import { createTestDatabase } from '../support/databases.ts';
import {
  ddsyncEnv,
  runDdsync,
  startWorkerProcess,
  stopProcess,
  type RunningCommand,
  lastJsonLine,
} from '../support/processes.ts';
import { waitUntil } from '../support/wait.ts';
import { sample } from '../support/exposition.ts';

describe('ddsync webhooks and ddsync receiver', () => {
  let sim: Simulator;
  let env: NodeJS.ProcessEnv;
  let worker: RunningCommand;
  let receiverPort: number;

  beforeAll(async () => {
    receiverPort = await freePort();
    sim = await startSimulator({
      port: 0,
      suppliers: 2,
      plots: 20,
      resolve: { 'hooks.ddsync.test': `127.0.0.1:${receiverPort}` },
    });
    env = ddsyncEnv(
      {
        upstreamUrl: sim.url,
        databaseUrl: await createTestDatabase('cliwebhooks'),
        taskQueue: `cli-webhooks-${randomUUID()}`,
      },
      {
        DDSYNC_WEBHOOKS: JSON.stringify([
          { name: 'main', url: 'https://hooks.ddsync.test/hooks/main', description: 'from the CLI test' },
        ]),
        DDSYNC_RECEIVER_PORT: String(receiverPort),
      },
    );
    worker = await startWorkerProcess(env);
  }, 120_000);
  afterAll(async () => {
    await stopProcess(worker);
    await sim?.close();
  });

  it('reconciles, lists, and sends an example that the receiver accepts', async () => {
    const reconcile = runDdsync(['webhooks', 'reconcile'], env);
    expect(await reconcile.exited).toBe(0);
    expect(reconcile.output()).toMatch(/create {4}main/);

    const list = runDdsync(['webhooks', 'list', '--json'], env);
    expect(await list.exited).toBe(0);
    const hooks = lastJsonLine<Array<{ managedName: string | null; url: string }>>(list.output());
    expect(hooks).toEqual([
      expect.objectContaining({ managedName: 'main', url: 'https://hooks.ddsync.test/hooks/main' }),
    ]);

    const metricsPort = await freePort();
    const receiver = runDdsync(['receiver'], { ...env, DDSYNC_METRICS_ADDRESS: `127.0.0.1:${metricsPort}` });
    try {
      await receiver.waitFor(/webhook receiver listening on http:\/\/127\.0\.0\.1:\d+/, 30_000);
      expect((await fetch(`http://127.0.0.1:${receiverPort}/healthz`)).status).toBe(200);
      const send = runDdsync(['webhooks', 'send-example', 'transaction.updated', '--json'], env);
      expect(await send.exited).toBe(0);
      const [sent] = lastJsonLine<Array<{ messageId: string }>>(send.output());
      const hookId = sim.control.webhooks()[0]!['id'] as string;
      // The receiver answered 2xx: the service records a successful attempt.
      await waitUntil('the example delivered', () =>
        sim.control.attempts(hookId).some((a) => a.msgId === sent!.messageId && a.status === 'SUCCESS'),
      );
      // Its metrics say so: the delivery accepted, and the warehouse's figures beside (no Temporal worker's).
      const scraped = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      expect(sample(scraped, 'ddsync_webhook_deliveries_total', { outcome: 'accepted', reason: 'new' })).toBe(1);
      expect(sample(scraped, 'ddsync_warehouse_figures_up')).toBe(1);
      expect(scraped).not.toMatch(/^temporal_/m);
      const unknown = runDdsync(['webhooks', 'send-example', 'plot.created'], env);
      expect(await unknown.exited).toBe(2);
      expect(unknown.output()).toContain('unknown event "plot.created": the service sends transaction.updated');
    } finally {
      receiver.child.kill('SIGTERM');
      expect(await receiver.exited).toBe(0);
    }
  }, 120_000);

  it('runs the receiver inside the worker when asked', async () => {
    const port = await freePort();
    const inWorker = runDdsync(['worker'], {
      ...env,
      DDSYNC_RECEIVER_IN_WORKER: 'true',
      DDSYNC_RECEIVER_PORT: String(port),
      TEMPORAL_TASK_QUEUE: `cli-webhooks-inworker-${randomUUID()}`,
    });
    try {
      await inWorker.waitFor(/worker ready/, 90_000);
      expect(inWorker.output()).toContain(`http://127.0.0.1:${port}`);
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    } finally {
      inWorker.child.kill('SIGINT');
      expect(await inWorker.exited).toBe(0);
    }
  }, 120_000);
});
