import { describe, it, expect, afterEach } from 'vitest';
import { sql } from 'kysely';
import { startWorkerHarness, FAST_TIMING, type WorkerHarness } from '../support/worker-harness.ts';
import { shipmentRow, writeShipments } from '../support/shipments.ts';
import { waitUntil } from '../support/wait.ts';
import { ddsyncEnv, runDdsync } from '../support/processes.ts';
import { takeInShipments } from '../../warehouse/submission/intake.ts';
import { submitBatch, submitBatchWorkflowId } from '../../workflows/submit-batch.ts';

const RUN = Math.random().toString(36).slice(2, 8);

describe('batch submission resilience', () => {
  let h: WorkerHarness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  const states = async (batchId: string) =>
    Object.fromEntries(
      (
        await sql<{ state: string; n: number }>`
    select state, count(*)::int as n from transactions where batch_id = ${batchId}::uuid group by state`.execute(h!.db)
      ).rows.map((r) => [r.state, r.n]),
    );
  const atService = (keys: string[]) => h!.sim.control.transactions().filter((t) => keys.includes(t.customId ?? ''));

  it('creates exactly one transaction per key and finishes every one when its worker is killed mid-chunk', async () => {
    h = await startWorkerHarness(
      {
        seed: 41,
        suppliers: 2,
        plots: 50,
        timeScale: 0.001,
        transactionErrorRatio: 0,
        // 30 ms per request (the simulator scales latency by its clock).
        faults: { latency: 1, latencyMs: [30_000, 30_000] },
      },
      'subcrash',
    );
    const supplier = h.sim.control.suppliers()[0]!.id;
    const keys = Array.from({ length: 30 }, (_, i) => `crash-${RUN}-${i}`);
    const intake = await takeInShipments(h.db, writeShipments(keys.map((k) => shipmentRow(k, supplier))), '/dev/null');
    const first = h.spawnWorker();
    const run = h.temporal.client.workflow.execute(submitBatch, {
      taskQueue: h.temporal.taskQueue,
      workflowId: submitBatchWorkflowId(intake.batchId),
      // Three chunks of ten lines, one request at a time each: a chunk records its keys when it ends.
      args: [
        { batchId: intake.batchId, concurrency: 3, chunksInFlight: 3, timing: FAST_TIMING, heartbeatTimeoutMs: 3_000 },
      ],
    });
    await waitUntil('some transactions created at the service', () => atService(keys).length >= 6, 60_000);
    first.child.kill('SIGKILL');
    await first.exited;
    // Killed mid-chunk: created at the service, not yet in the ledger (found again by customId, not created again).
    const created = atService(keys).map((t) => t.customId);
    const recorded = (
      await sql<{
        key: string;
      }>`select key from transactions where batch_id = ${intake.batchId}::uuid and id is not null`.execute(h.db)
    ).rows.map((r) => r.key);
    expect(created.filter((k) => !recorded.includes(k!)).length).toBeGreaterThan(0);
    expect((await states(intake.batchId))['pending'] ?? 0).toBeGreaterThan(0);

    h.spawnWorker();
    const progress = await run;
    expect(progress).toMatchObject({ started: 30, available: 30, pending: 0 });
    expect(await states(intake.batchId)).toEqual({ available: 30 });
    const counts = h.sim.control.transactionCountsByCustomId();
    expect(keys.map((k) => counts[k])).toEqual(keys.map(() => 1));
    // The killed chunks ran again: their keys were attempted twice, and still created once.
    const retried = await sql<{ n: number }>`
      select count(*)::int as n from transaction_requests where batch_id = ${intake.batchId}::uuid and create_attempts > 1`.execute(
      h.db,
    );
    expect(retried.rows[0]!.n).toBeGreaterThan(0);
  }, 180_000);

  it('cancelling a batch sends nothing more, deletes unsubmitted drafts and follows submitted transactions to the end', async () => {
    // Validation takes 4 to 16 s here: submitted transactions are still being followed when the batch is
    // cancelled; each request takes 250 ms, so sending takes longer than starting the cancel command.
    h = await startWorkerHarness(
      {
        seed: 42,
        suppliers: 2,
        plots: 50,
        timeScale: 0.003,
        transactionErrorRatio: 0,
        faults: { latency: 1, latencyMs: [250 / 0.003, 250 / 0.003] },
      },
      'subcancel',
    );
    const supplier = h.sim.control.suppliers()[0]!.id;
    const keys = Array.from({ length: 40 }, (_, i) => `cancel-${RUN}-${i}`);
    const intake = await takeInShipments(h.db, writeShipments(keys.map((k) => shipmentRow(k, supplier))), '/dev/null');
    await h.startWorker();
    const handle = await h.temporal.client.workflow.start(submitBatch, {
      taskQueue: h.temporal.taskQueue,
      workflowId: submitBatchWorkflowId(intake.batchId),
      args: [
        {
          batchId: intake.batchId,
          concurrency: 2,
          chunksInFlight: 2,
          chunkLines: 2,
          timing: FAST_TIMING,
          heartbeatTimeoutMs: 2_000,
        },
      ],
    });
    await waitUntil(
      'a few transactions submitted',
      async () => ((await states(intake.batchId))['submitted'] ?? 0) >= 3,
      60_000,
    );
    // `ddsync submissions cancel` returns once nothing more can be sent (drafts deleted), not when the
    // submitted transactions have ended.
    const env = ddsyncEnv({ upstreamUrl: h.sim.url, databaseUrl: h.databaseUrl, taskQueue: h.temporal.taskQueue });
    const cancel = runDdsync(['submissions', 'cancel', intake.batchId], env);
    expect(await cancel.exited).toBe(0);
    expect(cancel.output()).toContain(`batch ${intake.batchId} cancelled: nothing more is sent`);
    expect((await handle.describe()).status.name).toBe('RUNNING');
    const atCancel = await states(intake.batchId);
    expect(atCancel['cancelled']).toBeGreaterThan(0);
    expect(atCancel['pending'] ?? 0).toBe(0);
    expect(atCancel['created'] ?? 0).toBe(0);
    // No draft left at the service; what it has is exactly what the ledger says was submitted.
    const sentAtCancel = atService(keys);
    expect(sentAtCancel.filter((t) => t.status === 'DRAFT')).toEqual([]);
    const followed = (
      await sql<{ key: string }>`
      select key from transactions where batch_id = ${intake.batchId}::uuid and state not in ('cancelled', 'pending')`.execute(
        h.db,
      )
    ).rows.map((r) => r.key);
    expect(sentAtCancel.map((t) => t.customId).sort()).toEqual([...followed].sort());
    expect(
      (
        await sql<{ status: string }>`select status from submission_batches where id = ${intake.batchId}::uuid`.execute(
          h.db,
        )
      ).rows[0]!.status,
    ).toBe('cancelled');

    // The submitted ones are followed to the end; nothing more was created after the cancellation.
    const progress = await handle.result();
    expect(progress.available).toBe(followed.length);
    expect(await states(intake.batchId)).toEqual({ cancelled: 40 - followed.length, available: followed.length });
    expect(
      atService(keys)
        .map((t) => t.customId)
        .sort(),
    ).toEqual([...followed].sort());
    const batch = await sql<{ status: string; finished_at: Date | null }>`
      select status, finished_at from submission_batches where id = ${intake.batchId}::uuid`.execute(h.db);
    expect(batch.rows[0]).toMatchObject({ status: 'cancelled', finished_at: expect.any(Date) });
  }, 180_000);
});
