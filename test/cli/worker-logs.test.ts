import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { randomUUID } from 'node:crypto';
import { startSimulator, type Simulator } from '../../simulator/index.ts';
import { createTestDatabase } from '../support/databases.ts';
import { ddsyncEnv, runDdsync, startWorkerProcess, stopProcess } from '../support/processes.ts';

describe("the Temporal SDK's own warnings", () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ port: 0, suppliers: 1, plots: 20 });
  });
  afterAll(() => sim?.close());

  it("are ddsync log lines at level warn, not the native core's coloured lines on stdout", async () => {
    // A threshold of 0 makes the core warn (TMPRL1104) about every workflow task, so the refresh below surely causes some.
    const env = ddsyncEnv(
      { upstreamUrl: sim.url, databaseUrl: await createTestDatabase('clilogs'), taskQueue: `cli-logs-${randomUUID()}` },
      { TEMPORAL_WORKFLOW_TASK_DURATION_WARN_SECONDS: '0' },
    );
    const worker = await startWorkerProcess(env);
    try {
      const refresh = runDdsync(['refresh', '--wait', '--json'], env);
      expect(await refresh.exited, refresh.output()).toBe(0);
    } finally {
      expect(await stopProcess(worker)).toBe(0);
    }
    const lines = worker.output().trim().split('\n');
    // Every line is one JSON object (nothing printed past the logger, no colour codes) ...
    expect(lines.filter((line) => !line.startsWith('{'))).toEqual([]);
    // ... and the core's warnings are among them, at pino's warn level (40).
    const warnings = lines
      .map((line) => JSON.parse(line) as { level: number; msg: string; component?: string })
      .filter((l) => l.msg.includes('[TMPRL1104]'));
    expect(warnings.length).toBeGreaterThan(0);
    expect(warnings.every((w) => w.level === 40 && w.component === 'temporal')).toBe(true);
  }, 120_000);
});
