import { describe, it, expect } from 'vitest';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { retryTakenPorts } from '../../../infra/ports.ts';
import { startTemporalDevServer } from '../../../infra/temporal-dev-server.ts';
import { scratchDir } from '../../support/scratch.ts';

describe('a server (Temporal dev server, embedded Postgres) when a port ddsync chose is taken before it binds it', () => {
  const taken = new Error('listen tcp 127.0.0.1:46493: bind: address already in use');

  it('starts again with new ports, at most three times in all', async () => {
    const attempts: number[] = [];
    const started = await retryTakenPorts(true, async (attempt) => {
      attempts.push(attempt);
      if (attempt < 3) throw taken;
      return 'serving';
    });
    expect(started).toBe('serving');
    expect(attempts).toEqual([1, 2, 3]);
    let tries = 0;
    await expect(
      retryTakenPorts(true, async () => {
        tries++;
        throw taken;
      }),
    ).rejects.toThrow(/address already in use/);
    expect(tries).toBe(3);
  });

  it('does not retry ports the user gave, nor any other failure', async () => {
    let tries = 0;
    await expect(
      retryTakenPorts(false, async () => {
        tries++;
        throw taken;
      }),
    ).rejects.toThrow(/already in use/);
    expect(tries).toBe(1);
    tries = 0;
    await expect(
      retryTakenPorts(true, async () => {
        tries++;
        throw new Error('exited early with code 1: bad flag');
      }),
    ).rejects.toThrow(/bad flag/);
    expect(tries).toBe(1);
  });
});

describe('a Temporal dev server that dies at start with a long Go stack', () => {
  it('is started again on new ports when the reason (first, before the stack) is a port taken', async () => {
    const dir = scratchDir('panicking-temporal');
    const attempts = join(dir, 'attempts');
    const cli = join(dir, 'temporal');
    // As the real server dies on a port taken: the reason first, then thousands of characters of stack.
    writeFileSync(
      cli,
      `#!/bin/sh\necho x >> ${attempts}\necho "panic: listen tcp 127.0.0.1:7233: bind: address already in use" >&2\n` +
        `i=0; while [ $i -lt 200 ]; do echo "go.temporal.io/server/temporal.NewServerFx(...) /home/runner/go/pkg/mod/fx.go:165 +0x19e" >&2; i=$((i+1)); done\nexit 2\n`,
    );
    chmodSync(cli, 0o755);
    const env = { ...process.env, TEMPORAL_CLI_PATH: cli };
    await expect(startTemporalDevServer({ env, startTimeoutMs: 20_000 })).rejects.toThrow(
      /exited early with code 2:\npanic: listen tcp 127\.0\.0\.1:7233: bind: address already in use/,
    );
    // Chosen by ddsync, so chosen again: three attempts in all, not one.
    expect(readFileSync(attempts, 'utf8').trim().split('\n')).toHaveLength(3);
  });
});
