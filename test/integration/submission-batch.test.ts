import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { sql } from 'kysely';
import type { WorkflowHandle } from '@temporalio/client';
import { startWorkerHarness, FAST_TIMING, type WorkerHarness } from '../support/worker-harness.ts';
import { shipmentRow, writeShipments } from '../support/shipments.ts';
import { submitBatchWorkflowId } from '../../workflows/submit-batch.ts';

type HistoryEvent = NonNullable<Awaited<ReturnType<WorkflowHandle['fetchHistory']>>['events']>[number];

const RUN = Math.random().toString(36).slice(2, 8);

/**
 * The batch workflow against the simulator: an unreliable service (429 with and without Retry-After,
 * 500, 503, reset connections, creates applied whose answers are dropped), a batch large enough to
 * share among workers, and the EU system's wait.
 */
describe('a batch submitted in chunks', () => {
  let h: WorkerHarness;
  let supplier: string;
  beforeAll(async () => {
    h = await startWorkerHarness(
      { seed: 91, suppliers: 2, plots: 50, timeScale: 0.001, transactionErrorRatio: 0 },
      'subbatch',
    );
    supplier = h.sim.control.suppliers()[0]!.id;
  });
  afterAll(() => h?.close());

  it('sends every key once and ends every transaction through 429s, 5xx, resets and lost create answers', async () => {
    const keys = Array.from({ length: 40 }, (_, i) => `faults-${RUN}-${i}`);
    const before = { ...h.api.stats };
    h.sim.control.setFaults({
      http429: 0.08,
      http429NoRetryAfter: 0.04,
      http500: 0.06,
      http503: 0.06,
      reset: 0.04,
      dropCreateResponse: 0.3,
      retryAfterSeconds: 1,
    });
    let progress: Awaited<ReturnType<WorkerHarness['submit']>>['progress'];
    try {
      ({ progress } = await h.submit(writeShipments(keys.map((k) => shipmentRow(k, supplier))), { concurrency: 8 }));
    } finally {
      h.sim.control.setFaults('none');
    }
    expect(progress).toMatchObject({ started: 40, available: 40, failed: 0, pending: 0 });
    // The faults were met: not a run that got lucky.
    expect(h.api.stats.rateLimited - before.rateLimited).toBeGreaterThan(0);
    expect(h.api.stats.serverErrors - before.serverErrors).toBeGreaterThan(0);
    expect(h.api.stats.networkErrors - before.networkErrors).toBeGreaterThan(0);
    const counts = h.sim.control.transactionCountsByCustomId();
    expect(keys.map((k) => counts[k])).toEqual(keys.map(() => 1));
    const rows = await sql<{ state: string; failed_attempts: number; last_error: string | null }>`
      select state, failed_attempts, last_error from transactions where key = any(${keys}::text[])`.execute(h.db);
    expect(rows.rows.every((r) => r.state === 'available' && r.failed_attempts === 0 && r.last_error === null)).toBe(
      true,
    );
  }, 120_000);

  it('runs several chunks of a batch of 200 at once, and reads no SUBMITTED transaction sooner than the EU wait', async () => {
    const keys = Array.from({ length: 200 }, (_, i) => `wide-${RUN}-${i}`);
    // Validation takes 1.2 to 5.4 s here; the EU wait is longer, so every AVAILABLE is seen after it.
    const euWaitMs = 6_000;
    const { intake, progress } = await h.submit(writeShipments(keys.map((k) => shipmentRow(k, supplier))), {
      concurrency: 20,
      timing: { ...FAST_TIMING, euWaitMs },
    });
    expect(progress).toMatchObject({ started: 200, available: 200, pending: 0 });

    // The workflow keeps several chunk activities outstanding at once (workers share a batch)...
    const events: HistoryEvent[] =
      (await h.temporal.client.workflow.getHandle(submitBatchWorkflowId(intake.batchId)).fetchHistory()).events ?? [];
    const chunkIds = new Set(
      events
        .filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'sendTransactions')
        .map((e) => String(e.eventId)),
    );
    expect(chunkIds.size).toBeGreaterThan(1);
    let outstanding = 0;
    let most = 0;
    for (const e of events) {
      if (chunkIds.has(String(e.eventId))) most = Math.max(most, ++outstanding);
      if (chunkIds.has(String(e.activityTaskCompletedEventAttributes?.scheduledEventId))) outstanding--;
    }
    expect(most).toBeGreaterThan(1);
    // ...and they run at once: in the order the service created the transactions, the chunks' keys interleave.
    const chunkOf = (key: string) => Math.floor(keys.indexOf(key) / Math.ceil(200 / chunkIds.size));
    const order = h.sim.control
      .transactions()
      .map((t) => t.customId ?? '')
      .filter((k) => keys.includes(k))
      .map(chunkOf);
    expect(order.some((chunk, i) => i > 0 && chunk < order[i - 1]!)).toBe(true);

    // Each transaction seen SUBMITTED: AVAILABLE no sooner than the EU wait after it,
    // and few reads (the backoff, then the wait), not one per check of the batch.
    const seen = await sql<{ key: string; wait_ms: number; polls: number }>`
      select t.key, extract(epoch from a.seen_at - s.seen_at)::float8 * 1000 as wait_ms, t.polls
      from transactions t
      join transaction_status_events s on s.transaction_key = t.key and s.status = 'SUBMITTED'
      join transaction_status_events a on a.transaction_key = t.key and a.status = 'AVAILABLE'
      where t.key = any(${keys}::text[])`.execute(h.db);
    // (Some go from TO_SUBMIT to AVAILABLE between two reads: never seen SUBMITTED, no EU wait applies.
    // How many depends on the machine's load, which delays reads: 121 of 200 were seen on a loaded CI
    // machine, against 190 on a quiet one. A quarter is plenty for the rule below to be exercised.)
    expect(seen.rows.length).toBeGreaterThan(50);
    for (const r of seen.rows) expect(r.wait_ms).toBeGreaterThanOrEqual(euWaitMs);
    expect(Math.max(...seen.rows.map((r) => r.polls))).toBeLessThanOrEqual(8);
    const counts = h.sim.control.transactionCountsByCustomId();
    expect(keys.filter((k) => counts[k] !== 1)).toEqual([]);
  }, 120_000);
});
