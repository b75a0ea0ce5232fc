// The real thing: `ddsync worker` as a child process (its own CPU time and memory, measurable in
// /proc), and refreshes started through a Temporal client and timed until they complete.
import type { Client } from '@temporalio/client';
import type { RunSummary } from '../../warehouse/refresh/sweep.ts';
import type { refreshWarehouse } from '../../workflows/refresh-warehouse.ts';
import { sampleRss, spawnChild, type Child } from './children.ts';

import { packagePath } from '../../platform/package-root.ts';
import { BUILT_CLI, BUILT_WORKFLOW_BUNDLE, WORKER_ENV } from '../../infra/production.ts';
// Values of temporal.api.enums.v1.TaskQueueType (the proto package is not a direct dependency).
const TASK_QUEUE_TYPES = { workflow: 1, activity: 2 } as const;

export interface RefreshRun {
  summary: RunSummary;
  /** From starting the workflow to its result, as a client sees it. */
  seconds: number;
  /** Highest VmRSS of a worker sampled during the run. */
  sampledPeakRssMb: number;
  /** That worker's RSS by mapping (MB) when it was sampled. */
  sampledPeakRssByMapping: Record<string, number>;
  /** Scheduled → completed of the last activity (finishRefresh: the sweep and totals), from history. */
  finishSeconds: number | undefined;
  /** finishRefresh's steps (sweep, statistics, overlaps, duplicates, summaries), from the worker's log. */
  finishSteps: Record<string, number> | undefined;
}

/**
 * Starts the worker as production runs it (the built CLI, the prebuilt workflow bundle, `nodeFlags`)
 * and waits until it polls both the workflow and the activity task queue.
 */
export async function startWorker(
  env: NodeJS.ProcessEnv,
  client: Client,
  taskQueue: string,
  nodeFlags: readonly string[],
  timeoutMs = 120_000,
): Promise<Child> {
  const worker = spawnChild(
    'worker',
    [...nodeFlags, packagePath(BUILT_CLI), 'worker', '--bundle', packagePath(BUILT_WORKFLOW_BUNDLE)],
    { ...WORKER_ENV, ...env },
  );
  let exit: string | undefined;
  void worker.exited.then((how) => {
    exit = how;
  });
  // At DDSYNC_LOG_LEVEL=warn the worker prints nothing when ready: ask Temporal who polls instead.
  const deadline = Date.now() + timeoutMs;
  while (!(await hasPollers(client, taskQueue))) {
    if (exit) throw new Error(`${exit} before it polled ${taskQueue}:\n${worker.tail()}`);
    if (Date.now() > deadline) {
      await worker.stop();
      throw new Error(`the worker did not poll ${taskQueue} within ${timeoutMs} ms:\n${worker.tail()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return worker;
}

async function hasPollers(client: Client, taskQueue: string): Promise<boolean> {
  for (const taskQueueType of Object.values(TASK_QUEUE_TYPES)) {
    const described = await client.workflowService.describeTaskQueue({
      namespace: client.options.namespace,
      taskQueue: { name: taskQueue },
      taskQueueType,
    });
    if ((described.pollers ?? []).length === 0) return false;
  }
  return true;
}

/** What the refresh is started with: the schedule's defaults unless a flag of the benchmark says otherwise. */
export interface RefreshArgs {
  supplierConcurrency: number;
  pageWindow?: number;
  pageActivities?: 'local' | 'task-queue';
}

/** One refresh, timed; fails if a worker dies meanwhile. */
export async function runRefresh(
  client: Client,
  taskQueue: string,
  workers: readonly Child[],
  workflowId: string,
  args: RefreshArgs,
): Promise<RefreshRun> {
  const samplers = workers.map((w) => sampleRss(w.pid));
  // The highest of the workers' peaks, with its RSS by mapping.
  const sampledPeak = () =>
    samplers
      .map((s) => ({ mb: s.stop(), byMapping: s.peakMap() }))
      .reduce((a, b) => (b.mb > a.mb ? b : a), { mb: 0, byMapping: {} as Record<string, number> });
  // The worker logs 'refresh finished' with each step's seconds (activities/refresh/activities.ts).
  const finishLines = workers.map((w) =>
    w.waitForLine(/^(?=.*"msg":"refresh finished").*"stepSeconds":(\{[^}]*\})/, 3_600_000).then(
      (match) => JSON.parse(match[1]!) as Record<string, number>,
      () => undefined,
    ),
  );
  try {
    const started = performance.now();
    const handle = await client.workflow.start<typeof refreshWarehouse>('refreshWarehouse', {
      taskQueue,
      workflowId,
      args: [args],
    });
    const died = Promise.race(
      workers.map((worker) =>
        worker.exited.then((how): never => {
          throw new Error(`${how} during refresh ${workflowId}:\n${worker.tail()}`);
        }),
      ),
    );
    const summary = await Promise.race([handle.result(), died]);
    const seconds = (performance.now() - started) / 1000;
    const peak = sampledPeak();
    if (summary.status === 'failed') throw new Error(`refresh ${workflowId} failed: ${summary.error}`);
    return {
      summary,
      seconds,
      sampledPeakRssMb: peak.mb,
      sampledPeakRssByMapping: peak.byMapping,
      finishSeconds: await activitySeconds(client, workflowId, 'finishRefresh'),
      finishSteps: await Promise.race([
        Promise.any(finishLines.map((line) => line.then((steps) => steps ?? Promise.reject()))).catch(() => undefined),
        new Promise<undefined>((resolve) => setTimeout(resolve, 2_000, undefined).unref()),
      ]),
    };
  } finally {
    sampledPeak();
  }
}

/** How long an activity of the workflow's latest run took, scheduled to completed (its last attempt included). */
async function activitySeconds(client: Client, workflowId: string, activityType: string): Promise<number | undefined> {
  const { events } = await client.workflow.getHandle(workflowId).fetchHistory();
  const millis = (e: (typeof events & object)[number]) =>
    Number(e.eventTime?.seconds ?? 0) * 1000 + (e.eventTime?.nanos ?? 0) / 1e6;
  const scheduled = (events ?? []).find(
    (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === activityType,
  );
  if (!scheduled) return undefined;
  const completed = (events ?? []).find(
    (e) => Number(e.activityTaskCompletedEventAttributes?.scheduledEventId ?? -1) === Number(scheduled.eventId),
  );
  return completed ? (millis(completed) - millis(scheduled)) / 1000 : undefined;
}
