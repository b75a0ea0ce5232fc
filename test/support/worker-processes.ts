import { hostname } from 'node:os';
import type { Client } from '@temporalio/client';
import { runDdsync, type RunningCommand } from './processes.ts';

/** Values of temporal.api.enums.v1.TaskQueueType (the proto package is not a direct dependency). */
const TASK_QUEUE_TYPES = { workflow: 1, activity: 2 } as const;

/** A `ddsync worker` child process and the identity Temporal records for the tasks it runs. */
export interface WorkerProcess {
  command: RunningCommand;
  /** The Temporal SDK's default worker identity, `<pid>@<hostname>`: what history events carry. */
  identity: string;
}

/** The identities polling `taskQueue` for workflow and for activity tasks (both, not either). */
export async function pollingIdentities(client: Client, taskQueue: string): Promise<Set<string>> {
  const perType = await Promise.all(
    Object.values(TASK_QUEUE_TYPES).map(async (taskQueueType) => {
      const described = await client.workflowService.describeTaskQueue({
        namespace: client.options.namespace,
        taskQueue: { name: taskQueue },
        taskQueueType,
      });
      return new Set((described.pollers ?? []).map((p) => p.identity ?? ''));
    }),
  );
  return new Set([...perType[0]!].filter((id) => perType.every((s) => s.has(id))));
}

/**
 * Starts `count` real `ddsync worker` processes with `env` (one task queue, one warehouse) and waits
 * until Temporal itself lists each of them polling the task queue for workflow and activity tasks.
 * Each started process is passed to `track` at once, so a test's teardown kills it whatever happens next.
 */
export async function startWorkerProcesses(
  count: number,
  env: NodeJS.ProcessEnv,
  client: Client,
  track: (worker: WorkerProcess) => void,
  timeoutMs = 120_000,
): Promise<WorkerProcess[]> {
  const taskQueue = env.TEMPORAL_TASK_QUEUE!;
  const workers = Array.from({ length: count }, () => {
    const command = runDdsync(['worker'], env);
    const worker = { command, identity: `${command.child.pid}@${hostname()}` };
    track(worker);
    return worker;
  });
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const dead = workers.find((w) => w.command.child.exitCode !== null || w.command.child.signalCode !== null);
    if (dead)
      throw new Error(`worker ${dead.identity} exited before it polled ${taskQueue}:\n${dead.command.output()}`);
    const polling = await pollingIdentities(client, taskQueue);
    if (workers.every((w) => polling.has(w.identity))) return workers;
    if (Date.now() > deadline)
      throw new Error(
        `workers ${workers.map((w) => w.identity).join(', ')} did not all poll ${taskQueue} within ${timeoutMs} ms (polling: ${[...polling].join(', ')})`,
      );
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** SIGKILL: the process gets no chance to hand anything back, as when a machine dies. */
export async function killWorker(worker: WorkerProcess): Promise<void> {
  if (worker.command.child.exitCode === null && worker.command.child.signalCode === null)
    worker.command.child.kill('SIGKILL');
  await worker.command.exited;
}
