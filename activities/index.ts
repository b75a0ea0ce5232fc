import { createHealthActivities, type UpstreamProbe } from './health.ts';
import type { Warehouse } from './warehouse/database.ts';
import type { Logger } from '../infra/logger.ts';

export interface ActivityDeps {
  db: Warehouse;
  api: UpstreamProbe;
  log: Logger;
}

/** Every activity of the worker, built from its dependencies so tests can pass their own. */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createHealthActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
