import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { startSimulator, type Simulator } from '../../simulator/index.ts';
import { createTestDatabase } from '../support/databases.ts';
import { ddsyncEnv, runDdsync } from '../support/processes.ts';
import { createServer, connect } from 'node:net';
import { freePort } from '../../infra/ports.ts';

describe('ddsync worker', () => {
  let sim: Simulator;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    sim = await startSimulator({ port: 0, suppliers: 2, plots: 50 });
    env = ddsyncEnv({
      upstreamUrl: sim.url,
      databaseUrl: await createTestDatabase('cliworker'),
      taskQueue: `cli-worker-${process.pid}`,
    });
  });
  afterAll(async () => {
    await sim?.close();
  });

  it('reports every configuration problem at once and exits 2', async () => {
    const run = runDdsync(['worker'], {
      PATH: process.env.PATH,
      DDSYNC_CLIENT_SECRET: 'top-secret-value',
      DATABASE_URL: 'mysql://u:pw-999@h/db',
    });
    expect(await run.exited).toBe(2);
    const out = run.output();
    expect(out).toContain('DDSYNC_UPSTREAM_URL is required');
    expect(out).toContain('DDSYNC_CLIENT_ID is required');
    expect(out).toContain('DATABASE_URL is malformed: expected a postgres:// URL');
    expect(out).not.toContain('top-secret-value');
    expect(out).not.toContain('pw-999');
  });

  it('connects to Temporal and Postgres, then stops cleanly on SIGINT', async () => {
    const run = runDdsync(['worker'], env);
    await run.waitFor(/worker ready/, 90_000);
    run.child.kill('SIGINT');
    expect(await run.exited).toBe(0);
    expect(run.output()).toContain('worker stopped');
    expect(run.output()).not.toContain('ddsync-demo-secret');
  }, 120_000);

  it('waits for a warehouse that is not there yet, saying so once, and starts when it answers', async () => {
    // Nothing listens on `port` until the proxy to the run's cluster starts there.
    const port = await freePort();
    const target = new URL(env.DATABASE_URL!);
    const url = new URL(env.DATABASE_URL!);
    url.hostname = '127.0.0.1';
    url.port = String(port);
    const run = runDdsync(['worker'], { ...env, DATABASE_URL: url.toString() });
    const proxy = createServer((socket) => {
      const upstream = connect(Number(target.port), target.hostname);
      socket.pipe(upstream).pipe(socket);
      upstream.on('error', () => socket.destroy());
      socket.on('error', () => upstream.destroy());
    });
    try {
      await run.waitFor(
        /the warehouse is unavailable: cannot reach the warehouse at 127.0.0.1:\d+\/\w+: connection refused/,
        60_000,
      );
      expect(run.child.exitCode).toBeNull();
      await new Promise<void>((resolve) => proxy.listen(port, '127.0.0.1', resolve));
      await run.waitFor(/worker ready/, 90_000);
      const out = run.output();
      expect(out.match(/the warehouse is unavailable/g)).toHaveLength(1);
      expect(out).toMatch(/the warehouse is available again after \d+\.\d s/);
      expect(out).not.toContain(target.password || 'never-a-password');
      run.child.kill('SIGINT');
      expect(await run.exited).toBe(0);
    } finally {
      run.child.kill('SIGKILL');
      proxy.close();
    }
  }, 150_000);

  it('waits for a Temporal that is not there yet, and starts when it answers', async () => {
    const port = await freePort();
    const [host, targetPort] = env.TEMPORAL_ADDRESS!.split(':') as [string, string];
    const run = runDdsync(['worker'], { ...env, TEMPORAL_ADDRESS: `127.0.0.1:${port}` });
    const proxy = createServer((socket) => {
      const upstream = connect(Number(targetPort), host);
      socket.pipe(upstream).pipe(socket);
      upstream.on('error', () => socket.destroy());
      socket.on('error', () => upstream.destroy());
    });
    try {
      await run.waitFor(
        /Temporal is unavailable: cannot reach Temporal at 127.0.0.1:\d+ .*waiting for it before starting/,
        60_000,
      );
      await new Promise<void>((resolve) => proxy.listen(port, '127.0.0.1', resolve));
      await run.waitFor(/worker ready/, 90_000);
      expect(run.output().match(/Temporal is unavailable/g)).toHaveLength(1);
      run.child.kill('SIGINT');
      expect(await run.exited).toBe(0);
    } finally {
      run.child.kill('SIGKILL');
      proxy.close();
    }
  }, 150_000);

  it('fails fast when the warehouse refuses the password: waiting cannot mend it', async () => {
    const url = new URL(env.DATABASE_URL!);
    url.password = 'secret-pw-wrong';
    const run = runDdsync(['worker'], { ...env, DATABASE_URL: url.toString() });
    expect(await run.exited).toBe(1);
    expect(run.output()).toMatch(
      /the warehouse at 127.0.0.1:\d+\/\w+ refused the connection: password authentication failed/,
    );
    expect(run.output()).not.toContain('secret-pw-wrong');
  });

  it('fails fast when the service refuses the credentials: one line with the reason, no stack, no secret', async () => {
    const run = runDdsync(['worker'], { ...env, DDSYNC_CLIENT_SECRET: 'wrong-secret-42' });
    expect(await run.exited).toBe(1);
    // Log lines are JSON; what people read is the rest.
    const said = run
      .output()
      .trim()
      .split('\n')
      .filter((line) => !line.startsWith('{'));
    expect(said).toEqual([
      'ddsync worker: the service at DDSYNC_UPSTREAM_URL refuses DDSYNC_CLIENT_ID / DDSYNC_CLIENT_SECRET (401: Invalid client credentials): correct them and start the worker again',
    ]);
    expect(run.output()).not.toMatch(/\n\s+at /);
    expect(run.output()).not.toContain('wrong-secret-42');
  });
});
