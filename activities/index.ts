import { createHealthActivities, type UpstreamProbe } from './health.ts';
import { createRefreshActivities, type RefreshApi, type RefreshDeps } from './refresh/activities.ts';
import { createSubmissionActivities, type SubmissionApi } from './submission/activities.ts';
import { createBulkSubmissionActivities } from './submission/bulk.ts';
import { createWebhookActivities, type WebhookApi } from './webhooks/activities.ts';
import { createPdfActivities, type PdfApi } from './pdfs/activities.ts';
import type { Warehouse } from '../warehouse/database.ts';
import type { Logger } from '../platform/logger.ts';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { mapFailures } from './failures.ts';
import { keepAlive } from './keep-alive.ts';
import { waitOutWarehouse, type WarehouseOutageDeps } from './warehouse-outages.ts';

export interface ActivityDeps {
  db: Warehouse;
  /** The upstream client (createUpstreamClient); tests may pass anything with these functions. */
  api: UpstreamProbe & RefreshApi & SubmissionApi & WebhookApi & PdfApi;
  log: Logger;
  /** Where survey-response PDFs are archived (DDSYNC_PDF_ARCHIVE_DIR; default .ddsync/pdf-archive). */
  pdfArchiveDir?: string | undefined;
  /** Where the refresh splits a page and refuses a plot (refresh/activities.ts; default: upstream's). */
  pageLimits?: RefreshDeps['pageLimits'];
}

/** Every activity of the worker, built from its dependencies so tests can pass their own. */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createHealthActivities(deps),
    ...createRefreshActivities(deps),
    ...createSubmissionActivities(deps),
    ...createBulkSubmissionActivities(deps),
    ...createWebhookActivities(deps),
    ...createPdfActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;

/**
 * What every activity of the worker gets, local ones included, without its factory wrapping it:
 * its errors mapped (failures.ts), heartbeats when it has a heartbeat timeout (keep-alive.ts), and a
 * warehouse outage waited out inside the attempt (warehouse-outages.ts). The first is the outermost:
 * a failure is mapped after everything inside has seen it, and heartbeats go on while an activity
 * waits for the warehouse.
 */
export function activityInterceptors(warehouse: WarehouseOutageDeps): ActivityInterceptorsFactory[] {
  return [mapFailures, keepAlive, waitOutWarehouse(warehouse)];
}
