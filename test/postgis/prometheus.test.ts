import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { metricsScenario, type MetricsScenario } from '../support/metrics-scenario.ts';
import { sample } from '../support/exposition.ts';

const DEPLOY = fileURLToPath(new URL('../../deploy/prometheus/', import.meta.url));

/** Prometheus's own checker, from Debian's prometheus package (.ci/run installs it); missing fails loudly. */
async function promtool(args: string[], input?: string): Promise<{ code: number; out: string }> {
  return new Promise((resolve, reject) => {
    const child = execFile('promtool', args, { cwd: DEPLOY }, (error, stdout, stderr) => {
      if (error && (error as NodeJS.ErrnoException).code === 'ENOENT')
        reject(new Error('promtool is not installed: apt-get install prometheus (Debian), as .ci/run does'));
      else resolve({ code: typeof error?.code === 'number' ? error.code : 0, out: `${stdout}${stderr}` });
    });
    child.stdin?.end(input ?? '');
  });
}

describe("Prometheus's own checks", () => {
  let s: MetricsScenario;
  let text: string;
  beforeAll(async () => {
    s = await metricsScenario('promtool');
    text = await s.scrape();
  }, 240_000);
  afterAll(() => s?.close());

  it('finds nothing wrong in a real scrape after a refresh and a submission (promtool check metrics)', async () => {
    // The scrape holds what the test is about: ddsync's figures and the core's.
    expect(sample(text, 'ddsync_refresh_runs_total', { outcome: 'succeeded' })).toBe(1);
    expect(sample(text, 'ddsync_transactions', { state: 'available' })).toBeGreaterThan(0);
    expect(text).toMatch(/^temporal_\w+/m);
    const checked = await promtool(['check', 'metrics'], text);
    expect(checked.out).toBe('');
    expect(checked.code).toBe(0);
  });

  it('would say so of a metric that breaks its conventions', async () => {
    const bad =
      '# HELP ddsync_refresh_seconds_count x\n# TYPE ddsync_refresh_seconds_count counter\nddsync_refresh_seconds_count 1\n';
    const checked = await promtool(['check', 'metrics'], bad);
    expect(checked.code).not.toBe(0);
    expect(checked.out).toMatch(/counter metrics should have "_total" suffix/);
  });

  it('accepts the alert rules, their unit tests and the compose stack config (promtool check/test)', async () => {
    const rules = await promtool(['check', 'rules', 'alerts.yml']);
    expect(rules.out).toMatch(/SUCCESS: 10 rules found/);
    expect(rules.code).toBe(0);
    const tests = await promtool(['test', 'rules', 'alerts.test.yml']);
    expect(tests.out).toMatch(/SUCCESS/);
    expect(tests.code).toBe(0);
    const config = await promtool(['check', 'config', 'prometheus.yml']);
    expect(config.code).toBe(0);
  });

  it("evaluates the alerts' expressions on real series: nothing fires on a healthy warehouse", () => {
    // The freshness alert's two sides are both served: a stale warehouse would be noticed.
    expect(sample(text, 'ddsync_refresh_last_success_timestamp_seconds')).toBeGreaterThan(Date.now() / 1000 - 600);
    expect(sample(text, 'ddsync_refresh_interval_seconds')).toBe(21_600);
    for (const supplier of s.sim.control.suppliers())
      expect(sample(text, 'ddsync_supplier_failed_scans_in_a_row', { supplier: supplier.id })).toBe(0);
  });
});
