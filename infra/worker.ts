import { packagePath } from '../platform/package-root.ts';
import { existsSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { Worker, type WorkerOptions } from '@temporalio/worker';
import type { NativeConnection } from '@temporalio/worker';
import { activityInterceptors, createActivities, type ActivityDeps } from '../activities/index.ts';
import { Outage } from '../platform/outage.ts';

export const WORKFLOWS_PATH = packagePath('workflows', 'index.ts');
/** The prebuilt workflow bundle (npm run build), shipped in the package. */
export const PACKAGED_WORKFLOW_BUNDLE = packagePath('dist', 'workflow-bundle.cjs');

export interface DdsyncWorkerOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  deps: ActivityDeps;
  /** The process's record of warehouse outages (one log line each); a new one by default. */
  warehouseOutage?: Outage;
  /** Called once when the warehouse cannot be used at all (credentials, schema): the caller stops the worker. */
  onWarehouseFatal?: (reason: string, runId: string | undefined) => void;
  maxConcurrentActivities?: number;
  /** Workflows kept in memory between their steps (default 1000). */
  cachedWorkflows?: number;
  taskQueueActivitiesPerSecond?: number;
  /** A bundle made by `npm run build`; without one, workflows are bundled at start (≈1 s). */
  workflowBundlePath?: string;
  /** Tests bundle once and pass the code to every worker. */
  workflowBundle?: { code: string };
  /**
   * The semi-space size (MB) of the workflow thread's V8 young generation, if not the process's own
   * (--max-semi-space-size, which a worker thread inherits). See WORKFLOW_THREAD_SEMI_SPACE_MB.
   */
  workflowThreadSemiSpaceMb?: number;
}

/** The process's --max-semi-space-size (0: V8 sizes it), to give back after the workflow thread starts. */
function processSemiSpaceMb(): number {
  const flag = process.execArgv.findLast((arg) => /^--max[-_]semi[-_]space[-_]size=/.test(arg));
  return flag ? Number(flag.split('=')[1]) : 0;
}

/**
 * Worker.create starts the workflow thread, whose isolate reads V8's heap flags when it is created: the
 * flag is set for that moment only, then set back, so isolates made later get the process's own.
 */
async function withSemiSpace<T>(mb: number | undefined, create: () => Promise<T>): Promise<T> {
  if (mb === undefined) return create();
  setFlagsFromString(`--max-semi-space-size=${mb}`);
  try {
    return await create();
  } finally {
    setFlagsFromString(`--max-semi-space-size=${processSemiSpaceMb()}`);
  }
}

/** The one place a ddsync worker is assembled, for the CLI, the demo and the tests alike. */
export async function createDdsyncWorker(options: DdsyncWorkerOptions): Promise<Worker> {
  const bundle: Pick<WorkerOptions, 'workflowBundle' | 'workflowsPath'> = options.workflowBundle
    ? { workflowBundle: options.workflowBundle }
    : options.workflowBundlePath && existsSync(options.workflowBundlePath)
      ? { workflowBundle: { codePath: options.workflowBundlePath } }
      : existsSync(WORKFLOWS_PATH)
        ? { workflowsPath: WORKFLOWS_PATH }
        : // An installed package has no workflow sources (Temporal's bundler would not compile TypeScript
          // under node_modules anyway): it runs the bundle built with it.
          { workflowBundle: { codePath: PACKAGED_WORKFLOW_BUNDLE } };
  return withSemiSpace(options.workflowThreadSemiSpaceMb, () =>
    Worker.create({
      connection: options.connection,
      namespace: options.namespace,
      taskQueue: options.taskQueue,
      ...bundle,
      activities: createActivities(options.deps),
      // Registered here once, so every activity (a new one too) gets them, not only those a factory wraps.
      interceptors: {
        activity: activityInterceptors({
          db: options.deps.db,
          outage: options.warehouseOutage ?? new Outage({ name: 'the warehouse', log: options.deps.log }),
          ...(options.onWarehouseFatal ? { onFatal: options.onWarehouseFatal } : {}),
        }),
      },
      maxConcurrentActivityTaskExecutions: options.maxConcurrentActivities ?? 16,
      ...(options.taskQueueActivitiesPerSecond
        ? { maxTaskQueueActivitiesPerSecond: options.taskQueueActivitiesPerSecond }
        : {}),
      shutdownGraceTime: '10 seconds',
      // The SDK sizes its workflow cache from the heap limit, which is small in production
      // (infra/production.ts), giving 10. Too small a cache makes every step of an evicted workflow a
      // full replay of its history: a bulk submission keeps one workflow per transaction waiting.
      maxCachedWorkflows: options.cachedWorkflows ?? 1000,
    }),
  );
}
