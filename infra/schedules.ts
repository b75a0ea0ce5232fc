import { isDeepStrictEqual } from 'node:util';
import {
  ScheduleAlreadyRunning,
  ScheduleNotFoundError,
  ScheduleOverlapPolicy,
  type Client,
  type ScheduleDescription,
} from '@temporalio/client';
// Type-only: the names are checked against the worker's workflows without loading workflow code into the CLI.
import type * as workflows from '../workflows/index.ts';
import type { RefreshInput } from '../workflows/refresh-warehouse.ts';
import type { MaintainWebhooksInput } from '../workflows/maintain-webhooks.ts';
import { parseDesiredWebhooks } from '../schema/desired-webhooks.ts';
import { durationMs } from '../platform/config.ts';

/**
 * The Temporal Schedules ddsync owns, built from configuration, and an idempotent way to make the
 * server hold exactly them (`ddsync schedule apply`): the warehouse refresh, the webhook upkeep
 * (reconcile, then pull attempts and stats) and the survey-response PDF archive.
 */

/** Written into each schedule's memo on create, so `ddsync schedule list` can tell ddsync's schedules apart. */
export const MANAGED_BY = 'ddsync';

/** A whole number of seconds, minutes, hours or days (DDSYNC_REFRESH_INTERVAL's form); Temporal reads it as is. */
export type DurationText = `${number}${'s' | 'm' | 'h' | 'd'}`;

export type WorkflowName = keyof typeof workflows;

/**
 * One schedule as ddsync wants it. It is a narrowed Temporal `ScheduleOptions` (create takes it as
 * it is): intervals only, and only the fields `applySchedules` compares, so nothing is set that
 * an apply would not also keep in line.
 */
export interface ManagedSchedule {
  scheduleId: string;
  spec: { intervals: Array<{ every: DurationText }> };
  action: { type: 'startWorkflow'; workflowType: WorkflowName; workflowId: string; taskQueue: string; args: unknown[] };
  policies: { overlap: ScheduleOverlapPolicy; catchupWindow: DurationText };
  memo: { managedBy: typeof MANAGED_BY; purpose: string };
}

/** The configuration the schedules are built from (the `temporal` and `refresh` sections of platform/config.ts). */
export interface ScheduleConfig {
  temporal: { taskQueue: string };
  refresh: { interval: string; supplierConcurrency: number; pageActivities?: 'local' | 'task-queue' };
  /** Without it (or with no desired webhook) there is no webhook schedule. */
  webhooks?: { desired: string; interval: string };
  pdfs?: { interval: string };
}

export const WEBHOOKS_SCHEDULE_ID = 'ddsync-webhooks';
export const PDF_ARCHIVE_SCHEDULE_ID = 'ddsync-pdf-archive';

export const REFRESH_SCHEDULE_ID = 'ddsync-refresh';

/**
 * Ten minutes: a refresh missed while the server was down still runs if the server is back within
 * that time, otherwise the next interval does it. Set explicitly, since the SDK documents a default
 * of one year, its describe() assumes one minute, and the server's has changed between versions.
 */
const CATCHUP_WINDOW: DurationText = '10m';

/**
 * The shape every ddsync schedule shares: one interval, one workflow on the task queue, overlap
 * skip, the catch-up window, and the memo that marks it as ddsync's.
 */
function managedSchedule(
  config: ScheduleConfig,
  s: {
    scheduleId: string;
    interval: string;
    intervalSetting: string;
    workflowType: WorkflowName;
    args: unknown[];
    purpose: string;
  },
): ManagedSchedule {
  return {
    scheduleId: s.scheduleId,
    spec: { intervals: [{ every: durationText(s.interval, s.intervalSetting) }] },
    // Temporal appends the scheduled time to the workflow id, so runs are `ddsync-refresh-2026-…Z`.
    action: {
      type: 'startWorkflow',
      workflowType: s.workflowType,
      workflowId: s.scheduleId,
      taskQueue: config.temporal.taskQueue,
      args: s.args,
    },
    // A run that outlasts its interval is not doubled: the next one is skipped.
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: CATCHUP_WINDOW },
    memo: { managedBy: MANAGED_BY, purpose: s.purpose },
  };
}

/** The periodic warehouse refresh. `scheduleId` is for tests, which must not share the real id. */
export function refreshSchedule(config: ScheduleConfig, options: { scheduleId?: string } = {}): ManagedSchedule {
  const args: [RefreshInput] = [refreshInputFrom(config.refresh)];
  return managedSchedule(config, {
    scheduleId: options.scheduleId ?? REFRESH_SCHEDULE_ID,
    interval: config.refresh.interval,
    intervalSetting: 'refresh.interval (DDSYNC_REFRESH_INTERVAL)',
    workflowType: 'refreshWarehouse',
    args,
    purpose: 'refresh the warehouse from the due-diligence service',
  });
}

/** The input of a refresh as configured (DDSYNC_REFRESH_*): the schedule and `ddsync refresh` start the same. */
export function refreshInputFrom(refresh: ScheduleConfig['refresh']): RefreshInput {
  return {
    supplierConcurrency: refresh.supplierConcurrency,
    ...(refresh.pageActivities === 'task-queue' ? { pageActivities: 'task-queue' as const } : {}),
  };
}

/** Reconcile the desired webhooks (baked into the schedule: apply again after changing DDSYNC_WEBHOOKS), pull attempts and stats. */
export function webhooksSchedule(config: ScheduleConfig): ManagedSchedule | undefined {
  if (!config.webhooks) return undefined;
  const desired = parseDesiredWebhooks(config.webhooks.desired);
  if (desired.length === 0) return undefined;
  const args: [MaintainWebhooksInput] = [{ desired }];
  return managedSchedule(config, {
    scheduleId: WEBHOOKS_SCHEDULE_ID,
    interval: config.webhooks.interval,
    intervalSetting: 'webhooks.interval (DDSYNC_WEBHOOKS_INTERVAL)',
    workflowType: 'maintainWebhooks',
    args,
    purpose: 'keep the webhooks registered and pull their attempts and stats',
  });
}

/** Archive the queued survey-response PDFs that are due. */
export function pdfArchiveSchedule(config: ScheduleConfig): ManagedSchedule | undefined {
  if (!config.pdfs) return undefined;
  return managedSchedule(config, {
    scheduleId: PDF_ARCHIVE_SCHEDULE_ID,
    interval: config.pdfs.interval,
    intervalSetting: 'pdfs.interval (DDSYNC_PDF_INTERVAL)',
    workflowType: 'archiveSurveyPdfs',
    args: [{}],
    purpose: 'archive the survey-response PDFs that are due',
  });
}

/** Every schedule ddsync manages, in the order they are applied and printed. */
const SCHEDULES: ReadonlyArray<readonly [id: string, build: (config: ScheduleConfig) => ManagedSchedule | undefined]> =
  [
    [REFRESH_SCHEDULE_ID, (config) => refreshSchedule(config)],
    [WEBHOOKS_SCHEDULE_ID, webhooksSchedule],
    [PDF_ARCHIVE_SCHEDULE_ID, pdfArchiveSchedule],
  ];

/** Every schedule the configuration asks for, and the ids of ddsync's schedules it does not (to retire). */
export function ddsyncSchedules(config: ScheduleConfig): { wanted: ManagedSchedule[]; unwanted: string[] } {
  const built = SCHEDULES.map(([id, build]) => [id, build(config)] as const);
  return {
    wanted: built.flatMap(([, schedule]) => (schedule ? [schedule] : [])),
    unwanted: built.flatMap(([id, schedule]) => (schedule ? [] : [id])),
  };
}

function durationText(text: string, field: string): DurationText {
  if (!/^[1-9]\d*[smhd]$/.test(text))
    throw new Error(`${field} must be a whole number followed by s, m, h or d (e.g. 45m, 6h), got "${text}"`);
  return text as DurationText;
}

export type ApplyOutcome = 'created' | 'updated' | 'unchanged' | 'deleted';

export interface AppliedSchedule {
  id: string;
  outcome: ApplyOutcome;
  /** What differed on the server before an update (names as in `scheduleDifferences`); empty otherwise. */
  changed: string[];
}

/**
 * Makes the server hold each schedule as specified: creates a missing one, updates one that differs,
 * and leaves an identical one untouched (no update call, so its conflict token and update time stay).
 * Whether a schedule is paused, and its note, belong to the operator and survive updates.
 */
export async function applySchedules(client: Client, schedules: ManagedSchedule[]): Promise<AppliedSchedule[]> {
  const results: AppliedSchedule[] = [];
  for (const schedule of schedules) results.push(await applySchedule(client, schedule));
  return results;
}

/**
 * Deletes the schedules among `ids` that ddsync created (their memo says so) and the configuration
 * no longer asks for: with DDSYNC_WEBHOOKS emptied, the webhooks schedule would otherwise go on
 * re-creating the webhooks it lists. A schedule someone else made under such an id is left alone.
 */
export async function retireSchedules(client: Client, ids: readonly string[]): Promise<AppliedSchedule[]> {
  const results: AppliedSchedule[] = [];
  for (const id of ids) {
    const handle = client.schedule.getHandle(id);
    try {
      const { memo } = await handle.describe();
      if (memo?.managedBy !== MANAGED_BY) continue;
      await handle.delete();
      results.push({ id, outcome: 'deleted', changed: [] });
    } catch (error) {
      if (!(error instanceof ScheduleNotFoundError)) throw error;
    }
  }
  return results;
}

async function applySchedule(client: Client, schedule: ManagedSchedule): Promise<AppliedSchedule> {
  const id = schedule.scheduleId;
  try {
    await client.schedule.create(schedule);
    return { id, outcome: 'created', changed: [] };
  } catch (error) {
    if (!(error instanceof ScheduleAlreadyRunning)) throw error;
  }
  const handle = client.schedule.getHandle(id);
  const changed = scheduleDifferences(schedule, await handle.describe());
  if (changed.length === 0) return { id, outcome: 'unchanged', changed };
  // update() sends a whole schedule: start from the server's (timezone, jitter, retry policy,
  // pauseOnFailure and the like stay as they are) and impose ddsync's fields. Without `state` the
  // server would unpause the schedule and clear its note. The memo cannot be updated (the SDK's
  // update has no memo), and the server keeps it.
  await handle.update((previous) => ({
    ...previous,
    spec: { ...previous.spec, intervals: schedule.spec.intervals, calendars: [] },
    action: { ...previous.action, ...schedule.action },
    policies: { ...previous.policies, ...schedule.policies },
    state: {
      paused: previous.state.paused,
      note: previous.state.note,
      remainingActions: previous.state.remainingActions,
    },
  }));
  return { id, outcome: 'updated', changed };
}

/**
 * The fields of `wanted` the server's schedule does not match: intervals, calendars (a hand-added
 * calendar or cron would run the workflow at times nobody configured), workflowType, workflowId,
 * taskQueue, args, overlap, catchupWindow. Paused state, note, memo and fields ddsync does not set
 * are not compared.
 */
export function scheduleDifferences(wanted: ManagedSchedule, current: ScheduleDescription): string[] {
  const differs: string[] = [];
  // describe() gives milliseconds, and an offset of 0 comes back undefined.
  const key = (every: number, offset = 0) => `${every}+${offset}`;
  const wantedIntervals = wanted.spec.intervals.map((i) => key(durationMs(i.every))).sort();
  const currentIntervals = (current.spec.intervals ?? []).map((i) => key(i.every, i.offset ?? 0)).sort();
  if (!isDeepStrictEqual(wantedIntervals, currentIntervals)) differs.push('intervals');
  if ((current.spec.calendars ?? []).length > 0) differs.push('calendars');
  const action = current.action;
  if (action.workflowType !== wanted.action.workflowType) differs.push('workflowType');
  if (action.workflowId !== wanted.action.workflowId) differs.push('workflowId');
  if (action.taskQueue !== wanted.action.taskQueue) differs.push('taskQueue');
  // Args come back through the JSON payload converter: compare with what it makes of ours.
  if (!isDeepStrictEqual(action.args ?? [], JSON.parse(JSON.stringify(wanted.action.args)))) differs.push('args');
  if (current.policies.overlap !== wanted.policies.overlap) differs.push('overlap');
  if (current.policies.catchupWindow !== durationMs(wanted.policies.catchupWindow)) differs.push('catchupWindow');
  return differs;
}

/** One schedule as `ddsync schedule list` shows it. */
export interface ScheduleListing {
  id: string;
  /** Created by `ddsync schedule apply` (its memo says so). */
  managedByDdsync: boolean;
  purpose?: string;
  /** Like `6h`, `45m`. */
  intervals: string[];
  /** Calendar or cron entries (ddsync's schedules have none). */
  calendars: number;
  workflowType: string;
  taskQueue: string;
  args: unknown[];
  paused: boolean;
  note?: string;
  overlap: string;
  catchupWindow: string;
  /** The next few times it will start a workflow. */
  nextActionTimes: Date[];
  /** The last few workflows it started, oldest first. */
  recentActions: Array<{ scheduledAt: Date; takenAt: Date; workflowId: string }>;
}

const SHOWN_TIMES = 3;

export async function describeSchedule(client: Client, id: string): Promise<ScheduleListing> {
  const d = await client.schedule.getHandle(id).describe();
  const memo = d.memo ?? {};
  return {
    id,
    managedByDdsync: memo.managedBy === MANAGED_BY,
    ...(typeof memo.purpose === 'string' ? { purpose: memo.purpose } : {}),
    intervals: (d.spec.intervals ?? []).map((i) => formatMs(i.every) + (i.offset ? `+${formatMs(i.offset)}` : '')),
    calendars: (d.spec.calendars ?? []).length,
    workflowType: d.action.workflowType,
    taskQueue: d.action.taskQueue,
    args: [...(d.action.args ?? [])],
    paused: d.state.paused,
    ...(d.state.note ? { note: d.state.note } : {}),
    overlap: d.policies.overlap ?? ScheduleOverlapPolicy.SKIP,
    catchupWindow: formatMs(d.policies.catchupWindow),
    nextActionTimes: d.info.nextActionTimes.slice(0, SHOWN_TIMES),
    recentActions: d.info.recentActions
      .slice(-SHOWN_TIMES)
      .map((a) => ({ scheduledAt: a.scheduledAt, takenAt: a.takenAt, workflowId: a.action.workflow.workflowId })),
  };
}

/**
 * Every schedule in the client's namespace, by id. The ids come from the server's listing, which is
 * eventually consistent (a schedule created a moment ago may be missing); each is then described,
 * which is exact and carries what the listing lacks (task queue, overlap policy).
 */
export async function listSchedules(client: Client): Promise<ScheduleListing[]> {
  const ids: string[] = [];
  for await (const summary of client.schedule.list()) ids.push(summary.scheduleId);
  const listings: ScheduleListing[] = [];
  for (const id of ids.sort()) {
    try {
      listings.push(await describeSchedule(client, id));
    } catch (error) {
      // Deleted between the listing and the describe.
      if (!(error instanceof ScheduleNotFoundError)) throw error;
    }
  }
  return listings;
}

const UNITS: Array<[string, number]> = [
  ['d', 86_400_000],
  ['h', 3_600_000],
  ['m', 60_000],
  ['s', 1_000],
];

/** 21600000 → `6h`, 5400000 → `90m`: the largest unit that divides it evenly. */
export function formatMs(ms: number): string {
  for (const [unit, size] of UNITS) if (ms > 0 && ms % size === 0) return `${ms / size}${unit}`;
  return `${ms}ms`;
}
