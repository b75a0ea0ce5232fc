// Child processes of a benchmark (the simulator, the worker): each in its own process so its CPU
// and memory are its own, with output drained (a full pipe would stall it) and a tail kept for errors.
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { stopOnExit } from '../../infra/exit-hooks.ts';

export interface Child {
  name: string;
  pid: number;
  /** Resolves when the process has exited, with a description of how. */
  exited: Promise<string>;
  /** The last lines it printed, for error messages. */
  tail(): string;
  /** Waits for a line matching `pattern` on stdout; fails if the process exits first. */
  waitForLine(pattern: RegExp, timeoutMs: number): Promise<RegExpMatchArray>;
  /** SIGTERM, then SIGKILL after `graceMs`; idempotent. */
  stop(graceMs?: number): Promise<void>;
}

const TAIL_LINES = 40;

/** Starts `command` (by default this Node) with `args`; its output is drained and its tail kept. */
export function spawnChild(
  name: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  command: string = process.execPath,
): Child {
  const proc: ChildProcess = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env });
  if (proc.pid === undefined) throw new Error(`${name} did not start`);
  const lines: string[] = [];
  const listeners = new Set<(line: string) => void>();
  const collect = (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n')) {
      if (line === '') continue;
      lines.push(line);
      if (lines.length > TAIL_LINES) lines.shift();
      for (const listener of listeners) listener(line);
    }
  };
  proc.stdout?.on('data', collect);
  proc.stderr?.on('data', collect);
  const tail = () => lines.join('\n');
  const exited = new Promise<string>((resolve) => {
    // 'close', not 'exit': its last lines are read by then (waitForLine must not miss a final line).
    proc.once('close', (code, signal) => resolve(`${name} exited with ${signal ?? `code ${code}`}`));
    proc.once('error', (e) => resolve(`${name} could not run: ${e.message}`));
  });
  const running = () => proc.exitCode === null && proc.signalCode === null;
  const kill = () => {
    if (running()) proc.kill('SIGKILL');
  };
  let stopping: Promise<void> | undefined;
  const stop = (graceMs = 10_000) =>
    (stopping ??= (async () => {
      unregister();
      if (!running()) return;
      proc.kill('SIGTERM');
      const timer = setTimeout(kill, graceMs);
      await exited;
      clearTimeout(timer);
    })());
  // Ctrl-C or a crash of the benchmark must not leave children behind.
  const unregister = stopOnExit({ stop, kill });

  const waitForLine = (pattern: RegExp, timeoutMs: number) =>
    new Promise<RegExpMatchArray>((resolve, reject) => {
      const done = (error?: Error, match?: RegExpMatchArray) => {
        listeners.delete(onLine);
        clearTimeout(timer);
        if (error) reject(error);
        else resolve(match!);
      };
      const onLine = (line: string) => {
        const match = pattern.exec(line);
        if (match) done(undefined, match);
      };
      const timer = setTimeout(
        () => done(new Error(`${name} printed no line matching ${pattern} within ${timeoutMs} ms:\n${tail()}`)),
        timeoutMs,
      );
      listeners.add(onLine);
      void exited.then((how) => done(new Error(`${how} before it was ready:\n${tail()}`)));
    });

  return { name, pid: proc.pid, exited, tail, waitForLine, stop };
}

/** A field of /proc/<pid>/status in MB (VmRSS: now, VmHWM: peak), or undefined once the process is gone. */
export function procStatusMb(pid: number, field: 'VmRSS' | 'VmHWM'): number | undefined {
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Resets the kernel's peak-RSS mark (VmHWM) of a process, so the peak afterwards covers only what
 * follows (not the worker's start-up, which bundles the workflows). Linux ≥ 4.0; false if refused.
 */
export function resetPeakRss(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/** Resident MB by mapping (/proc smaps): a file, [heap] (malloc's main arena), [anon] (V8's heaps, other arenas, stacks). */
export function rssByMapping(pid: number): Record<string, number> {
  const by: Record<string, number> = {};
  let mapping = '';
  try {
    for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
      if (/^[0-9a-f]+-[0-9a-f]+ /.test(line)) mapping = line.split(/\s+/).slice(5).join(' ') || '[anon]';
      else if (line.startsWith('Rss:')) by[mapping] = (by[mapping] ?? 0) + Number(line.split(/\s+/)[1]) / 1024;
    }
  } catch {
    return {};
  }
  return Object.fromEntries(
    Object.entries(by)
      .filter(([, mb]) => mb >= 0.5)
      .sort((a, b) => b[1] - a[1])
      .map(([k, mb]) => [k, Math.round(mb * 10) / 10]),
  );
}

/**
 * Samples VmRSS every `everyMs`; `stop()` returns the highest value seen, and `peakMap()` the RSS by
 * mapping read when it was seen (where a peak's memory is: V8's heaps, malloc's arenas, files).
 */
export function sampleRss(pid: number, everyMs = 250): { stop(): number; peakMap(): Record<string, number> } {
  let max = 0;
  let map: Record<string, number> = {};
  const sample = () => {
    const rss = procStatusMb(pid, 'VmRSS') ?? 0;
    if (rss > max) {
      max = rss;
      map = rssByMapping(pid);
    }
  };
  sample();
  const timer = setInterval(sample, everyMs);
  return {
    stop() {
      clearInterval(timer);
      sample();
      return max;
    },
    peakMap: () => map,
  };
}

/** CPU seconds (user + system) a process and its descendants have used so far; 0 for processes gone. */
export function treeCpuSeconds(rootPid: number): number {
  const stats = new Map<number, { ppid: number; ticks: number }>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const text = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // Fields after the command name, which is in parentheses and may hold spaces.
      const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
      // utime + stime, and cutime + cstime: what its children that ended (and were waited for) used.
      const ticks = Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
      stats.set(Number(entry), { ppid: Number(fields[1]), ticks });
    } catch {
      // Gone meanwhile.
    }
  }
  let ticks = 0;
  const inTree = (pid: number): boolean => {
    for (let p: number | undefined = pid; p !== undefined && p > 1; p = stats.get(p)?.ppid)
      if (p === rootPid) return true;
    return false;
  };
  for (const [pid, s] of stats) if (inTree(pid)) ticks += s.ticks;
  // USER_HZ is 100 on every Linux this runs on.
  return ticks / 100;
}

/** The postmaster's pid, from the first line of postmaster.pid in the data directory. */
export function postmasterPid(dataDir: string): number | undefined {
  try {
    const pid = Number(readFileSync(`${dataDir}/postmaster.pid`, 'utf8').split('\n')[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** CPU seconds each process (with its children) used during a phase: robust where wall time is noisy. */
export type CpuSeconds = Record<string, number>;

/** Starts measuring the named process trees; the function returned says what each used since. */
export function cpuMeter(pids: Record<string, number | undefined>): () => CpuSeconds {
  const read = () =>
    Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, pid === undefined ? 0 : treeCpuSeconds(pid)]));
  const before = read();
  return () => {
    const after = read();
    return Object.fromEntries(Object.entries(after).map(([name, v]) => [name, v - (before[name] ?? 0)]));
  };
}

/**
 * CPU seconds this process's children have used once they ended and were reaped (cutime + cstime of
 * /proc/self/stat): how a child that exits before it can be read in /proc is measured.
 */
export function reapedChildrenCpuSeconds(): number {
  const text = readFileSync('/proc/self/stat', 'utf8');
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[13]) + Number(fields[14])) / 100;
}
