import { WAREHOUSE_TABLES } from '../refresh/counts.ts';
import type { WarehouseCatalog } from './catalog.ts';

// Which relations get a dbt source freshness check, and its thresholds. No I/O.
//
// A relation is as fresh as the last successful refresh when a refresh is what keeps it current: the
// tables the refresh mirrors (WAREHOUSE_TABLES, the list it counts its writes by), the ledger each
// refresh writes (its run, parts, counts and record issues), and every view that reads one of them.
// Its age is that of the refresh, not of its own rows: a row is rewritten only when its content
// changes, so max(changed_at) of a table whose data did not change would call a warehouse stale that
// the last refresh proved current. The rest (submissions, webhooks, PDFs, the migrator's tables, the
// refresh's working pages) changes when something else happens, or never: no freshness.

export const RUN_LEDGER = ['sync_runs', 'sync_run_scopes', 'sync_run_counts', 'sync_issues'] as const;

/** The relations of the catalog that a refresh keeps current (views reading them, however deep, included). */
export function refreshedRelations(catalog: WarehouseCatalog): Set<string> {
  const fresh = new Set<string>(
    catalog.relations
      .filter((r) => r.kind === 'table' && ([...WAREHOUSE_TABLES, ...RUN_LEDGER] as string[]).includes(r.name))
      .map((r) => r.name),
  );
  // Views over views: repeat until nothing is added (the catalog has no circles: Postgres forbids them).
  for (let added = true; added; ) {
    added = false;
    for (const r of catalog.relations) {
      if (r.kind === 'view' && !fresh.has(r.name) && r.reads.some((name) => fresh.has(name))) {
        fresh.add(r.name);
        added = true;
      }
    }
  }
  return fresh;
}

/**
 * The query dbt runs for each of them: when the last successful refresh finished. Jinja that dbt
 * renders when it checks freshness, so the run table's identifier follows the package's vars.
 */
export function lastRefreshQuery(sourceName: string): string {
  return `select max(finished_at) from {{ source('${sourceName}', 'sync_runs') }} where kind = 'refresh' and status = 'succeeded'`;
}

export interface FreshnessAge {
  count: number;
  period: 'minute' | 'hour' | 'day';
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** `ms` in the largest of dbt's periods that holds it whole (minutes rounded up). */
export function freshnessAge(ms: number): FreshnessAge {
  if (ms % DAY === 0) return { count: ms / DAY, period: 'day' };
  if (ms % HOUR === 0) return { count: ms / HOUR, period: 'hour' };
  return { count: Math.ceil(ms / MINUTE), period: 'minute' };
}

/**
 * Warn once a scheduled refresh was missed (older than two intervals: the one due and the one before
 * it), error after four: three in a row failed or never ran. A healthy warehouse is at most one
 * interval and a refresh's duration old.
 */
export function freshnessThresholds(refreshIntervalMs: number): { warnAfter: FreshnessAge; errorAfter: FreshnessAge } {
  if (!Number.isFinite(refreshIntervalMs) || refreshIntervalMs < MINUTE)
    throw new RangeError(`the refresh interval must be at least a minute, got ${refreshIntervalMs} ms`);
  return { warnAfter: freshnessAge(2 * refreshIntervalMs), errorAfter: freshnessAge(4 * refreshIntervalMs) };
}
