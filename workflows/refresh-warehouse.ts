import {
  CancellationScope,
  ContinueAsNew,
  ParentClosePolicy,
  continueAsNew,
  defineQuery,
  executeChild,
  setHandler,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import type { RunSummary } from '../warehouse/refresh/sweep.ts';
import type { SupplierToRead } from '../activities/refresh/activities.ts';
import { failureMessage } from './failure-message.ts';
import { isWarehouseFatal } from '../platform/run-problem.ts';
import { refreshActivities, type PageActivityMode, type RefreshTimeouts } from './refresh-activities.ts';
import { supplierPlotsWorkflowId, syncSupplierPlots } from './sync-supplier-plots.ts';
import { forEachInWindow } from './scheduling/sliding-window.ts';
import { CHILDREN_PER_RUN, mayStartChild } from './scheduling/continue-as-new.ts';

/**
 * A warehouse refresh: the supplier network, then every supplier's plots (one child workflow per
 * supplier, `supplierConcurrency` at a time) alongside the business's own plots and invitations, then
 * the sweep that soft-deletes what this complete run did not see and closes the run. A supplier
 * whose child fails is not swept and makes the run `partial`; the others are unaffected.
 */
export interface RefreshInput {
  /** Defaults to a new UUID; the sync_runs id. */
  runId?: string;
  /** Supplier children in flight at once (default 4). */
  supplierConcurrency?: number;
  /** Pages per supplier child before it continues as new (default 100). */
  pagesPerRun?: number;
  /** Pages of one supplier read at once (default 2). */
  pageWindow?: number;
  /** Supplier children started per workflow run before it continues as new (default 500: keeps history far below its limits). */
  childrenPerRun?: number;
  /** `task-queue` when a task-queue rate limit must cover page loads (see refresh-activities.ts). */
  pageActivities?: PageActivityMode;
  timeouts?: RefreshTimeouts;
  /** Carried across continue-as-new once the suppliers are being read. */
  progress?: { suppliers: SupplierToRead[]; next: number; failed: number };
}

export interface RefreshProgress {
  runId: string;
  phase: 'network' | 'plots' | 'finishing' | 'done';
  suppliersTotal: number;
  suppliersDone: number;
  suppliersFailed: number;
}

export const refreshProgressQuery = defineQuery<RefreshProgress>('progress');

export const refreshWorkflowId = (runId: string) => `refresh/${runId}`;

export async function refreshWarehouse(input: RefreshInput = {}): Promise<RunSummary> {
  const runId = input.runId ?? uuid4();
  const concurrency = Math.max(1, input.supplierConcurrency ?? 4);
  const progress: RefreshProgress = {
    runId,
    phase: 'network',
    suppliersTotal: 0,
    suppliersDone: 0,
    suppliersFailed: input.progress?.failed ?? 0,
  };
  setHandler(refreshProgressQuery, () => progress);
  const { beginRefresh, syncNetwork, syncInvitations, loadOwnPlots, finishRefresh } = refreshActivities(
    input.timeouts,
    input.pageActivities,
  );
  try {
    let state = input.progress;
    if (!state) {
      await beginRefresh({ runId });
      const { suppliers } = await syncNetwork({ runId });
      state = { suppliers, next: 0, failed: 0 };
      // Own plots and invitations run beside the first supplier children; both report their own outcome.
      const sideTasks = Promise.allSettled([loadOwnPlots({ runId }), syncInvitations({ runId })]);
      progress.phase = 'plots';
      const carried = await readSuppliers(runId, state, { concurrency, input }, progress);
      await sideTasks;
      if (carried) return await continueAsNew<typeof refreshWarehouse>({ ...input, runId, progress: carried });
    } else {
      progress.phase = 'plots';
      const carried = await readSuppliers(runId, state, { concurrency, input }, progress);
      if (carried) return await continueAsNew<typeof refreshWarehouse>({ ...input, runId, progress: carried });
    }
    progress.phase = 'finishing';
    const summary = await finishRefresh({ runId });
    progress.phase = 'done';
    return summary;
  } catch (error) {
    if (error instanceof ContinueAsNew) throw error;
    // Record the failure (the run ends `failed`, nothing is swept), even when cancelled, then fail.
    await CancellationScope.nonCancellable(() => finishRefresh({ runId, failure: failureMessage(error) }));
    throw error;
  }
}

/**
 * A sliding window of supplier children. Returns the state to continue as new with once this run
 * has started `childrenPerRun` children (in-flight ones are awaited first), or undefined when done.
 */
async function readSuppliers(
  runId: string,
  state: NonNullable<RefreshInput['progress']>,
  options: { concurrency: number; input: RefreshInput },
  progress: RefreshProgress,
): Promise<RefreshInput['progress'] | undefined> {
  const { suppliers } = state;
  const { pagesPerRun, pageWindow, pageActivities, timeouts } = options.input;
  const childrenPerRun = options.input.childrenPerRun ?? CHILDREN_PER_RUN;
  progress.suppliersTotal = suppliers.length;
  progress.suppliersDone = state.next - state.failed;
  let failed = state.failed;
  const next = await forEachInWindow(
    suppliers,
    {
      limit: options.concurrency,
      from: state.next,
      mayStart: (startedHere) => mayStartChild(startedHere, workflowInfo(), childrenPerRun),
    },
    (supplier) =>
      executeChild(syncSupplierPlots, {
        workflowId: supplierPlotsWorkflowId(runId, supplier.id),
        args: [
          {
            runId,
            supplierId: supplier.id,
            expectedPages: supplier.expectedPages,
            pagesPerRun,
            pageWindow,
            pageActivities,
            timeouts,
          },
        ],
        parentClosePolicy: ParentClosePolicy.TERMINATE,
        // Page loads run as local activities, which keep a workflow task open until they resolve or the
        // task nears its timeout (at 80 %, then a new task takes over). At the default 10 s a steady stream
        // of pages held each task 8 s: the SDK warns past 5 s (TMPRL1104), and page results reach history,
        // and a crash, a cancel or a signal is noticed, only at a task's end. 5 s: every 4 s at most.
        workflowTaskTimeout: '5 seconds',
      }).then(
        () => {
          progress.suppliersDone++;
        },
        // A failed supplier is recorded by its own workflow; the run goes on without it (and ends partial),
        // unless the warehouse itself cannot be used: then the run ends failed with that reason.
        (error: unknown) => {
          if (isWarehouseFatal(error)) throw error;
          failed++;
          progress.suppliersFailed++;
        },
      ),
  );
  return next < suppliers.length ? { suppliers, next, failed } : undefined;
}
