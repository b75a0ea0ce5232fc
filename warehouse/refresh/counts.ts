/** Rows written per table by one page, one sweep or one run: what sync_run_counts records. */
export interface RowCounts {
  inserted: number;
  updated: number;
  unchanged: number;
  deleted: number;
}

export type TableCounts = Record<string, RowCounts>;

export const WAREHOUSE_TABLES = [
  'businesses',
  'business_connections',
  'business_invitations',
  'plots',
  'plot_suppliers',
  'plot_species',
  'analyses',
  'plot_history',
  'eudr_findings',
] as const;

export function emptyCounts(): TableCounts {
  return {};
}

/** Adds `delta` to `counts[table]`, creating the entry when needed. */
export function addCounts(counts: TableCounts, table: string, delta: Partial<RowCounts>): void {
  const row = (counts[table] ??= { inserted: 0, updated: 0, unchanged: 0, deleted: 0 });
  row.inserted += delta.inserted ?? 0;
  row.updated += delta.updated ?? 0;
  row.unchanged += delta.unchanged ?? 0;
  row.deleted += delta.deleted ?? 0;
}

export function mergeCounts(into: TableCounts, from: TableCounts): TableCounts {
  for (const [table, row] of Object.entries(from)) addCounts(into, table, row);
  return into;
}

/**
 * A page replayed after its first attempt committed: the first attempt's counts stand, and only what
 * the replay itself wrote is added (its "unchanged" rows are the first attempt's writes seen again).
 */
export function mergeReplayCounts(first: TableCounts, replay: TableCounts): TableCounts {
  const merged = mergeCounts(emptyCounts(), first);
  for (const [table, row] of Object.entries(replay))
    addCounts(merged, table, { inserted: row.inserted, updated: row.updated, deleted: row.deleted });
  return merged;
}

/** Rows written (inserted, updated or soft-deleted) over every table. */
export function rowsWritten(counts: TableCounts): number {
  let n = 0;
  for (const row of Object.values(counts)) n += row.inserted + row.updated + row.deleted;
  return n;
}
