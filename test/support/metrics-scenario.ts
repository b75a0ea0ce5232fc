import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { inject } from 'vitest';
import { startSimulator, type Simulator } from '../../simulator/index.ts';
import { openWarehouse, type Warehouse } from '../../warehouse/database.ts';
import { createTestDatabase } from './databases.ts';
import { ddsyncEnv, runDdsync, stopProcess, type RunningCommand } from './processes.ts';
import { shipmentRow } from './shipments.ts';

/**
 * A real `ddsync worker` serving its metrics (DDSYNC_METRICS_ADDRESS, port 0) with the receiver inside
 * it, after real work: a refresh, a submission followed to its answers, and webhook deliveries the
 * receiver refuses. What a Prometheus would scrape then, and the warehouse to compare it with.
 */
export interface MetricsScenario {
  sim: Simulator;
  db: Warehouse;
  worker: RunningCommand;
  metricsUrl: string;
  receiverUrl: string;
  scrape(): Promise<string>;
  close(): Promise<void>;
}

/** Parses the URL the worker logs when its metrics endpoint opens. */
function loggedUrl(output: string, key: 'metrics' | 'receiver'): string {
  for (const line of output.split('\n')) {
    if (!line.startsWith('{')) continue;
    const entry = JSON.parse(line) as Record<string, unknown>;
    if (entry.msg === 'worker ready' && typeof entry[key] === 'string') return entry[key] as string;
  }
  throw new Error(`the worker did not log its ${key} URL:\n${output}`);
}

export async function metricsScenario(name: string): Promise<MetricsScenario> {
  const run = randomUUID().slice(0, 8);
  const sim = await startSimulator({
    port: 0,
    suppliers: 3,
    plots: 120,
    timeScale: 0.001,
    transactionErrorRatio: 0.3,
    seed: 21,
  });
  const databaseUrl = await createTestDatabase(name);
  const env = ddsyncEnv(
    { upstreamUrl: sim.url, databaseUrl, taskQueue: `${name}-${run}` },
    {
      DDSYNC_METRICS_ADDRESS: '127.0.0.1:0',
      DDSYNC_RECEIVER_IN_WORKER: 'true',
      DDSYNC_RECEIVER_PORT: '0',
      DDSYNC_TX_FIRST_POLL: '100ms',
      DDSYNC_TX_MAX_POLL: '1s',
      DDSYNC_TX_EU_WAIT: '1800ms',
      DDSYNC_TX_DEADLINE: '2m',
      DDSYNC_TX_CREATE_SETTLE: '300ms',
    },
  );
  const worker = runDdsync(['worker'], env);
  const db = openWarehouse(databaseUrl, 2);
  // Made in a hook, not a test, so removed by close() rather than by scratchDir's end of test.
  const dir = mkdtempSync(join(inject('scratchDir'), `${name}-`));
  const close = async () => {
    rmSync(dir, { recursive: true, force: true });
    await stopProcess(worker);
    await db.destroy();
    await sim.close();
  };
  try {
    await worker.waitFor(/worker ready/, 90_000);
    const metricsUrl = loggedUrl(worker.output(), 'metrics');
    const receiverUrl = loggedUrl(worker.output(), 'receiver');
    const refresh = runDdsync(['refresh', '--wait'], env);
    if ((await refresh.exited) !== 0) throw new Error(`the refresh failed:\n${refresh.output()}`);
    const supplier = sim.control.suppliers()[0]!.id;
    const file = join(dir, 'shipments.ndjson');
    const rows = Array.from({ length: 8 }, (_, i) => shipmentRow(`metrics-${run}-${i}`, supplier));
    rows.push(shipmentRow(`metrics-${run}-bad`, supplier, { activityType: 'BUY' }));
    writeFileSync(file, rows.map((r) => JSON.stringify(r)).join('\n'));
    const submit = runDdsync(['submit', file, '--wait'], env);
    // 1: a row was refused before sending, or the EU system answered ERROR: both are part of the scenario.
    const code = await submit.exited;
    if (code !== 0 && code !== 1) throw new Error(`the submission failed:\n${submit.output()}`);
    // Deliveries the receiver must refuse: one unsigned, one signed for a webhook ddsync does not manage.
    await fetch(`${receiverUrl}/hooks/nobody`, { method: 'POST', body: '{}' });
    await fetch(`${receiverUrl}/hooks/nobody`, {
      method: 'POST',
      body: '{}',
      headers: {
        'svix-id': 'msg_1',
        'svix-timestamp': String(Math.floor(Date.now() / 1000)),
        'svix-signature': 'v1,AAAA',
      },
    });
    return {
      sim,
      db,
      worker,
      metricsUrl,
      receiverUrl,
      scrape: async () => {
        const res = await fetch(metricsUrl);
        if (res.status !== 200) throw new Error(`GET ${metricsUrl}: ${res.status}`);
        return res.text();
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
