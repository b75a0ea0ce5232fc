import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { parseSimulatorFlags, runSimulatorCli } from '../../simulator/cli.ts';

describe('simulator CLI', () => {
  it('parses every flag', () => {
    const { options } = parseSimulatorFlags([
      '--port',
      '0',
      '--host=0.0.0.0',
      '--seed',
      '3',
      '--suppliers',
      '2',
      '--plots',
      '50',
      '--own-plots',
      '5',
      '--vertices',
      '800',
      '--faults',
      'flaky',
      '--time-scale',
      '0.01',
      '--client-id',
      'a',
      '--client-secret',
      'b',
      '--token-lifetime',
      '60',
      '--resolve',
      'hooks.ddsync.test=127.0.0.1:9000',
      '--resolve',
      'b.example.com=127.0.0.1:9001',
      '--no-invitations',
      '--no-transactions-entitlement',
      '--error-ratio',
      '0.5',
    ]);
    expect(options).toMatchObject({
      port: 0,
      host: '0.0.0.0',
      seed: 3,
      suppliers: 2,
      plots: 50,
      ownPlots: 5,
      vertices: 800,
      timeScale: 0.01,
      clientId: 'a',
      clientSecret: 'b',
      tokenLifetimeSeconds: 60,
      invitationsEnabled: false,
      transactionErrorRatio: 0.5,
      entitlements: { canManageTransactions: false },
      resolve: { 'hooks.ddsync.test': '127.0.0.1:9000', 'b.example.com': '127.0.0.1:9001' },
    });
  });

  it('rejects bad values naming the flag and the rule, exit code 2', async () => {
    expect(() => parseSimulatorFlags(['--port', '70000'])).toThrow(/--port must be an integer from 0 to 65535/);
    expect(() => parseSimulatorFlags(['--error-ratio', '2'])).toThrow(/--error-ratio must be a number from 0 to 1/);
    expect(() => parseSimulatorFlags(['--vertices', '2'])).toThrow(/--vertices must be an integer from 3 to 100000/);
    expect(parseSimulatorFlags(['--huge-plot-vertices', '2000000']).options.hugePlotVertices).toBe(2_000_000);
    expect(() => parseSimulatorFlags(['--huge-plot-vertices', '5000001'])).toThrow(
      /--huge-plot-vertices must be an integer from 3 to 5000000/,
    );
    expect(() => parseSimulatorFlags(['--resolve', 'nohost'])).toThrow(/--resolve must be HOST=ADDRESS:PORT/);
    expect(() => parseSimulatorFlags(['--faults', 'chaos'])).toThrow(/--faults/);
    expect(() => parseSimulatorFlags(['--bogus'])).toThrow(/unknown flag --bogus/);
    const write = process.stderr.write;
    process.stderr.write = (() => true) as typeof process.stderr.write;
    try {
      expect(await runSimulatorCli(['--seed', '-1'])).toBe(2);
    } finally {
      process.stderr.write = write;
    }
  });

  it('prints one line with its URL and stops cleanly on SIGTERM', async () => {
    const script =
      "import('./simulator/cli.ts').then(async (m) => process.exit(await m.runSimulatorCli(['--port', '0', '--plots', '100'])))";
    const child = spawn(process.execPath, ['--import', 'tsx', '-e', script], {
      cwd: process.cwd(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    const line = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes('\n')) resolve(out);
      });
      child.on('exit', (code) => reject(new Error(`exited early with ${code}`)));
    });
    expect(line).toMatch(/^simulator listening on http:\/\/127\.0\.0\.1:\d+ \(seed 1, 5 suppliers, 100 plots\)\n$/);
    const url = /http:\/\/[^ ]+/.exec(line)?.[0] ?? '';
    expect((await fetch(`${url}/_sim/suppliers`)).status).toBe(200);
    const code = await new Promise<number | null>((resolve) => {
      child.on('exit', resolve);
      child.kill('SIGTERM');
    });
    expect(code).toBe(0);
    expect(out.trim().split('\n')).toHaveLength(1);
  });
});
