import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { MockActivityEnvironment } from '@temporalio/testing';
import { ApplicationFailure, ApplicationFailureCategory } from '@temporalio/common';
import { sql } from 'kysely';
import { startWorkerHarness, FAST_TIMING, type WorkerHarness } from '../support/worker-harness.ts';
import { ddsyncEnv, runDdsync } from '../support/processes.ts';
import { shipmentRow, writeShipments } from '../support/shipments.ts';
import { waitUntil } from '../support/wait.ts';
import { takeInShipments } from '../../warehouse/submission/intake.ts';
import { batchReport } from '../../warehouse/submission/batch-report.ts';
import { createSubmissionActivities, type SubmissionApi } from '../../activities/submission/activities.ts';
import { BadRequestError } from '../../upstream/index.ts';
import { createLogger } from '../../platform/logger.ts';
import type { Warehouse } from '../../warehouse/database.ts';
import { submitBatch, submitBatchWorkflowId } from '../../workflows/submit-batch.ts';

const RUN = Math.random().toString(36).slice(2, 8);

/**
 * A permanent fault (a database that refuses one write, as a bad deploy or a constraint would) in a
 * step of a submission: retried without end, and shown while it repeats where an operator looks.
 */
async function injectFault(
  db: Warehouse,
  name: string,
  table: string,
  when: string,
  message: string,
): Promise<() => Promise<void>> {
  await sql
    .raw(
      `create function ${name}() returns trigger language plpgsql as $$ begin raise exception '%', ${quote(message)}; end $$`,
    )
    .execute(db);
  await sql
    .raw(
      `create trigger ${name} before insert or update on ${table} for each row when (${when}) execute function ${name}()`,
    )
    .execute(db);
  return async () => {
    await sql.raw(`drop trigger ${name} on ${table}; drop function ${name}()`).execute(db);
  };
}
const quote = (text: string) => `'${text.replaceAll("'", "''")}'`;

describe('a submission step that keeps failing', () => {
  let h: WorkerHarness;
  let supplier: string;
  beforeAll(async () => {
    h = await startWorkerHarness(
      { seed: 71, suppliers: 2, plots: 50, timeScale: 0.001, transactionErrorRatio: 0 },
      'stepfail',
    );
    supplier = h.sim.control.suppliers()[0]!.id;
  });
  afterAll(() => h?.close());

  const rowOf = async (key: string) =>
    (
      await sql<{ state: string; last_error: string | null; failed_attempts: number; last_failed_at: Date | null }>`
    select state, last_error, failed_attempts, last_failed_at from transactions where key = ${key}`.execute(h.db)
    ).rows[0]!;
  const activities = () => createSubmissionActivities({ db: h.db, api: h.api, log: createLogger({ level: 'silent' }) });

  it('is recorded on its transaction at every attempt (short, no secrets), logged at attempts 1, 2, 4, …, and cleared when the step succeeds', async () => {
    const key = `step-mock-${RUN}`;
    await takeInShipments(h.db, writeShipments([shipmentRow(key, supplier)]), '/dev/null');
    const remove = await injectFault(
      h.db,
      `fault_mock_${RUN}`,
      'transaction_status_events',
      `new.transaction_key = ${quote(key)}`,
      `test fault: refused for postgres://ddsync:pw-${RUN}@db/warehouse with Bearer abc.def-${RUN} ${'and more '.repeat(60)}`,
    );
    const env = new MockActivityEnvironment();
    const attempt = () =>
      env.run(activities().createAndSubmitTransaction, { key }).then(
        () => new Error('succeeded'),
        (error: unknown) => error as Error,
      );

    const failures: Error[] = [];
    for (let n = 1; n <= 4; n++) {
      const before = new Date();
      failures.push(await attempt());
      const row = await rowOf(key);
      expect(row).toMatchObject({ state: 'pending', failed_attempts: n });
      expect(row.last_error).toMatch(
        /^createAndSubmitTransaction: test fault: refused for postgres:\/\/ddsync:\[redacted\]@db\/warehouse with Bearer \[redacted\] and more/,
      );
      expect(row.last_error).not.toContain(`pw-${RUN}`);
      expect(row.last_error).not.toContain(`abc.def-${RUN}`);
      expect(row.last_error!.length).toBeLessThanOrEqual(300);
      expect(row.last_failed_at!.getTime()).toBeGreaterThanOrEqual(before.getTime() - 1_000);
    }
    // Attempts 1, 2 and 4 reach the worker's log as they are; the third is handed over as benign (logged at debug), still retried.
    const benign = failures.map(
      (f) => f instanceof ApplicationFailure && f.category === ApplicationFailureCategory.BENIGN,
    );
    expect(benign).toEqual([false, false, true, false]);
    expect((failures[2] as ApplicationFailure).nonRetryable).toBeFalsy();
    expect(failures.every((f) => f.message.includes('test fault'))).toBe(true);

    await remove();
    expect(await env.run(activities().createAndSubmitTransaction, { key })).toMatchObject({ status: 'TO_SUBMIT' });
    expect(await rowOf(key)).toMatchObject({
      state: 'submitted',
      last_error: null,
      failed_attempts: 0,
      last_failed_at: null,
    });
    // Every attempt found the transaction the first one created: one at the service.
    expect(h.sim.control.transactionCountsByCustomId()[key]).toBe(1);
  });

  it('keeps a refusal of the service final at every attempt, those handed over quietly included', async () => {
    const key = `step-refused-${RUN}`;
    await takeInShipments(h.db, writeShipments([shipmentRow(key, supplier)]), '/dev/null');
    const refusing = {
      async findTransactionByCustomId() {
        return undefined;
      },
      async createTransaction() {
        throw new BadRequestError({ endpoint: 'POST /transactions', status: 400 });
      },
    } as unknown as SubmissionApi;
    const steps = createSubmissionActivities({ db: h.db, api: refusing, log: createLogger({ level: 'silent' }) });
    const env = new MockActivityEnvironment();
    for (let n = 1; n <= 3; n++) {
      // Mapped before it is recorded: quietened as a raw error, the third would have become a retryable benign failure.
      const failure = (await env
        .run(steps.createAndSubmitTransaction, { key })
        .catch((error: unknown) => error)) as ApplicationFailure;
      expect(failure).toBeInstanceOf(ApplicationFailure);
      expect(failure).toMatchObject({ type: 'BadRequestError', nonRetryable: true });
      expect(failure.category).not.toBe(ApplicationFailureCategory.BENIGN);
    }
    expect(await rowOf(key)).toMatchObject({
      state: 'pending',
      failed_attempts: 3,
      last_error: 'createAndSubmitTransaction: POST /transactions: 400 bad request',
    });
  });

  it('of the batch itself is recorded on the batch, and cleared when the step succeeds', async () => {
    const { batchId } = await takeInShipments(
      h.db,
      writeShipments([shipmentRow(`step-batch-${RUN}`, supplier)]),
      '/dev/null',
    );
    const remove = await injectFault(
      h.db,
      `fault_batch_${RUN}`,
      'submission_batches',
      `new.status = 'done' and new.id = ${quote(batchId)}::uuid`,
      'test fault: the batch may not close',
    );
    const env = new MockActivityEnvironment();
    await expect(env.run(activities().closeSubmissionBatch, { batchId, cancelled: false })).rejects.toThrow(
      'test fault',
    );
    await expect(env.run(activities().closeSubmissionBatch, { batchId, cancelled: false })).rejects.toThrow(
      'test fault',
    );
    expect((await batchReport(h.db, batchId))!).toMatchObject({
      status: 'open',
      batchRetrying: {
        reason: 'closeSubmissionBatch: test fault: the batch may not close',
        attempts: 2,
        lastFailedAt: expect.any(Date),
      },
    });
    await remove();
    await env.run(activities().closeSubmissionBatch, { batchId, cancelled: false });
    expect((await batchReport(h.db, batchId))!).toMatchObject({ status: 'done', batchRetrying: null });
  });

  it('shows in submissions status while the batch runs, and the batch finishes once the fault is gone', async () => {
    const [healthy, faulty] = [`step-ok-${RUN}`, `step-faulty-${RUN}`];
    const intake = await takeInShipments(
      h.db,
      writeShipments([shipmentRow(healthy, supplier), shipmentRow(faulty, supplier)]),
      '/dev/null',
    );
    const remove = await injectFault(
      h.db,
      `fault_flow_${RUN}`,
      'transaction_status_events',
      `new.transaction_key = ${quote(faulty)}`,
      'test fault: no status may be recorded for this key',
    );
    await h.startWorker();
    const handle = await h.temporal.client.workflow.start(submitBatch, {
      taskQueue: h.temporal.taskQueue,
      workflowId: submitBatchWorkflowId(intake.batchId),
      args: [{ batchId: intake.batchId, concurrency: 4, timing: FAST_TIMING }],
    });
    const retrying = await waitUntil(
      'the fault to be retried',
      async () => {
        const r = (await batchReport(h.db, intake.batchId))!.retrying;
        return r[0] && r[0].attempts >= 2 ? r : undefined;
      },
      60_000,
      200,
    );
    expect(retrying).toEqual([
      {
        reason: 'createAndSubmitTransaction: test fault: no status may be recorded for this key',
        transactions: 1,
        keys: [faulty],
        attempts: expect.any(Number),
        lastFailedAt: expect.any(Date),
      },
    ]);
    expect(await rowOf(faulty)).toMatchObject({
      state: 'pending',
      last_error: 'createAndSubmitTransaction: test fault: no status may be recorded for this key',
    });

    const env = ddsyncEnv({ upstreamUrl: h.sim.url, databaseUrl: h.databaseUrl, taskQueue: h.temporal.taskQueue });
    const status = runDdsync(['submissions', 'status', intake.batchId], env);
    expect(await status.exited).toBe(0);
    expect(status.output()).toMatch(new RegExp(`^batch ${intake.batchId} \\(shipments.ndjson\\) open$`, 'm'));
    expect(status.output()).toMatch(/ended .* retrying 1$/m);
    expect(status.output()).toMatch(
      new RegExp(
        `^  retrying: 1 × createAndSubmitTransaction: test fault: no status may be recorded for this key \\(e\\.g\\. ${faulty}; \\d+ failed attempts in a row, the last at \\S+Z\\)$`,
        'm',
      ),
    );
    expect(status.output()).toContain(
      '  retried until it succeeds (the worker logs the error in full at attempts 1, 2, 4, 8, …); once its cause is fixed, the batch goes on by itself',
    );
    expect((await handle.describe()).status.name).toBe('RUNNING');

    await remove();
    expect(await handle.result()).toMatchObject({ available: 2, failed: 0, pending: 0 });
    expect(await rowOf(faulty)).toMatchObject({
      state: 'available',
      last_error: null,
      failed_attempts: 0,
      last_failed_at: null,
    });
    expect((await batchReport(h.db, intake.batchId))!).toMatchObject({ status: 'done', retrying: [] });
    const counts = h.sim.control.transactionCountsByCustomId();
    expect([counts[healthy], counts[faulty]]).toEqual([1, 1]);
  }, 120_000);
});
