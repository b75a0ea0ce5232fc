/**
 * The failure type of a problem that is the archive run's, not an entry's (the archive directory
 * cannot be written, the service refuses the credentials): the run stops and no entry is charged an
 * attempt for it. Shared by the activities and the workflow (a pure module: bundled into workflows).
 */
export const PDF_RUN_PROBLEM = 'PdfArchiveRunProblem';

/**
 * The failure type of an activity stopped by a warehouse no wait can mend (credentials refused, a
 * table or column ddsync's migrations made missing): the workflow ends its run `failed` with the
 * reason rather than going on without the part (activities/warehouse-outages.ts, workflows).
 */
export const WAREHOUSE_FATAL = 'WarehouseFatal';

/** Whether a failure seen in workflow code (an activity's, a child's) has WAREHOUSE_FATAL in its causes. */
export function isWarehouseFatal(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 8 && current; depth++) {
    if ((current as { type?: unknown }).type === WAREHOUSE_FATAL) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}
