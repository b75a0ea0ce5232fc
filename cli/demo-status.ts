import type { Client } from '@temporalio/client';
import { loadConfig } from '../platform/config.ts';
import { applySchedules, ddsyncSchedules, type ScheduleConfig } from '../infra/schedules.ts';
import { lookAtTemporal, lookAtWarehouse } from './status/gather.ts';
import { assess, type StatusReport } from './status/judge.ts';
import { resolveThresholds, THRESHOLD_SECTIONS, thresholdSettingsOf } from './status/thresholds.ts';

/**
 * The end of the demo: ddsync's schedules applied as `ddsync schedule apply` makes them (so that a demo
 * kept running goes on as a deployment does), then `ddsync status` as it answers against the demo with
 * every setting at its default and DDSYNC_READER_URL the demo's BI login.
 */
export async function demoStatus(options: {
  biUrl: string;
  client: Client;
  temporalAddress: string;
  taskQueue: string;
  supplierConcurrency: number;
}): Promise<StatusReport> {
  const settings = loadConfig([...THRESHOLD_SECTIONS], {});
  const schedules: ScheduleConfig = {
    temporal: { taskQueue: options.taskQueue },
    refresh: { interval: settings.refresh!.interval, supplierConcurrency: options.supplierConcurrency },
    pdfs: { interval: settings.pdfs!.interval },
  };
  await applySchedules(options.client, ddsyncSchedules(schedules).wanted);
  const thresholds = resolveThresholds(thresholdSettingsOf(settings));
  const [warehouse, temporal] = await Promise.all([
    lookAtWarehouse(options.biUrl, 'DDSYNC_READER_URL'),
    lookAtTemporal({ client: options.client, address: options.temporalAddress }, schedules),
  ]);
  return assess(warehouse, temporal, [], thresholds, new Date());
}
