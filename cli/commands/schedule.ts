import type { Client } from '@temporalio/client';
import { loadConfig } from '../../platform/config.ts';
import { connectClient } from '../../infra/temporal-connection.ts';
import {
  applySchedules,
  ddsyncSchedules,
  describeSchedule,
  listSchedules,
  retireSchedules,
  type ScheduleConfig,
  type ScheduleListing,
} from '../../infra/schedules.ts';

export async function run(subcommand: 'apply' | 'list', values: { json?: boolean }): Promise<number> {
  const config = loadConfig(['temporal', 'refresh', 'webhooks', 'pdfs']);
  const temporal = config.temporal!;
  const client = await connectClient(temporal);
  try {
    if (subcommand === 'apply')
      await apply(
        client,
        { temporal, refresh: config.refresh!, webhooks: config.webhooks!, pdfs: config.pdfs! },
        temporal.namespace,
        values.json === true,
      );
    else await list(client, temporal.namespace, values.json === true);
    return 0;
  } finally {
    await client.connection.close();
  }
}

async function apply(client: Client, config: ScheduleConfig, namespace: string, json: boolean) {
  const { wanted, unwanted } = ddsyncSchedules(config);
  const applied = await applySchedules(client, wanted);
  const retired = await retireSchedules(client, unwanted);
  // Described after applying, for what the server now holds (next run times are the server's).
  const rows = [];
  for (const result of applied) rows.push({ ...result, ...pick(await describeSchedule(client, result.id)) });
  if (json) {
    process.stdout.write(`${JSON.stringify({ namespace, schedules: [...rows, ...retired] })}\n`);
    return;
  }
  const width = Math.max(...[...rows, ...retired].map((r) => r.id.length));
  for (const r of retired) process.stdout.write(`${r.id.padEnd(width)}  deleted    (no longer configured)\n`);
  for (const r of rows) {
    const changed = r.changed.length > 0 ? ` (${r.changed.join(', ')})` : '';
    process.stdout.write(
      `${r.id.padEnd(width)}  ${(r.outcome + changed).padEnd(9)}  ${every(r)}  ${r.paused ? 'paused' : `next ${iso(r.nextActionTimes[0])}`}\n`,
    );
  }
}

function pick(listing: ScheduleListing) {
  const { intervals, calendars, workflowType, taskQueue, paused, nextActionTimes } = listing;
  return { intervals, calendars, workflowType, taskQueue, paused, nextActionTimes };
}

async function list(client: Client, namespace: string, json: boolean) {
  const schedules = await listSchedules(client);
  if (json) {
    process.stdout.write(`${JSON.stringify({ namespace, schedules })}\n`);
    return;
  }
  if (schedules.length === 0) {
    process.stdout.write(`no schedules in namespace ${namespace}\n`);
    return;
  }
  const width = Math.max(...schedules.map((s) => s.id.length));
  for (const s of schedules) {
    const last = s.recentActions.at(-1);
    process.stdout.write(
      `${[
        s.id.padEnd(width),
        s.managedByDdsync ? 'ddsync' : 'other ',
        every(s),
        `${s.workflowType} on ${s.taskQueue}`,
        `overlap ${s.overlap}`,
        s.paused ? `paused${s.note ? ` (${s.note})` : ''}` : `next ${iso(s.nextActionTimes[0])}`,
        `last ${last ? `${iso(last.takenAt)} ${last.workflowId}` : 'never'}`,
      ].join('  ')}\n`,
    );
  }
}

function every(s: { intervals: string[]; calendars: number }): string {
  const parts = s.intervals.map((i) => `every ${i}`);
  if (s.calendars > 0) parts.push(`${s.calendars} calendar${s.calendars === 1 ? '' : 's'}`);
  return parts.join(', ') || 'no times';
}

function iso(date: Date | undefined): string {
  return date ? date.toISOString() : 'none';
}
