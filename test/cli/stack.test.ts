import { describe, it, expect } from 'vitest';
import pg from 'pg';
import { runDdsync, processesMentioning } from '../support/processes.ts';
import { scratchDir } from '../support/scratch.ts';

describe('ddsync stack', () => {
  it('starts Postgres and Temporal, and Ctrl-C stops both without orphans', async () => {
    const dir = scratchDir('stack');
    const run = runDdsync(['stack', '--dir', dir]);
    const text = await run.waitFor(/stack ready/, 90_000);
    const databaseUrl = /DATABASE_URL=(\S+)/.exec(text)![1]!;
    expect(/TEMPORAL_ADDRESS=127\.0\.0\.1:\d+/.test(text)).toBe(true);

    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    expect((await client.query('select 1 as one')).rows[0].one).toBe(1);
    await client.end();
    expect(processesMentioning(dir).length).toBeGreaterThanOrEqual(2);

    run.child.kill('SIGINT');
    await run.exited;
    expect(processesMentioning(dir)).toEqual([]);
  }, 120_000);
});
