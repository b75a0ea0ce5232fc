import type { Client, WorkflowHandle } from '@temporalio/client';

/**
 * Which worker ran what, read from Temporal itself: the histories of a workflow, every run of it
 * (continue-as-new) and, recursively, every child workflow it started. Nothing the workers say about
 * themselves is trusted.
 *
 * - An ordinary activity: its ActivityTaskStarted event carries the identity of the worker that ran
 *   it (its last attempt: an attempt lost with a killed worker is retried, and recorded, elsewhere).
 * - A local activity runs inside the worker that runs its workflow's task and is recorded as a marker
 *   with the WorkflowTaskCompleted event it was reported with, whose identity is that worker's.
 */
export interface ActivityRun {
  workflowId: string;
  activityType: string;
  identity: string;
  local: boolean;
}

type History = Awaited<ReturnType<WorkflowHandle['fetchHistory']>>;
type HistoryEvent = NonNullable<History['events']>[number];

const LOCAL_ACTIVITY_MARKER = 'core_local_activity';

/** The activity type and attempt a local activity's marker records (JSON written by the SDK's core). */
function localActivityData(event: HistoryEvent): { activityType: string; attempt: number } {
  const payload = event.markerRecordedEventAttributes?.details?.['data']?.payloads?.[0]?.data;
  try {
    const data = JSON.parse(new TextDecoder().decode(payload ?? new Uint8Array())) as {
      activity_type?: string;
      attempt?: number;
    };
    return { activityType: data.activity_type ?? 'local activity', attempt: data.attempt ?? 1 };
  } catch {
    return { activityType: 'local activity', attempt: 1 };
  }
}

/** The runs of one workflow history, and how many of its tasks were done again after a loss. */
function readHistory(workflowId: string, events: readonly HistoryEvent[]): { runs: ActivityRun[]; retried: Retried } {
  const byId = new Map(events.map((e) => [Number(e.eventId), e]));
  const runs: ActivityRun[] = [];
  const retried: Retried = { workflowTasksTimedOut: 0, activityAttemptsAfterFirst: 0 };
  for (const e of events) {
    if (e.workflowTaskTimedOutEventAttributes) retried.workflowTasksTimedOut++;
    const started = e.activityTaskStartedEventAttributes;
    if (started) {
      const scheduled = byId.get(Number(started.scheduledEventId))?.activityTaskScheduledEventAttributes;
      runs.push({
        workflowId,
        activityType: scheduled?.activityType?.name ?? '?',
        identity: started.identity ?? '',
        local: false,
      });
      retried.activityAttemptsAfterFirst += Math.max(0, (started.attempt ?? 1) - 1);
    }
    const marker = e.markerRecordedEventAttributes;
    if (marker?.markerName === LOCAL_ACTIVITY_MARKER) {
      const completed = byId.get(Number(marker.workflowTaskCompletedEventId))?.workflowTaskCompletedEventAttributes;
      const data = localActivityData(e);
      runs.push({ workflowId, activityType: data.activityType, identity: completed?.identity ?? '', local: true });
      retried.activityAttemptsAfterFirst += Math.max(0, data.attempt - 1);
    }
  }
  return { runs, retried };
}

/** Work done again because a worker was lost (or an attempt failed). */
export interface Retried {
  /** Workflow tasks that timed out: started by a worker that never finished them, or waiting for a dead worker's sticky queue. */
  workflowTasksTimedOut: number;
  /** Activity attempts after the first (of the attempts histories record: an activity's last). */
  activityAttemptsAfterFirst: number;
}

export interface WorkflowTreeReading {
  runs: ActivityRun[];
  /** Workflows still open, each with the worker that took its last workflow task (the one whose cache holds it). */
  open: Array<{ workflowId: string; identity: string }>;
  retried: Retried;
}

/** Whether an event closes its run (completed, failed, timed out, terminated, cancelled, continued as new). */
const closes = (e: HistoryEvent | undefined) =>
  Boolean(
    e &&
      (e.workflowExecutionCompletedEventAttributes ||
        e.workflowExecutionFailedEventAttributes ||
        e.workflowExecutionTimedOutEventAttributes ||
        e.workflowExecutionTerminatedEventAttributes ||
        e.workflowExecutionCanceledEventAttributes ||
        e.workflowExecutionContinuedAsNewEventAttributes),
  );

/**
 * The workflows `rootIds` and all their descendants, over every run of each (following continue-as-new
 * back to the first run): every activity run (open workflows with what they have run so far), which
 * worker holds each open workflow, and what was done again.
 */
export async function readWorkflowTree(client: Client, rootIds: readonly string[]): Promise<WorkflowTreeReading> {
  const seen = new Set<string>(rootIds);
  const reading: WorkflowTreeReading = {
    runs: [],
    open: [],
    retried: { workflowTasksTimedOut: 0, activityAttemptsAfterFirst: 0 },
  };
  /** Reads every run of one workflow; returns the children it started. */
  const visit = async (workflowId: string): Promise<string[]> => {
    const children: string[] = [];
    let runId: string | undefined;
    let latest = true;
    do {
      const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
      const events = history.events ?? [];
      const { runs, retried } = readHistory(workflowId, events);
      reading.runs.push(...runs);
      reading.retried.workflowTasksTimedOut += retried.workflowTasksTimedOut;
      reading.retried.activityAttemptsAfterFirst += retried.activityAttemptsAfterFirst;
      if (latest && !closes(events.at(-1))) {
        const lastTask = events.findLast((e) => e.workflowTaskStartedEventAttributes);
        const identity = lastTask?.workflowTaskStartedEventAttributes?.identity;
        if (identity) reading.open.push({ workflowId, identity });
      }
      latest = false;
      for (const e of events) {
        const child = e.childWorkflowExecutionStartedEventAttributes?.workflowExecution?.workflowId;
        if (child) children.push(child);
      }
      runId = events[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId || undefined;
    } while (runId);
    return children;
  };
  // Generation by generation, a few histories at a time: a bulk submission may have hundreds of workflows.
  let generation = [...seen];
  while (generation.length > 0) {
    const next: string[] = [];
    for (let i = 0; i < generation.length; i += 16) {
      const found = await Promise.all(generation.slice(i, i + 16).map(visit));
      for (const child of found.flat())
        if (!seen.has(child)) {
          seen.add(child);
          next.push(child);
        }
    }
    generation = next;
  }
  return reading;
}

/** Every activity run of the workflows `rootIds` and of all their descendants (readWorkflowTree). */
export async function activityRuns(client: Client, rootIds: readonly string[]): Promise<ActivityRun[]> {
  return (await readWorkflowTree(client, rootIds)).runs;
}

/** Activity runs per worker identity, then per activity type (local ones marked `(local)`). */
export function runsByIdentity(runs: readonly ActivityRun[]): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  for (const r of runs) {
    const type = r.local ? `${r.activityType} (local)` : r.activityType;
    const mine = (out[r.identity] ??= {});
    mine[type] = (mine[type] ?? 0) + 1;
  }
  return out;
}

/** PENDING_ACTIVITY_STATE_STARTED of temporal.api.enums.v1.PendingActivityState. */
const STARTED = 2;

/**
 * Ordinary activities of the workflows `workflowIds` that a worker is running now (started, not
 * finished), as the server sees them: the identity of the worker that took the current attempt.
 * A history records an activity only once it has ended; this is what is under way.
 */
export async function runningActivities(client: Client, workflowIds: readonly string[]): Promise<ActivityRun[]> {
  const running: ActivityRun[] = [];
  for (const workflowId of workflowIds) {
    const { raw } = await client.workflow.getHandle(workflowId).describe();
    for (const a of raw.pendingActivities ?? [])
      if (Number(a.state) === STARTED && a.lastWorkerIdentity)
        running.push({
          workflowId,
          activityType: a.activityType?.name ?? '?',
          identity: a.lastWorkerIdentity,
          local: false,
        });
  }
  return running;
}
