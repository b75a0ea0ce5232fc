import { describe, it, expect, beforeAll, afterAll, afterEach } from 'vitest';
import { randomUUID } from 'node:crypto';
import { ScheduleNotFoundError, ScheduleOverlapPolicy } from '@temporalio/client';
import {
  applySchedules,
  listSchedules,
  refreshSchedule,
  REFRESH_SCHEDULE_ID,
  WEBHOOKS_SCHEDULE_ID,
  PDF_ARCHIVE_SCHEDULE_ID,
  type ScheduleConfig,
  type ScheduleListing,
} from '../../infra/schedules.ts';
import { connectTemporal, type TemporalForTest } from '../support/temporal.ts';
import { runDdsync, lastJsonLine } from '../support/processes.ts';
import { waitUntil } from '../support/wait.ts';
import { embeddedStack } from '../support/stack.ts';

const HOUR = 3_600_000;

describe('Temporal schedules', () => {
  let temporal: TemporalForTest;
  /** Schedules and workflows a test made, removed after it whatever happened. */
  const scheduleIds = new Set<string>();
  const workflowIds = new Set<string>();

  beforeAll(async () => {
    temporal = await connectTemporal();
  });
  afterEach(async () => {
    for (const id of scheduleIds) {
      await temporal.client.schedule
        .getHandle(id)
        .delete()
        .catch((error: unknown) => {
          if (!(error instanceof ScheduleNotFoundError)) throw error;
        });
    }
    for (const id of workflowIds)
      await temporal.client.workflow
        .getHandle(id)
        .terminate('test over')
        .catch(() => undefined);
    scheduleIds.clear();
    workflowIds.clear();
  });
  afterAll(async () => {
    await temporal?.close();
  });

  /** A schedule id of this run only, so tests never meet each other's schedules. */
  function uniqueId(): string {
    const id = `test-refresh-${randomUUID()}`;
    scheduleIds.add(id);
    return id;
  }
  const config = (interval: string, supplierConcurrency = 3): ScheduleConfig => ({
    temporal: { taskQueue: temporal.taskQueue },
    refresh: { interval, supplierConcurrency },
  });
  const describeOnServer = (id: string) => temporal.client.schedule.getHandle(id).describe();

  it('apply creates the refresh schedule as configured', async () => {
    const id = uniqueId();
    expect(await applySchedules(temporal.client, [refreshSchedule(config('6h'), { scheduleId: id })])).toEqual([
      { id, outcome: 'created', changed: [] },
    ]);

    const d = await describeOnServer(id);
    expect(d.spec.intervals).toHaveLength(1);
    expect(d.spec.intervals![0]!.every).toBe(6 * HOUR);
    expect(d.policies.overlap).toBe(ScheduleOverlapPolicy.SKIP);
    expect(d.policies.catchupWindow).toBe(10 * 60_000);
    expect(d.action.workflowType).toBe('refreshWarehouse');
    expect(d.action.workflowId).toBe(id);
    expect(d.action.taskQueue).toBe(temporal.taskQueue);
    expect(d.action.args).toEqual([{ supplierConcurrency: 3 }]);
    expect(d.memo).toMatchObject({ managedBy: 'ddsync' });
    expect(d.state.paused).toBe(false);
  });

  it('applying again reports unchanged and does not touch the schedule', async () => {
    const id = uniqueId();
    const schedules = [refreshSchedule(config('6h'), { scheduleId: id })];
    await applySchedules(temporal.client, schedules);
    const before = await describeOnServer(id);

    expect(await applySchedules(temporal.client, schedules)).toEqual([{ id, outcome: 'unchanged', changed: [] }]);
    // Built anew from the same configuration: equal values, not the same objects.
    expect(await applySchedules(temporal.client, [refreshSchedule(config('6h'), { scheduleId: id })])).toEqual([
      { id, outcome: 'unchanged', changed: [] },
    ]);

    const after = await describeOnServer(id);
    // The conflict token moves on every update or patch; lastUpdatedAt is set by the first update only.
    expect(Buffer.from(after.raw.conflictToken!).toString('hex')).toBe(
      Buffer.from(before.raw.conflictToken!).toString('hex'),
    );
    expect(before.info.lastUpdatedAt).toBeUndefined();
    expect(after.info.lastUpdatedAt).toBeUndefined();
  });

  it('a changed interval or concurrency updates the schedule and leaves it paused', async () => {
    const id = uniqueId();
    await applySchedules(temporal.client, [refreshSchedule(config('6h'), { scheduleId: id })]);
    const handle = temporal.client.schedule.getHandle(id);
    await handle.pause('upstream maintenance');
    const paused = await handle.describe();

    expect(await applySchedules(temporal.client, [refreshSchedule(config('45m'), { scheduleId: id })])).toEqual([
      { id, outcome: 'updated', changed: ['intervals'] },
    ]);
    const updated = await handle.describe();
    expect(updated.spec.intervals!.map((i) => i.every)).toEqual([45 * 60_000]);
    expect(updated.info.nextActionTimes[1]!.getTime() - updated.info.nextActionTimes[0]!.getTime()).toBe(45 * 60_000);
    expect(updated.state).toMatchObject({ paused: true, note: 'upstream maintenance' });
    expect(updated.memo).toMatchObject({ managedBy: 'ddsync' });
    expect(updated.info.lastUpdatedAt).toBeInstanceOf(Date);
    expect(Buffer.from(updated.raw.conflictToken!).equals(Buffer.from(paused.raw.conflictToken!))).toBe(false);

    expect(await applySchedules(temporal.client, [refreshSchedule(config('45m', 5), { scheduleId: id })])).toEqual([
      { id, outcome: 'updated', changed: ['args'] },
    ]);
    expect((await handle.describe()).action.args).toEqual([{ supplierConcurrency: 5 }]);
    expect(await applySchedules(temporal.client, [refreshSchedule(config('45m', 5), { scheduleId: id })])).toEqual([
      { id, outcome: 'unchanged', changed: [] },
    ]);
  });

  it('puts back what was changed by hand on the server', async () => {
    const id = uniqueId();
    const schedules = [refreshSchedule(config('6h'), { scheduleId: id })];
    await applySchedules(temporal.client, schedules);
    const handle = temporal.client.schedule.getHandle(id);
    await handle.update((previous) => ({
      ...previous,
      spec: { ...previous.spec, cronExpressions: ['0 3 * * *'] },
      action: { ...previous.action, taskQueue: 'somewhere-else' },
      policies: { ...previous.policies, overlap: ScheduleOverlapPolicy.ALLOW_ALL, catchupWindow: '1 day' },
    }));

    expect(await applySchedules(temporal.client, schedules)).toEqual([
      { id, outcome: 'updated', changed: ['calendars', 'taskQueue', 'overlap', 'catchupWindow'] },
    ]);
    const d = await handle.describe();
    expect(d.spec.calendars).toEqual([]);
    expect(d.action.taskQueue).toBe(temporal.taskQueue);
    expect(d.policies).toMatchObject({ overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: 10 * 60_000 });
    expect(await applySchedules(temporal.client, schedules)).toEqual([{ id, outcome: 'unchanged', changed: [] }]);
  });

  it("lists every schedule in the namespace, ddsync's marked, with next and recent runs", async () => {
    const id = uniqueId();
    await applySchedules(temporal.client, [refreshSchedule(config('6h'), { scheduleId: id })]);
    const otherId = uniqueId();
    await temporal.client.schedule.create({
      scheduleId: otherId,
      spec: { cronExpressions: ['0 3 * * *'] },
      action: { type: 'startWorkflow', workflowType: 'healthCheck', taskQueue: temporal.taskQueue },
    });
    // A manual trigger gives the schedule a recent action (the workflow waits for a worker that never comes).
    await temporal.client.schedule.getHandle(id).trigger();

    // The listing is eventually consistent, and the trigger is carried out asynchronously.
    const listings = await waitUntil(
      'both schedules listed, the triggered run recorded',
      async () => {
        const all = await listSchedules(temporal.client);
        const ours = all.find((s) => s.id === id);
        return ours && ours.recentActions.length > 0 && all.some((s) => s.id === otherId) ? all : undefined;
      },
      20_000,
    );
    const ours = listings.find((s) => s.id === id)!;
    const other = listings.find((s) => s.id === otherId)!;
    workflowIds.add(ours.recentActions[0]!.workflowId);

    expect(ours).toMatchObject<Partial<ScheduleListing>>({
      managedByDdsync: true,
      intervals: ['6h'],
      calendars: 0,
      workflowType: 'refreshWarehouse',
      taskQueue: temporal.taskQueue,
      args: [{ supplierConcurrency: 3 }],
      paused: false,
      overlap: 'SKIP',
      catchupWindow: '10m',
    });
    expect(ours.nextActionTimes).toHaveLength(3);
    expect(ours.nextActionTimes[0]!.getTime()).toBeGreaterThan(Date.now() - 60_000);
    expect(ours.nextActionTimes[2]!.getTime() - ours.nextActionTimes[1]!.getTime()).toBe(6 * HOUR);
    expect(ours.recentActions).toHaveLength(1);
    expect(ours.recentActions[0]!.workflowId.startsWith(`${id}-`)).toBe(true);
    expect(other).toMatchObject<Partial<ScheduleListing>>({
      managedByDdsync: false,
      intervals: [],
      calendars: 1,
      workflowType: 'healthCheck',
      recentActions: [],
    });
  });

  it('ddsync schedule apply --json creates, then reports unchanged; schedule list --json shows it', async () => {
    scheduleIds.add(REFRESH_SCHEDULE_ID);
    scheduleIds.add(WEBHOOKS_SCHEDULE_ID);
    scheduleIds.add(PDF_ARCHIVE_SCHEDULE_ID);
    const taskQueue = `cli-schedule-${randomUUID()}`;
    const env = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      TEMPORAL_ADDRESS: embeddedStack().temporalAddress,
      TEMPORAL_NAMESPACE: embeddedStack().temporalNamespace,
      TEMPORAL_TASK_QUEUE: taskQueue,
      DDSYNC_REFRESH_INTERVAL: '45m',
      DDSYNC_REFRESH_CONCURRENCY: '2',
      DDSYNC_WEBHOOKS: JSON.stringify([{ name: 'main', url: 'https://hooks.example.com/hooks/main' }]),
      DDSYNC_WEBHOOKS_INTERVAL: '2h',
      DDSYNC_PDF_INTERVAL: '20m',
    };
    const ddsync = async (...args: string[]) => {
      const run = runDdsync(['schedule', ...args], env);
      const code = await run.exited;
      return { code, output: run.output() };
    };
    const lastJson = (output: string) =>
      lastJsonLine<{ namespace: string; schedules: Array<Record<string, unknown>> }>(output);

    const first = await ddsync('apply', '--json');
    expect(first.code, first.output).toBe(0);
    expect(lastJson(first.output).schedules).toEqual([
      expect.objectContaining({
        id: REFRESH_SCHEDULE_ID,
        outcome: 'created',
        intervals: ['45m'],
        workflowType: 'refreshWarehouse',
        taskQueue,
        paused: false,
      }),
      expect.objectContaining({
        id: WEBHOOKS_SCHEDULE_ID,
        outcome: 'created',
        intervals: ['2h'],
        workflowType: 'maintainWebhooks',
        taskQueue,
      }),
      expect.objectContaining({
        id: PDF_ARCHIVE_SCHEDULE_ID,
        outcome: 'created',
        intervals: ['20m'],
        workflowType: 'archiveSurveyPdfs',
        taskQueue,
      }),
    ]);
    const second = await ddsync('apply', '--json');
    expect(second.code, second.output).toBe(0);
    expect(lastJson(second.output).schedules.map((s) => [s['id'], s['outcome']])).toEqual([
      [REFRESH_SCHEDULE_ID, 'unchanged'],
      [WEBHOOKS_SCHEDULE_ID, 'unchanged'],
      [PDF_ARCHIVE_SCHEDULE_ID, 'unchanged'],
    ]);
    expect((await describeOnServer(REFRESH_SCHEDULE_ID)).action.args).toEqual([{ supplierConcurrency: 2 }]);
    // The desired webhooks travel in the schedule's input.
    expect((await describeOnServer(WEBHOOKS_SCHEDULE_ID)).action.args).toEqual([
      {
        desired: [
          {
            name: 'main',
            url: 'https://hooks.example.com/hooks/main',
            events: ['transaction.updated'],
            description: '',
            active: true,
          },
        ],
      },
    ]);

    // DDSYNC_WEBHOOKS emptied: the webhooks schedule goes (else it would re-create the webhooks).
    env.DDSYNC_WEBHOOKS = '[]';
    const emptied = await ddsync('apply', '--json');
    expect(emptied.code, emptied.output).toBe(0);
    expect(lastJson(emptied.output).schedules.map((s) => [s['id'], s['outcome']])).toEqual([
      [REFRESH_SCHEDULE_ID, 'unchanged'],
      [PDF_ARCHIVE_SCHEDULE_ID, 'unchanged'],
      [WEBHOOKS_SCHEDULE_ID, 'deleted'],
    ]);
    await expect(describeOnServer(WEBHOOKS_SCHEDULE_ID)).rejects.toThrow(ScheduleNotFoundError);
    expect(lastJson((await ddsync('apply', '--json')).output).schedules.map((s) => s['outcome'])).toEqual([
      'unchanged',
      'unchanged',
    ]);

    const listed = await ddsync('list', '--json');
    expect(listed.code, listed.output).toBe(0);
    const entry = lastJson(listed.output).schedules.find((s) => s.id === REFRESH_SCHEDULE_ID);
    expect(entry).toMatchObject({ managedByDdsync: true, intervals: ['45m'], taskQueue, overlap: 'SKIP' });
    expect(entry!.nextActionTimes).toHaveLength(3);
    expect(Number.isNaN(Date.parse((entry!.nextActionTimes as string[])[0]!))).toBe(false);

    const human = await ddsync('apply');
    expect(human.code, human.output).toBe(0);
    expect(human.output).toMatch(/^ddsync-refresh +unchanged {2}every 45m {2}next \d{4}-\d\d-\d\dT/m);

    const wrong = await ddsync('frobnicate');
    expect(wrong.code).toBe(2);
    expect(wrong.output).toContain('unknown subcommand "frobnicate": expected apply or list');
  }, 120_000);
});
