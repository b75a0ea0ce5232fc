import { embeddedStack } from './stack.ts';
import { readdirSync, readFileSync } from 'node:fs';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const DDSYNC_BIN = fileURLToPath(new URL('../../bin/ddsync.js', import.meta.url));

/** Pids of live processes whose command line mentions `needle` (Linux /proc). */
export function processesMentioning(needle: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      const state = readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1]?.[0];
      if (cmdline.includes(needle) && state !== 'Z') pids.push(Number(entry));
    } catch {
      // the process ended while we looked
    }
  }
  return pids;
}

export interface RunningCommand {
  child: ChildProcess;
  output(): string;
  /** Resolves with the output so far once it matches, rejects if the process exits first. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<string>;
  exited: Promise<number | null>;
}

/** Runs `ddsync ...` as a real child process, collecting stdout and stderr. */
export function runDdsync(args: string[], env: NodeJS.ProcessEnv = process.env): RunningCommand {
  const child = spawn(process.execPath, [DDSYNC_BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  const listeners = new Set<() => void>();
  const onData = (chunk: Buffer) => {
    text += chunk.toString('utf8');
    for (const l of listeners) l();
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      for (const l of listeners) l();
      resolve(code);
    }),
  );
  const waitFor = (pattern: RegExp, timeoutMs = 60_000) =>
    new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => done(new Error(`timed out waiting for ${pattern} in:\n${text}`)), timeoutMs);
      const check = () => {
        if (pattern.test(text)) done();
        else if (child.exitCode !== null || child.signalCode !== null)
          done(new Error(`exited (${child.exitCode ?? child.signalCode}) before ${pattern}:\n${text}`));
      };
      const done = (error?: Error) => {
        clearTimeout(timer);
        listeners.delete(check);
        if (error) reject(error);
        else resolve(text);
      };
      listeners.add(check);
      check();
    });
  return { child, output: () => text, waitFor, exited };
}

/**
 * The environment of a `ddsync` child process on the run's stack: the run's Temporal dev server (or the
 * one a test owns, `temporal`), the simulator's demo credentials, JSON logs; `extra` adds or overrides settings.
 */
export function ddsyncEnv(
  parts: {
    upstreamUrl: string;
    databaseUrl: string;
    taskQueue: string;
    temporal?: { address: string; namespace: string };
  },
  extra: NodeJS.ProcessEnv = {},
): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    DATABASE_URL: parts.databaseUrl,
    TEMPORAL_ADDRESS: parts.temporal?.address ?? embeddedStack().temporalAddress,
    TEMPORAL_NAMESPACE: parts.temporal?.namespace ?? embeddedStack().temporalNamespace,
    TEMPORAL_TASK_QUEUE: parts.taskQueue,
    DDSYNC_UPSTREAM_URL: parts.upstreamUrl,
    DDSYNC_CLIENT_ID: 'ddsync-demo',
    DDSYNC_CLIENT_SECRET: 'ddsync-demo-secret',
    DDSYNC_LOG_FORMAT: 'json',
    ...extra,
  };
}

/**
 * A bulk submission's timing for tests: the EU system's wait and the polls shortened, and `deadline` to
 * give up on a transaction, so a batch ends within a test's time.
 */
export function fastSubmission(deadline = '5m'): NodeJS.ProcessEnv {
  return {
    DDSYNC_SUBMIT_CONCURRENCY: '20',
    DDSYNC_TX_FIRST_POLL: '100ms',
    DDSYNC_TX_MAX_POLL: '1s',
    DDSYNC_TX_EU_WAIT: '1800ms',
    DDSYNC_TX_DEADLINE: deadline,
    DDSYNC_TX_CREATE_SETTLE: '300ms',
  };
}

/** The last line of a command's output, which `--json` makes one JSON object or array. */
/** Whether a command's process still runs (neither exited nor killed). */
export function isRunning(command: RunningCommand): boolean {
  return command.child.exitCode === null && command.child.signalCode === null;
}

/** The messages of a command's JSON log lines (DDSYNC_LOG_FORMAT=json) that start with `prefix`. */
export function logMessages(command: RunningCommand, prefix = ''): string[] {
  return command
    .output()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => (JSON.parse(l) as { msg?: string }).msg ?? '')
    .filter((m) => m.startsWith(prefix));
}

export function lastJsonLine<T = Record<string, unknown>>(output: string): T {
  return JSON.parse(output.trim().split('\n').at(-1)!) as T;
}

/** `ddsync worker` as a child process, once it says it is ready. */
export async function startWorkerProcess(env: NodeJS.ProcessEnv): Promise<RunningCommand> {
  const worker = runDdsync(['worker'], env);
  await worker.waitFor(/worker ready/, 90_000);
  return worker;
}

/** Stops a child the way an operator does (SIGINT) and waits for it; returns its exit code. */
export async function stopProcess(
  command: RunningCommand | undefined,
  signal: NodeJS.Signals = 'SIGINT',
): Promise<number | null> {
  if (!command) return null;
  command.child.kill(signal);
  return command.exited;
}
