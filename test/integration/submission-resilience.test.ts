import { describe, it, expect, afterEach } from 'vitest';
import { sql } from 'kysely';
import { startWorkerHarness, FAST_TIMING, type WorkerHarness } from '../support/worker-harness.ts';
import { shipmentRow, writeShipments } from '../support/shipments.ts';
import { waitUntil } from '../support/wait.ts';
import { takeInShipments } from '../../warehouse/submission/intake.ts';
import { bulkSubmit, bulkSubmitWorkflowId } from '../../workflows/bulk-submit.ts';
import { transactionWorkflowId } from '../../workflows/submit-transaction.ts';

const RUN = Math.random().toString(36).slice(2, 8);

describe('bulk submission resilience', () => {
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

  it('creates exactly one transaction per key and finishes every one when its worker is killed mid-batch', async () => {
    h = await startWorkerHarness(
      {
        seed: 41,
        suppliers: 2,
        plots: 50,
        timeScale: 0.001,
        transactionErrorRatio: 0,
        faults: { latency: 1, latencyMs: [30, 30] },
      },
      'subcrash',
    );
    const supplier = h.sim.control.suppliers()[0]!.id;
    const keys = Array.from({ length: 30 }, (_, i) => `crash-${RUN}-${i}`);
    const intake = await takeInShipments(h.db, writeShipments(keys.map((k) => shipmentRow(k, supplier))), '/dev/null');
    const first = h.spawnWorker();
    const run = h.temporal.client.workflow.execute(bulkSubmit, {
      taskQueue: h.temporal.taskQueue,
      workflowId: bulkSubmitWorkflowId(intake.batchId),
      args: [{ batchId: intake.batchId, concurrency: 4, timing: FAST_TIMING }],
    });
    await waitUntil(
      'some transactions created',
      async () => {
        const r = await sql<{
          n: number;
        }>`select count(*)::int as n from transactions where batch_id = ${intake.batchId}::uuid and id is not null`.execute(
          h!.db,
        );
        return r.rows[0]!.n >= 6;
      },
      60_000,
    );
    first.child.kill('SIGKILL');
    await first.exited;
    const atKill = await states(intake.batchId);
    expect(atKill['pending'] ?? 0).toBeGreaterThan(0);

    h.spawnWorker();
    const progress = await run;
    expect(progress).toMatchObject({ started: 30, available: 30, pending: 0 });
    expect(await states(intake.batchId)).toEqual({ available: 30 });
    const counts = h.sim.control.transactionCountsByCustomId();
    expect(keys.map((k) => counts[k])).toEqual(keys.map(() => 1));
  }, 180_000);

  it('cancelling a batch sends nothing more, deletes unsubmitted drafts and follows submitted transactions to the end', async () => {
    // Validation takes 12 to 54 s here: submitted transactions are still being followed when the batch is cancelled.
    h = await startWorkerHarness(
      { seed: 42, suppliers: 2, plots: 50, timeScale: 0.01, transactionErrorRatio: 0 },
      'subcancel',
    );
    const supplier = h.sim.control.suppliers()[0]!.id;
    const keys = Array.from({ length: 12 }, (_, i) => `cancel-${RUN}-${i}`);
    const intake = await takeInShipments(h.db, writeShipments(keys.map((k) => shipmentRow(k, supplier))), '/dev/null');
    await h.startWorker();
    const handle = await h.temporal.client.workflow.start(bulkSubmit, {
      taskQueue: h.temporal.taskQueue,
      workflowId: bulkSubmitWorkflowId(intake.batchId),
      args: [{ batchId: intake.batchId, concurrency: 2, timing: { ...FAST_TIMING, euWaitMs: 60_000 } }],
    });
    await waitUntil(
      'a few transactions submitted',
      async () => ((await states(intake.batchId))['submitted'] ?? 0) >= 3,
      60_000,
    );
    await handle.cancel();
    const progress = await handle.result();
    expect(progress.started).toBeLessThan(12);
    const after = await states(intake.batchId);
    expect(after['cancelled']).toBeGreaterThan(0);
    expect(after['submitted']).toBeGreaterThanOrEqual(3);
    const batch = await sql<{
      status: string;
    }>`select status from submission_batches where id = ${intake.batchId}::uuid`.execute(h.db);
    expect(batch.rows[0]!.status).toBe('cancelled');
    // Drafts of transactions cancelled before their submit are deleted at the service.
    await waitUntil('no draft left', () =>
      h!.sim.control.transactions().every((t) => !keys.includes(t.customId ?? '') || t.status !== 'DRAFT'),
    );
    // Nothing cancelled reached the EU system; what was submitted is still being followed.
    const submittedAtService = h.sim.control
      .transactions()
      .filter((t) => keys.includes(t.customId ?? '') && t.status !== 'DRAFT').length;
    expect(submittedAtService).toBe(after['submitted']);
    const submittedKeys = (
      await sql<{
        key: string;
      }>`select key from transactions where batch_id = ${intake.batchId}::uuid and state = 'submitted'`.execute(h.db)
    ).rows.map((r) => r.key);
    for (const key of submittedKeys) {
      const child = h.temporal.client.workflow.getHandle(transactionWorkflowId(key));
      expect((await child.describe()).status.name).toBe('RUNNING');
      await child.terminate('test done');
    }
  }, 120_000);
});
