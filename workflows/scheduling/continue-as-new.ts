// Pure scheduling for workflow code: no I/O, no clock, no randomness; safe in the workflow bundle.

/** History events past which a long-running workflow continues as new (Temporal's limit is 51,200). */
export const HISTORY_EVENTS_PER_RUN = 10_000;

/** Children a refresh starts per workflow run before it continues as new (Temporal's limit is 2,000 pending). */
export const CHILDREN_PER_RUN = 500;

/** What workflowInfo() says about the run's history. */
export interface HistorySize {
  historyLength: number;
  continueAsNewSuggested: boolean;
}

/** Whether a workflow that loops should continue as new now: past `limit` events, or Temporal suggests it. */
export function historyFull(info: HistorySize, limit = HISTORY_EVENTS_PER_RUN): boolean {
  return info.historyLength > limit || info.continueAsNewSuggested;
}

/** Whether a parent may start another child in this run, having started `startedHere`: under `perRun`, and not suggested to continue as new. */
export function mayStartChild(
  startedHere: number,
  info: Pick<HistorySize, 'continueAsNewSuggested'>,
  perRun = CHILDREN_PER_RUN,
): boolean {
  return startedHere < perRun && !info.continueAsNewSuggested;
}
