import { proxyActivities, proxyLocalActivities, type ActivityOptions } from '@temporalio/workflow';
import type { RefreshActivities } from '../activities/refresh/activities.ts';

/**
 * Timeouts and retries of the refresh's activities. Every activity heartbeats (activities/keep-alive.ts),
 * so a worker that dies mid-page is noticed within `heartbeatTimeout` and the page runs again
 * elsewhere. Upstream calls retry inside the client first; the activity retries on top, bounded, so a
 * long outage ends the supplier as failed (the run is `partial`) rather than hanging.
 */
export interface RefreshTimeouts {
  /** How soon a dead worker's activity is retried elsewhere (default 30 s). */
  heartbeatTimeout?: ActivityOptions['heartbeatTimeout'];
}

/**
 * How page loads run. `local` (the default): as local activities, in the worker that runs the
 * supplier's workflow, without a round trip through the server per page: about half the server
 * work and a lower latency per page. `task-queue`: as ordinary activities, so a task-queue rate
 * limit (DDSYNC_TASK_QUEUE_RPS) spreads them over every worker within the upstream's budget.
 */
export type PageActivityMode = 'local' | 'task-queue';

const upstreamRetry = {
  initialInterval: '1 second',
  backoffCoefficient: 2,
  maximumInterval: '1 minute',
  maximumAttempts: 8,
} as const;
const bookkeepingRetry = {
  initialInterval: '1 second',
  backoffCoefficient: 2,
  maximumInterval: '30 seconds',
  maximumAttempts: 20,
} as const;

export function refreshActivities(timeouts: RefreshTimeouts = {}, pages: PageActivityMode = 'local') {
  const heartbeatTimeout = timeouts.heartbeatTimeout ?? '30 seconds';
  const remote = proxyActivities<RefreshActivities>({
    startToCloseTimeout: '10 minutes',
    heartbeatTimeout,
    retry: upstreamRetry,
  });
  return {
    // proxyActivities returns a Proxy: spreading it copies nothing, so the names are picked.
    ...pick(remote, 'syncNetwork', 'syncInvitations'),
    loadPlotPage:
      pages === 'local'
        ? proxyLocalActivities<RefreshActivities>({ startToCloseTimeout: '10 minutes', retry: upstreamRetry })
            .loadPlotPage
        : remote.loadPlotPage,
    // Runs of pages (activities/refresh/page-run.ts), in local mode only: a task-queue rate limit counts
    // activities, so in task-queue mode every page stays an activity of its own.
    loadPlotPages: proxyLocalActivities<RefreshActivities>({ startToCloseTimeout: '10 minutes', retry: upstreamRetry })
      .loadPlotPages,
    // Bookkeeping in the warehouse only: local, whatever the page mode.
    closeSupplierScan: proxyLocalActivities<RefreshActivities>({
      startToCloseTimeout: '1 minute',
      retry: bookkeepingRetry,
    }).closeSupplierScan,
    ...pick(
      proxyActivities<RefreshActivities>({ startToCloseTimeout: '4 hours', heartbeatTimeout, retry: upstreamRetry }),
      'loadOwnPlots',
      'verifySupplierScan',
    ),
    ...pick(
      proxyActivities<RefreshActivities>({ startToCloseTimeout: '1 hour', heartbeatTimeout, retry: bookkeepingRetry }),
      'finishRefresh',
      'finishSupplier',
      'beginRefresh',
    ),
  };
}

function pick<T extends object, K extends keyof T>(source: T, ...keys: K[]): Pick<T, K> {
  const out = {} as Pick<T, K>;
  for (const k of keys) out[k] = source[k];
  return out;
}
