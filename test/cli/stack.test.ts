import { describe, it, expect } from 'vitest';
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { waitUntil } from '../support/wait.ts';
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
    // Ctrl-C is the normal end of the stack.
    expect(await run.exited).toBe(0);
    expect(processesMentioning(dir)).toEqual([]);
  }, 120_000);

  it("stops everything when a supervisor sends SIGTERM to npx, which does not pass it on (the README's entry)", async () => {
    const dir = scratchDir('npx-stack');
    const root = fileURLToPath(new URL('../..', import.meta.url));
    const npx = spawn('npx', ['ddsync', 'stack', '--fresh', '--dir', dir], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let text = '';
    npx.stdout.on('data', (b: Buffer) => {
      text += b.toString();
    });
    npx.stderr.on('data', (b: Buffer) => {
      text += b.toString();
    });
    await waitUntil('the stack to be ready', () => /stack ready/.test(text), 90_000);
    // The ddsync process, Postgres and the Temporal dev server all run under npx.
    expect(processesMentioning(dir).length).toBeGreaterThanOrEqual(3);
    npx.kill('SIGTERM');
    await waitUntil('every process of the stack to end', () => processesMentioning(dir).length === 0, 30_000);
    // --fresh: the throwaway cluster's files are gone too.
    expect(readdirSync(dir)).toEqual([]);
  }, 120_000);
});
