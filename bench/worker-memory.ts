// What an idle production worker's memory is made of: the built CLI (npm run build) with the memory
// settings of infra/production.ts, started against a small embedded stack, measured once Temporal has
// let go of the bundle it loads to check it (10 s after start). Prints RSS by mapping (/proc smaps),
// each V8 isolate's heap spaces (the main thread and the workflow thread, read by a preloaded probe),
// and with --snapshot the main thread's script sources by package (what the heap keeps of each module
// loaded). Figures only, never pass or fail.
// Usage: npm run bench:worker-memory -- [--wait 12] [--worker-node-flags "..."] [--snapshot] [--json]
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { WORKER_NODE_FLAGS } from '../infra/production.ts';
import { rssByMapping } from './support/children.ts';
import { startWorker } from './support/refresh-runs.ts';
import { buildProduction, phase, progressTo, runBenchmark, startStack, workerEnv } from './support/stack.ts';

interface Options {
  waitSeconds: number;
  workerNodeFlags: string[];
  snapshot: boolean;
  json: boolean;
}

interface Result {
  workerNodeFlags: string[];
  rssMb: number;
  peakRssMb: number;
  rssAnonMb: number;
  rssFileMb: number;
  threads: number;
  /** Resident MB by mapping: a file, [heap] (malloc's main arena), [anon] (V8's heaps, other arenas, stacks). */
  byMapping: Record<string, number>;
  /** Per isolate (main, workflow thread): heap space → [used, resident] MB, and external memory. */
  isolates: Record<string, Record<string, [number, number]>>;
  /** With --snapshot: KB of script source the main thread keeps, by package (or file). */
  sourcesKb?: Record<string, number>;
}

const MB = 1024 * 1024;
const round = (x: number) => Math.round(x * 10) / 10;

// Loaded with --require into the worker, in every thread: writes its isolate's heap spaces every 500 ms.
const PROBE = `
const { isMainThread, threadId } = require('node:worker_threads');
const v8 = require('node:v8');
const fs = require('node:fs');
const write = () => {
  const spaces = Object.fromEntries(v8.getHeapSpaceStatistics().map((s) => [s.space_name, [s.space_used_size, s.physical_space_size]]));
  spaces.external = [v8.getHeapStatistics().external_memory, 0];
  fs.writeFileSync(process.env.DDSYNC_MEMORY_PROBE_DIR + '/' + (isMainThread ? 'main' : 'thread-' + threadId) + '.json', JSON.stringify(spaces));
};
setInterval(write, 500).unref();
`;

function parse(argv: string[]): Options {
  const o = new Command('bench:worker-memory')
    .exitOverride()
    .option('--wait <S>', 'seconds after the worker polls before measuring', '12')
    .option('--worker-node-flags <FLAGS>', "the worker's node flags (default: the production ones)")
    .option('--snapshot', "also write a heap snapshot of the main thread and sum its scripts' sources by package")
    .option('--json', 'print the result as one JSON line')
    .parse(argv, { from: 'user' })
    .opts<{ wait: string; workerNodeFlags?: string; snapshot?: boolean; json?: boolean }>();
  return {
    waitSeconds: Number(o.wait),
    workerNodeFlags:
      o.workerNodeFlags === undefined ? [...WORKER_NODE_FLAGS] : o.workerNodeFlags.split(/\s+/).filter(Boolean),
    snapshot: o.snapshot ?? false,
    json: o.json ?? false,
  };
}

function status(pid: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of readFileSync(`/proc/${pid}/status`, 'utf8').matchAll(/^(\w+):\s+(\d+)( kB)?$/gm))
    out[m[1]!] = Number(m[2]) / (m[3] ? 1024 : 1);
  return out;
}

/** Script sources the snapshot holds, by package under node_modules (or by file), in KB. */
function sourcesByPackage(file: string): Record<string, number> {
  const snap = JSON.parse(readFileSync(file, 'utf8')) as {
    snapshot: { meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[] } };
    nodes: number[];
    edges: number[];
    strings: string[];
  };
  const { node_fields: nf, node_types: nt, edge_fields: ef } = snap.snapshot.meta;
  const [type, name, size, count] = ['type', 'name', 'self_size', 'edge_count'].map((f) => nf.indexOf(f)) as [
    number,
    number,
    number,
    number,
  ];
  const by: Record<string, number> = {};
  let edge = 0;
  for (let i = 0; i < snap.nodes.length; i += nf.length) {
    const edges = snap.nodes[i + count]!;
    const url = snap.strings[snap.nodes[i + name]!]!;
    // A Script: a code node named by its URL, whose 'source' edge leads to its text.
    if (nt[0][snap.nodes[i + type]!] === 'code' && /^(file:|\/|node:)/.test(url)) {
      for (let e = edge; e < edge + edges * ef.length; e += ef.length) {
        if (snap.strings[snap.edges[e + 1]!] !== 'source') continue;
        const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1] ?? (url.startsWith('node:') ? 'node:*' : url);
        by[pkg] = (by[pkg] ?? 0) + snap.nodes[snap.edges[e + 2]! + size]! / 1024;
      }
    }
    edge += edges * ef.length;
  }
  return Object.fromEntries(
    Object.entries(by)
      .sort((a, b) => b[1] - a[1])
      .slice(0, 25)
      .map(([k, kb]) => [k, Math.round(kb)]),
  );
}

async function waitForFile(dir: string, suffix: string): Promise<string> {
  let last = -1;
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const name = readdirSync(dir).find((n) => n.endsWith(suffix));
    if (!name) continue;
    const size = statSync(join(dir, name)).size;
    if (size === last && size > 0) return join(dir, name);
    last = size;
  }
}

await runBenchmark<Options, Result>({
  name: 'bench:worker-memory',
  usage: 'usage: npm run bench:worker-memory -- [--wait 12] [--worker-node-flags "..."] [--snapshot] [--json]',
  parse,
  async run(o, seconds, teardown) {
    const say = progressTo('bench:worker-memory');
    await phase(say, seconds, 'build', async () => buildProduction());
    const stack = await phase(say, seconds, 'stack', () =>
      startStack(['--plots', '100', '--suppliers', '2'], teardown),
    );
    const dir = mkdtempSync(join(tmpdir(), 'ddsync-worker-memory-'));
    teardown.add('probe files', async () => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, 'probe.cjs'), PROBE);
    const database = `worker_memory_${Date.now()}`;
    await stack.postgres.createDatabase(database);
    const taskQueue = `worker-memory-${Date.now()}`;
    const flags = [...o.workerNodeFlags, '--require', join(dir, 'probe.cjs')];
    if (o.snapshot) flags.push('--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${dir}`);
    const env = { ...workerEnv(stack, stack.postgres.urlFor(database), taskQueue), DDSYNC_MEMORY_PROBE_DIR: dir };
    const worker = await phase(say, seconds, 'worker start', () =>
      startWorker(env, stack.temporalClient, taskQueue, flags),
    );
    teardown.add('worker', () => worker.stop());
    await phase(say, seconds, 'idle', () => new Promise((resolve) => setTimeout(resolve, o.waitSeconds * 1000)));
    const s = status(worker.pid);
    const byMapping = rssByMapping(worker.pid);
    const isolates: Result['isolates'] = {};
    for (const name of readdirSync(dir).filter((n) => n.endsWith('.json'))) {
      const spaces = JSON.parse(readFileSync(join(dir, name), 'utf8')) as Record<string, [number, number]>;
      isolates[name.replace('.json', '')] = Object.fromEntries(
        Object.entries(spaces)
          .filter(([, [used, resident]]) => used + resident > 0)
          .map(([space, [used, resident]]) => [space.replace('_space', ''), [round(used / MB), round(resident / MB)]]),
      );
    }
    let sourcesKb: Record<string, number> | undefined;
    if (o.snapshot) {
      process.kill(worker.pid, 'SIGUSR2');
      const file = await phase(say, seconds, 'heap snapshot', () => waitForFile(dir, '.heapsnapshot'));
      sourcesKb = sourcesByPackage(file);
    }
    return {
      workerNodeFlags: o.workerNodeFlags,
      rssMb: round(s.VmRSS!),
      peakRssMb: round(s.VmHWM!),
      rssAnonMb: round(s.RssAnon!),
      rssFileMb: round(s.RssFile!),
      threads: s.Threads!,
      byMapping,
      isolates,
      ...(sourcesKb ? { sourcesKb } : {}),
    };
  },
  report(r) {
    const lines = [
      `idle worker (${r.workerNodeFlags.join(' ')}), ${r.threads} threads`,
      `RSS ${r.rssMb} MB (peak so far ${r.peakRssMb} MB): anonymous ${r.rssAnonMb} MB, files ${r.rssFileMb} MB`,
      'RSS by mapping (MB):',
      ...Object.entries(r.byMapping)
        .slice(0, 8)
        .map(([k, mb]) => `  ${String(mb).padStart(6)}  ${k}`),
    ];
    for (const [isolate, spaces] of Object.entries(r.isolates)) {
      const total = Object.entries(spaces)
        .filter(([k]) => k !== 'external')
        .reduce((sum, [, [, resident]]) => sum + resident, 0);
      lines.push(`V8 heap, ${isolate}: ${round(total)} MB resident (used / resident MB by space)`);
      for (const [space, [used, resident]] of Object.entries(spaces))
        lines.push(
          `  ${space.padEnd(22)} ${String(used).padStart(6)} ${space === 'external' ? '' : String(resident).padStart(6)}`,
        );
    }
    if (r.sourcesKb) {
      lines.push('script sources kept by the main thread (KB):');
      for (const [k, kb] of Object.entries(r.sourcesKb)) lines.push(`  ${String(kb).padStart(6)}  ${k}`);
    }
    return lines.join('\n');
  },
});
