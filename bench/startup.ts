// Start-up time of quick commands, as a person types them (`node bin/ddsync.js …`, what `npx ddsync`
// runs), against Node's own start-up measured in the same run. Prints figures only; never passes or
// fails on time.
// Usage: npx tsx bench/startup.ts [--runs 7] [--json]
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { median, positiveFlag } from './support/figures.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Median wall time of `node args…` over `runs` runs (one unmeasured warm-up first: tsx's cache). */
function time(args: string[], runs: number): number {
  const env = { ...process.env, DDSYNC_UPSTREAM_URL: '', DATABASE_URL: '' };
  spawnSync(process.execPath, args, { cwd: ROOT, env, stdio: 'ignore' });
  const seconds: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    spawnSync(process.execPath, args, { cwd: ROOT, env, stdio: 'ignore' });
    seconds.push((performance.now() - started) / 1000);
  }
  return median(seconds);
}

const runs = positiveFlag('runs', 7);
const baseline = time(['-e', ''], runs);
const commands: Array<[string, string[]]> = [
  ['ddsync --version', ['bin/ddsync.js', '--version']],
  ['ddsync --help', ['bin/ddsync.js', '--help']],
  ['ddsync refresh --help', ['bin/ddsync.js', 'refresh', '--help']],
  ['ddsync worker --help', ['bin/ddsync.js', 'worker', '--help']],
  ['ddsync config', ['bin/ddsync.js', 'config']],
];
const results: Record<string, number> = {};
console.log(
  `start-up, median of ${runs} runs (node ${process.version}); baseline \`node -e ""\`: ${baseline.toFixed(3)} s`,
);
for (const [name, args] of commands) {
  const s = time(args, runs);
  results[name] = s;
  console.log(`${name.padEnd(24)} ${s.toFixed(3)} s   ${(s / baseline).toFixed(1)}x node's own start-up`);
}
if (process.argv.includes('--json')) console.log(JSON.stringify({ runs, baselineSeconds: baseline, seconds: results }));
