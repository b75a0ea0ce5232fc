/**
 * `npx ddsync …` and `npm exec` do not pass SIGTERM on to the command they started: a supervisor
 * that signals the npm process it knows leaves ddsync running as an orphan. Started by npm, ddsync
 * therefore watches its parent and, once the parent has gone, sends itself SIGTERM, so the same
 * graceful shutdown runs as for a signal sent to ddsync itself (a worker drains, the demo and the
 * stack stop their servers). Started any other way (node, the Docker image), nothing changes.
 */
export function stopWhenNpmParentExits(env: NodeJS.ProcessEnv = process.env, everyMs = 250): void {
  if (!env['npm_execpath']) return;
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    process.kill(process.pid, 'SIGTERM');
  }, everyMs);
  // Never what keeps the process alive.
  timer.unref();
}
