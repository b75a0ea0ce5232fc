// Pure scheduling for workflow code: no I/O, no clock, no randomness; safe in the workflow bundle.

export interface WindowOptions {
  /** Items running at once (at least 1). */
  limit: number;
  /** Index of the first item to start (default 0). */
  from?: number;
  /**
   * Asked before each start with how many this call has started; once it says no, nothing more is
   * started (what runs is awaited). A workflow's budget per run, or Temporal's continue-as-new hint.
   */
  mayStart?: (startedHere: number) => boolean;
}

/**
 * Runs `run` over `items` in order, at most `limit` at once, starting the next as soon as one ends
 * (a sliding window, not fixed groups). Resolves, once every started item has ended, with the index
 * of the first item not started (`items.length` when all were). Rejects as soon as a run rejects.
 *
 * In workflow code every start happens in the activation that ended the previous item, in item
 * order, so the commands (and their order) depend only on which items ended: what replay checks.
 */
export async function forEachInWindow<T>(
  items: readonly T[],
  options: WindowOptions,
  run: (item: T) => Promise<void>,
): Promise<number> {
  const from = options.from ?? 0;
  const mayStart = options.mayStart ?? (() => true);
  let next = from;
  let stopped = false;
  // One lane per slot: each starts its next item when its current one ends.
  const lane = async () => {
    while (next < items.length && !stopped) {
      if (!mayStart(next - from)) {
        stopped = true;
        break;
      }
      await run(items[next++]!);
    }
  };
  const lanes = Math.max(0, Math.min(Math.max(1, options.limit), items.length - from));
  await Promise.all(Array.from({ length: lanes }, lane));
  return next;
}
