import { setTimeout as delay } from 'node:timers/promises';
import { ApplicationFailure } from '@temporalio/common';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import type { Outage } from '../platform/outage.ts';
import { waitForWarehouse, warehouseRefusesWork } from '../warehouse/availability.ts';
import { classifyWarehouseError } from '../warehouse/connection-errors.ts';
import { WAREHOUSE_FATAL } from '../platform/run-problem.ts';
import { backoffDelay } from '../platform/backoff.ts';
import { withCancellation } from '../platform/cancellation.ts';
import type { Warehouse } from '../warehouse/database.ts';

export interface WarehouseOutageDeps {
  db: Warehouse;
  /** The worker's one record of warehouse outages: a line when one begins, one when it ends. */
  outage: Outage;
  /**
   * Told of each fatal trouble (credentials refused, schema broken), with the refresh run the activity
   * worked for when its input names one: the worker stops, loudly, and ends those runs as failed.
   */
  onFatal?: (reason: string, runId: string | undefined) => void;
  /** How to wait for an unavailable warehouse (waitForWarehouse by default; tests pass their own). */
  waitForWarehouse?: (signal: AbortSignal) => Promise<void>;
  /** Whether the warehouse takes work now: why not, or undefined (warehouseRefusesWork by default). */
  refusesWork?: () => Promise<string | undefined>;
  /** The first back-off after a lost lock or statement timeout (default 1 s, doubling to 30 s). */
  contendedBackoffMs?: number;
}

export { WAREHOUSE_FATAL };

/**
 * The worker's activity interceptor for the warehouse going away. An activity whose statement fails
 * because the warehouse is unavailable (restart, failover, read-only, connections cut or exhausted)
 * waits, inside the same attempt, until the warehouse answers a probe again (waitForWarehouse), then
 * runs again from its start; one that lost a lock or statement timeout backs off and runs again.
 * Every activity is idempotent, so running it again is what a Temporal retry would do, except that it
 * spends none of the activity's bounded attempts (which exist for the service's outages), waits
 * exactly as long as the outage lasts, and is logged once per outage by `outage`, not once per attempt.
 * It waits for as long as the activity may run: its start-to-close timeout or a cancellation ends the
 * wait with the warehouse's error, and Temporal's retry policy takes over.
 *
 * Trouble no wait mends (wrong credentials, a missing table or column) fails the activity at once,
 * non-retryable, with a sentence saying what to do; the workflow records it on its run.
 */
export function waitOutWarehouse(deps: WarehouseOutageDeps): ActivityInterceptorsFactory {
  const waitUntilBack = deps.waitForWarehouse ?? ((signal: AbortSignal) => waitForWarehouse(deps.db, signal));
  const refusesWork = deps.refusesWork ?? (() => warehouseRefusesWork(deps.db));
  const base = deps.contendedBackoffMs ?? 1_000;
  return (context) => ({
    inbound: {
      async execute(input, next) {
        let contended = 0;
        let waited = false;
        for (;;) {
          try {
            // Its statements are aborted with it (a heartbeat timeout, the worker shutting down): no
            // connection and no worker slot stays held by a query whose activity is gone.
            const result = await withCancellation(context.cancellationSignal, () => next(input));
            // Only an activity that met the outage proves it over (another may not touch the warehouse).
            if (waited) deps.outage.recovered();
            return result;
          } catch (error) {
            const trouble = classifyWarehouseError(error);
            if (!trouble) throw error;
            if (trouble.kind === 'fatal') {
              deps.onFatal?.(trouble.reason, runIdOf(input.args));
              throw ApplicationFailure.create({
                message: `the warehouse cannot be used: ${trouble.reason}`,
                type: WAREHOUSE_FATAL,
                nonRetryable: true,
                // No cause: the sentence already quotes the server's words, and a run records the
                // innermost message of a failure (failureMessage), which would be the server's alone.
              });
            }
            const signal = context.cancellationSignal;
            // A lost connection while no outage is open: ask the warehouse before declaring one. When it
            // answers, what failed was this attempt's connection or statement (one backend frozen alone,
            // a connection cut, an error an attempt kept from an outage that has ended), not the
            // warehouse: the attempt runs again after a back-off, and no outage is said to begin.
            if (trouble.kind === 'unavailable' && !deps.outage.down && (await refusesWork()) === undefined) {
              deps.outage.passing(trouble.reason, 'the activity runs again');
              contended++;
              try {
                await delay(backoffDelay(contended, { baseMs: base, maxMs: 30 * base }), undefined, { signal });
              } catch {
                throw error;
              }
              continue;
            }
            deps.outage.failed(trouble.reason, 'activities wait for it and run again');
            waited = true;
            try {
              if (trouble.kind === 'unavailable') await waitUntilBack(signal);
              else {
                contended++;
                // Up to 1, 2, 4 … 30 s, jittered: sessions that lost the same lock do not come back together.
                await delay(backoffDelay(contended, { baseMs: base, maxMs: 30 * base }), undefined, { signal });
              }
            } catch {
              // Cancelled or timed out while waiting: the warehouse's error is the activity's.
              throw error;
            }
          }
        }
      },
    },
  });
}

/** The refresh run an activity works for: refresh activities take `{ runId, … }`. */
function runIdOf(args: readonly unknown[]): string | undefined {
  const runId = (args[0] as { runId?: unknown } | null | undefined)?.runId;
  return typeof runId === 'string' ? runId : undefined;
}
