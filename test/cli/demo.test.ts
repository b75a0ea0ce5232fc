import { describe, it, expect } from 'vitest';
import { runDdsync, processesMentioning, lastJsonLine } from '../support/processes.ts';
import { resolve } from 'node:path';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { remoteResources, reportData } from '../support/report-html.ts';
import { spawnSync } from 'node:child_process';

const DEMO_DIR = resolve('.ddsync/demo');
/** What a demo left in its folder: nothing, once it has ended. */
/** A pid no process has: the last one of a child that has exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', '']);
  return child.pid!;
}
const leftovers = () => (existsSync(DEMO_DIR) ? readdirSync(DEMO_DIR) : []);

describe('ddsync demo', () => {
  it('runs the whole product on the embedded stack and prints what landed; everything stops afterwards', async () => {
    const run = runDdsync(['demo', '--suppliers', '3', '--plots', '800', '--json'], {
      ...process.env,
      DDSYNC_LOG_FORMAT: 'json',
    });
    const code = await run.exited;
    const out = run.output();
    expect(code, out).toBe(0);
    // A healthy run shows no runtime warning (it printed MaxListenersExceededWarning twice while submitting).
    expect(out).not.toMatch(/\(node:\d+\) \w*Warning/);
    const result = lastJsonLine(out);
    expect(result).toMatchObject({
      plots: 800,
      plotsAtSource: 800,
      suppliers: 3,
      status: 'succeeded',
      runId: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    expect(result['analyses']).toBeGreaterThan(800);
    expect(result['seconds']).toBeGreaterThan(0);
    expect(result['psql']).toMatch(/^postgres:\/\/ddsync_bi:ddsync-bi@127\.0\.0\.1:\d+\/ddsync$/);
    // EUDR readiness from the views, and the HTML report of it, which outlives the demo.
    const ready = result['plotsReady'] as number;
    const notReady = result['plotsNotReady'] as number;
    expect(ready + notReady).toBe(800);
    expect(notReady).toBeGreaterThan(0);
    expect(ready).toBeGreaterThan(0);
    expect(result['overlapChecked']).toBe(false);
    // Embedded Postgres has no PostGIS, and the demo says so (docs/postgis.md).
    expect(out).toContain(
      'spatial mode: no PostGIS — GeoJSON only; overlap check not run (the postgis extension is not installed on this PostgreSQL server)',
    );
    const report = result['report'] as string;
    expect(report).toMatch(/\.ddsync\/reports\/demo-report-[0-9a-f]{8}\.html$/);
    const html = readFileSync(report, 'utf8');
    rmSync(report);
    expect(remoteResources(html)).toEqual([]);
    expect(reportData<{ plots: { ids: string[] } }>(html).plots.ids).toHaveLength(800);
    expect(html).toMatch(new RegExp(`<strong id="total-not-ready">${notReady}</strong>`));
    // The second job: the sample shipments, 3 refused by a rule, the others followed to the EU system's answer.
    const submission = result['submission'] as {
      rows: number;
      accepted: number;
      refused: number;
      readinessWarned: number;
      readinessRefused: number;
      available: number;
      error: number;
      failed: number;
      references: Array<{ key: string; referenceNumber: string; verificationNumber: string }>;
    };
    expect(submission).toMatchObject({ rows: 12, accepted: 9, refused: 3, failed: 0, readinessRefused: 0 });
    // The readiness gate (warn in the demo) warned of the rows whose suppliers bring plots that are not ready.
    expect(submission.readinessWarned).toBeGreaterThan(0);
    expect(submission.readinessWarned).toBeLessThanOrEqual(9);
    expect(submission.available + submission.error).toBe(9);
    expect(submission.available).toBeGreaterThan(0);
    expect(submission.references).toHaveLength(submission.available);
    for (const r of submission.references) {
      expect(r.referenceNumber).toMatch(/^\d{2}[A-Z]{2}[A-Z0-9]{10}$/);
      expect(r.verificationNumber).toMatch(/^[A-Z0-9]{8}$/);
    }
    // Last, `ddsync status` of it all, read as the BI login: ok, each check saying why.
    const status = result['syncStatus'] as {
      level: string;
      exitCode: number;
      checks: Array<{ check: string; level: string; message: string }>;
      warehouse: Record<string, unknown>;
    };
    expect(status.level, JSON.stringify(status.checks, null, 2)).toBe('ok');
    expect(status.exitCode).toBe(0);
    expect(status.checks.map((c) => c.check)).toEqual([
      'refresh',
      'scans',
      'deletions',
      'transactions',
      'webhooks',
      'pdfs',
      'schedules',
      'workers',
    ]);
    expect(status.checks.find((c) => c.check === 'transactions')!.message).toBe(
      'no transaction is waiting for a final status',
    );
    expect(status.checks.find((c) => c.check === 'schedules')!.message).toMatch(
      /^ddsync-refresh every 6h, next .*; ddsync-pdf-archive every 15m, next /,
    );
    expect(status.warehouse).toMatchObject({ seen: true, role: 'ddsync_bi', inReaderRole: true, readOnly: true });
    expect(out).toContain("ddsync's schedules applied; ddsync status: ok");
    // No Postgres or Temporal left behind, and no data folder.
    expect(processesMentioning(DEMO_DIR)).toEqual([]);
    expect(leftovers()).toEqual([]);
  }, 180_000);

  it('starts from an empty warehouse whatever an earlier demo left, and Ctrl-C ends --keep cleanly with exit code 0', async () => {
    // What a demo killed with SIGKILL leaves: a cluster folder nobody runs (the next demo once reused it).
    // (its postmaster.pid names a process that has ended; a folder of a demo still starting has none yet)
    mkdirSync(resolve(DEMO_DIR, 'postgres'), { recursive: true });
    writeFileSync(resolve(DEMO_DIR, 'postgres', 'PG_VERSION'), '18\n');
    writeFileSync(resolve(DEMO_DIR, 'postgres', 'postmaster.pid'), `${deadPid()}\n/stale\n`);
    const run = runDdsync(['demo', '--suppliers', '2', '--plots', '300', '--keep', '--json'], {
      ...process.env,
      DDSYNC_LOG_FORMAT: 'json',
    });
    await run.waitFor(/keeps running until Ctrl-C/, 150_000);
    // The JSON line (stdout) and the message (stderr) come through two pipes: either may be read first.
    await run.waitFor(/^\{"plots".*\}$/m, 10_000);
    const kept = lastJsonLine(
      run
        .output()
        .split('\n')
        .filter((l) => l.startsWith('{"plots"'))
        .join('\n'),
    );
    expect(kept).toMatchObject({ plots: 300, status: 'succeeded' });
    rmSync(kept['report'] as string);
    expect(leftovers()).toHaveLength(1);
    run.child.kill('SIGINT');
    expect(await run.exited, run.output()).toBe(0);
    expect(run.output()).not.toMatch(/Not running|DRAINING/);
    expect(processesMentioning(DEMO_DIR)).toEqual([]);
    expect(leftovers()).toEqual([]);
  }, 180_000);

  it('refuses a bad flag with the rule, exit code 2', async () => {
    const run = runDdsync(['demo', '--plots', 'many'], process.env);
    expect(await run.exited).toBe(2);
    expect(run.output()).toContain('--plots must be a whole number from 10 to 1000000, got "many"');
  });
});
