import { describe, it, expect } from 'vitest';
import { runDdsync, processesMentioning, lastJsonLine } from '../support/processes.ts';
import { resolve } from 'node:path';

describe('ddsync demo', () => {
  it('runs the whole product on the embedded stack and prints what landed; everything stops afterwards', async () => {
    const run = runDdsync(['demo', '--suppliers', '3', '--plots', '800', '--json'], { ...process.env, DDSYNC_LOG_FORMAT: 'json' });
    const code = await run.exited;
    const out = run.output();
    expect(code, out).toBe(0);
    const result = lastJsonLine(out);
    expect(result).toMatchObject({ plots: 800, plotsAtSource: 800, suppliers: 3, status: 'succeeded', runId: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    expect(result['analyses']).toBeGreaterThan(800);
    expect(result['seconds']).toBeGreaterThan(0);
    expect(result['psql']).toMatch(/^postgres:\/\/ddsync_bi:ddsync-bi@127\.0\.0\.1:\d+\/ddsync$/);
    // No Postgres or Temporal left behind.
    expect(processesMentioning(resolve('.ddsync/demo/postgres'))).toEqual([]);
  }, 180_000);

  it('refuses a bad flag with the rule, exit code 2', async () => {
    const run = runDdsync(['demo', '--plots', 'many'], process.env);
    expect(await run.exited).toBe(2);
    expect(run.output()).toContain('--plots must be a whole number from 10 to 1000000, got "many"');
  });
});
