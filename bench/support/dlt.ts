// dlt, the peer bench:peer measures ddsync against: installed from PyPI into a virtual environment of
// its own (as .ci/run does for dbt), never into the user's Python, and run as a child process.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { packagePath } from '../../platform/package-root.ts';
import { reapedChildrenCpuSeconds, spawnChild } from './children.ts';

export const DLT_VERSION = '1.31.0';
const VENV = packagePath('.ddsync', 'tools', `dlt-${DLT_VERSION}-venv`);
const PYTHON = `${VENV}/bin/python`;
const PIPELINE = packagePath('bench', 'peer', 'dlt_pipeline.py');

function installedVersion(): string | undefined {
  if (!existsSync(PYTHON)) return undefined;
  const probe = spawnSync(PYTHON, ['-c', 'import dlt; print(dlt.__version__)'], { encoding: 'utf8' });
  return probe.status === 0 ? probe.stdout.trim() : undefined;
}

/** The venv's python with dlt DLT_VERSION and its Postgres extra; installs them on first use. */
export function ensureDlt(say: (message: string) => void): string {
  if (installedVersion() === DLT_VERSION) return PYTHON;
  say(`installing dlt[postgres]==${DLT_VERSION} from PyPI into ${VENV} (once)…`);
  const run = (command: string, args: string[]) => {
    const done = spawnSync(command, args, { stdio: ['ignore', 'ignore', 'inherit'] });
    if (done.status !== 0) throw new Error(`${command} ${args.join(' ')} failed (exit ${done.status ?? done.signal})`);
  };
  run('python3', ['-m', 'venv', VENV]);
  run(PYTHON, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', `dlt[postgres]==${DLT_VERSION}`]);
  const version = installedVersion();
  if (version !== DLT_VERSION) throw new Error(`dlt ${DLT_VERSION} did not install into ${VENV} (found ${version})`);
  return PYTHON;
}

export interface DltTarget {
  upstreamUrl: string;
  clientId: string;
  clientSecret: string;
  databaseUrl: string;
  /** The Postgres schema dlt loads into; a second run into the same one merges. */
  dataset: string;
  /** Where dlt keeps its pipeline state and load packages. */
  workDir: string;
}

export interface DltRun {
  /** From starting the process to its exit, as a user of dlt waits for it. */
  seconds: number;
  /** pipeline.run alone, as dlt timed it (without Python's start and imports). */
  runSeconds: number;
  /** CPU seconds of the python process and its normalize and load workers. */
  cpuSeconds: number;
}

/**
 * One run of bench/peer/dlt_pipeline.py. Settings go through the environment (a secret in argv would
 * show in `ps`); dlt's telemetry is off, since it would reach for the internet.
 */
export async function runDlt(python: string, target: DltTarget): Promise<DltRun> {
  mkdirSync(target.workDir, { recursive: true });
  const env: NodeJS.ProcessEnv = {
    PATH: process.env['PATH'],
    HOME: target.workDir,
    PEER_BASE_URL: target.upstreamUrl,
    PEER_CLIENT_ID: target.clientId,
    PEER_CLIENT_SECRET: target.clientSecret,
    PEER_DATABASE_URL: target.databaseUrl,
    PEER_DATASET: target.dataset,
    PEER_PIPELINES_DIR: target.workDir,
    RUNTIME__DLTHUB_TELEMETRY: 'false',
    RUNTIME__LOG_LEVEL: 'WARNING',
    // Both cores for normalizing, and load packages in files small enough to load side by side.
    NORMALIZE__WORKERS: '2',
    LOAD__WORKERS: '4',
    DATA_WRITER__FILE_MAX_ITEMS: '50000',
  };
  // Nothing else of the benchmark's own children ends meanwhile: what is reaped is dlt's.
  const cpuBefore = reapedChildrenCpuSeconds();
  const started = performance.now();
  const child = spawnChild('dlt', [PIPELINE], env, python);
  const line = child.waitForLine(/^\{"seconds": [\d.]+\}$/, 3_600_000);
  const how = await child.exited;
  const seconds = (performance.now() - started) / 1000;
  const match = await line.catch((error: Error) => {
    throw new Error(`dlt did not finish (${how}): ${error.message}`);
  });
  if (!how.endsWith('code 0')) throw new Error(`${how}:\n${child.tail()}`);
  const printed = JSON.parse(match[0]) as { seconds: number };
  return {
    seconds,
    runSeconds: printed.seconds,
    cpuSeconds: reapedChildrenCpuSeconds() - cpuBefore,
  };
}
