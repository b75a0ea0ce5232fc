import { ScheduleNotFoundError, type Client } from '@temporalio/client';
import { ddsyncSchedules, formatMs, MANAGED_BY, scheduleDifferences, type ScheduleConfig } from './schedules.ts';

/**
 * What `ddsync status` asks Temporal (the warehouse cannot know it): whether ddsync's schedules are
 * there, running and as configured, and whether any worker polls the task queue. Facts only; the
 * judging is in cli/status/judge.ts.
 */

export interface ScheduleFact {
  id: string;
  /** The configuration asks for it (false: a schedule of ddsync's it no longer asks for). */
  wanted: boolean;
  found: boolean;
  paused: boolean;
  note?: string;
  /** Fields where the server's schedule differs from the configuration (scheduleDifferences). */
  differences: string[];
  intervals: string[];
  nextActionAt?: Date;
  lastActionAt?: Date;
  /** When the schedule was last changed (a pause is a change), or created. */
  changedAt?: Date;
}

export interface TemporalFacts {
  schedules: ScheduleFact[];
  taskQueue: string;
  /** Workers that polled the task queue for workflow tasks lately (the server forgets one after some minutes). */
  pollers: number;
  lastPollAt?: Date;
}

/** temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW (the proto package is not a direct dependency). */
const WORKFLOW_TASK_QUEUE = 1;

export async function readTemporalFacts(client: Client, config: ScheduleConfig): Promise<TemporalFacts> {
  const { wanted, unwanted } = ddsyncSchedules(config);
  const schedules: ScheduleFact[] = [];
  for (const schedule of wanted) {
    const id = schedule.scheduleId;
    try {
      const d = await client.schedule.getHandle(id).describe();
      schedules.push({
        id,
        wanted: true,
        found: true,
        paused: d.state.paused,
        ...(d.state.note ? { note: d.state.note } : {}),
        differences: scheduleDifferences(schedule, d),
        intervals: (d.spec.intervals ?? []).map((i) => formatMs(i.every)),
        nextActionAt: d.info.nextActionTimes[0],
        lastActionAt: d.info.recentActions.at(-1)?.takenAt,
        changedAt: d.info.lastUpdatedAt ?? d.info.createdAt,
      });
    } catch (error) {
      if (!(error instanceof ScheduleNotFoundError)) throw error;
      schedules.push({ id, wanted: true, found: false, paused: false, differences: [], intervals: [] });
    }
  }
  // One the configuration no longer asks for still runs if nobody applied since (DDSYNC_WEBHOOKS emptied).
  for (const id of unwanted) {
    try {
      const d = await client.schedule.getHandle(id).describe();
      if (d.memo?.managedBy !== MANAGED_BY) continue;
      schedules.push({
        id,
        wanted: false,
        found: true,
        paused: d.state.paused,
        differences: [],
        intervals: (d.spec.intervals ?? []).map((i) => formatMs(i.every)),
      });
    } catch (error) {
      if (!(error instanceof ScheduleNotFoundError)) throw error;
    }
  }
  const { pollers } = await client.workflowService.describeTaskQueue({
    namespace: client.options.namespace,
    taskQueue: { name: config.temporal.taskQueue },
    taskQueueType: WORKFLOW_TASK_QUEUE,
  });
  const polls = (pollers ?? []).flatMap((p) =>
    p.lastAccessTime?.seconds == null
      ? []
      : [Number(p.lastAccessTime.seconds.toString()) * 1000 + Math.floor((p.lastAccessTime.nanos ?? 0) / 1e6)],
  );
  return {
    schedules,
    taskQueue: config.temporal.taskQueue,
    pollers: (pollers ?? []).length,
    ...(polls.length > 0 ? { lastPollAt: new Date(Math.max(...polls)) } : {}),
  };
}
