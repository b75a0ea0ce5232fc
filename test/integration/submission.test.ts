import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { readFileSync } from 'node:fs';
import { sql } from 'kysely';
import { startWorkerHarness, type WorkerHarness } from '../support/worker-harness.ts';
import { shipmentRow, writeShipments } from '../support/shipments.ts';
import { transactionWorkflowId } from '../../workflows/submit-transaction.ts';
import { submitBatchWorkflowId } from '../../workflows/submit-batch.ts';
import { batchReport } from '../../warehouse/submission/batch-report.ts';

/** Keys unique to this run: the simulator and the warehouse are fresh, the Temporal server is shared. */
const RUN = Math.random().toString(36).slice(2, 8);
const keyOf = (name: string) => `${name}-${RUN}`;

describe('bulk transaction submission', () => {
  let h: WorkerHarness;
  let supplier: string;
  beforeAll(async () => {
    h = await startWorkerHarness(
      { seed: 31, suppliers: 2, plots: 100, timeScale: 0.001, transactionErrorRatio: 0 },
      'submit',
    );
    supplier = h.sim.control.suppliers()[0]!.id;
  });
  afterAll(() => h?.close());

  const transactions = async (keys: string[]) =>
    (
      await sql<{
        key: string;
        state: string;
        status: string;
        reference_number: string | null;
        verification_number: string | null;
        error_reason: string | null;
        last_error: string | null;
        submitted_at: Date | null;
        validated_at: Date | null;
      }>`
    select key, state, status, reference_number, verification_number, error_reason, last_error, submitted_at, validated_at
    from transactions where key = any(${keys}::text[]) order by key`.execute(h.db)
    ).rows;

  it('takes a batch to AVAILABLE with DDS numbers in the documented formats; hours of validation pass on durable timers', async () => {
    const keys = Array.from({ length: 8 }, (_, i) => keyOf(`ok-${i}`));
    const { intake, progress } = await h.submit(writeShipments(keys.map((k) => shipmentRow(k, supplier))));
    expect(intake).toMatchObject({ rows: 8, accepted: 8, invalid: 0, duplicates: 0 });
    expect(progress).toMatchObject({ started: 8, available: 8, error: 0, failed: 0, pending: 0 });
    const rows = await transactions(keys);
    expect(rows).toHaveLength(8);
    for (const t of rows) {
      expect(t).toMatchObject({ state: 'available', status: 'AVAILABLE' });
      expect(t.reference_number).toMatch(/^\d{2}[A-Z]{2}[A-Z0-9]{10}$/);
      expect(t.verification_number).toMatch(/^[A-Z0-9]{8}$/);
      expect(t.validated_at!.getTime()).toBeGreaterThanOrEqual(t.submitted_at!.getTime());
    }
    const events = await sql<{ status: string; n: number }>`
      select status, count(*)::int as n from transaction_status_events where transaction_key = any(${keys}::text[]) group by status order by status`.execute(
      h.db,
    );
    expect(Object.fromEntries(events.rows.map((r) => [r.status, r.n]))).toMatchObject({
      DRAFT: 8,
      TO_SUBMIT: 8,
      AVAILABLE: 8,
    });
    // Exactly one transaction per key at the service.
    const counts = h.sim.control.transactionCountsByCustomId();
    expect(keys.map((k) => counts[k])).toEqual(keys.map(() => 1));
    // One workflow for the batch, none per transaction: its chunks create and submit, one activity reads
    // what is due, and the wait is durable timers in the workflow, not an activity that sleeps.
    const history = await h.temporal.client.workflow.getHandle(submitBatchWorkflowId(intake.batchId)).fetchHistory();
    const batchEvents = history.events ?? [];
    expect(batchEvents.filter((e) => e.timerStartedEventAttributes).length).toBeGreaterThan(0);
    expect(batchEvents.filter((e) => e.startChildWorkflowExecutionInitiatedEventAttributes)).toEqual([]);
    const activities = batchEvents.flatMap((e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? []);
    expect(new Set(activities)).toEqual(
      new Set(['openSubmissionBatch', 'sendTransactions', 'followDueTransactions', 'closeSubmissionBatch']),
    );
    await expect(h.temporal.client.workflow.getHandle(transactionWorkflowId(keys[0]!)).describe()).rejects.toThrow(
      /not found/i,
    );
    const latency = await sql<{ available: number; median: number | null }>`
      select available::int, median_seconds_submit_to_available::float8 as median from bi_transaction_latency where batch_id = ${intake.batchId}::uuid`.execute(
      h.db,
    );
    expect(latency.rows[0]!.available).toBe(8);
  });

  it('sends valid rows and reports every invalid one with its line, field and rule', async () => {
    const good = keyOf('mixed-good');
    const path = writeShipments([
      shipmentRow(good, supplier),
      '{ not json',
      shipmentRow(keyOf('mixed-bad'), supplier, { countryOfActivity: 'USA' }),
      shipmentRow(good, supplier),
    ]);
    const { intake, progress } = await h.submit(path);
    expect(intake).toMatchObject({ rows: 4, accepted: 1, invalid: 3, duplicates: 0 });
    expect(progress).toMatchObject({ available: 1 });
    const report = readFileSync(`${path}.report.ndjson`, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { line: number; errors: Array<{ field: string; rule: string }> });
    expect(report.map((r) => [r.line, r.errors[0]!.field])).toEqual([
      [2, '(row)'],
      [3, 'countryOfActivity'],
      [4, 'key'],
    ]);
    expect(report[0]!.errors[0]!.rule).toMatch(/^not valid JSON/);
    expect(report[2]!.errors[0]!.rule).toBe('duplicate of line 1 of this file: a key names one shipment');
    const stored = await sql<{
      line: number;
      status: string;
    }>`select line, status from transaction_requests where batch_id = ${intake.batchId}::uuid order by line`.execute(
      h.db,
    );
    expect(stored.rows).toEqual([
      { line: 1, status: 'accepted' },
      { line: 2, status: 'invalid' },
      { line: 3, status: 'invalid' },
      { line: 4, status: 'invalid' },
    ]);
  });

  it('creates nothing new when the same file is submitted twice', async () => {
    const keys = [keyOf('twice-1'), keyOf('twice-2')];
    const path = writeShipments(
      keys.map((k) => shipmentRow(k, supplier)),
      'json-array',
    );
    const first = await h.submit(path);
    const before = h.sim.control.transactions().length;
    const again = await h.submit(path);
    expect(again.intake).toMatchObject({ rows: 2, accepted: 0, duplicates: 2 });
    expect(again.progress).toBeNull();
    // Nothing to send: closed at once (no workflow runs for it), saying where its keys were sent.
    expect(await batchReport(h.db, again.intake.batchId)).toMatchObject({
      status: 'done',
      finishedAt: expect.any(Date),
      duplicateOf: [{ batchId: first.intake.batchId, rows: 2 }],
    });
    expect(h.sim.control.transactions().length).toBe(before);
  });

  it('ends a transaction the EU system rejects as error, with the reason', async () => {
    h.sim.control.setTransactionErrorRatio(1);
    try {
      const key = keyOf('rejected');
      const { progress } = await h.submit(writeShipments([shipmentRow(key, supplier)]));
      expect(progress).toMatchObject({ error: 1, available: 0 });
      const [t] = await transactions([key]);
      expect(t).toMatchObject({ state: 'error', status: 'ERROR', reference_number: null });
      expect(t!.error_reason).toEqual(expect.any(String));
    } finally {
      h.sim.control.setTransactionErrorRatio(0);
    }
  });

  it("fails at once, with the service's message, when the business is not entitled (403)", async () => {
    h.sim.control.setEntitlements({ canManageTransactions: false });
    try {
      const key = keyOf('not-entitled');
      const { progress } = await h.submit(writeShipments([shipmentRow(key, supplier)]));
      expect(progress).toMatchObject({ failed: 1 });
      const [t] = await transactions([key]);
      expect(t).toMatchObject({ state: 'failed' });
      expect(t!.last_error).toMatch(/403/);
      expect(h.sim.control.transactionCountsByCustomId()[key]).toBeUndefined();
    } finally {
      h.sim.control.setEntitlements({ canManageTransactions: true });
    }
  });

  it('still creates exactly one transaction per key when the service applies a create and drops its response', async () => {
    h.sim.control.setFaults({ dropCreateResponse: 0.6 });
    try {
      const keys = Array.from({ length: 10 }, (_, i) => keyOf(`dropped-${i}`));
      const { progress } = await h.submit(writeShipments(keys.map((k) => shipmentRow(k, supplier))));
      expect(progress).toMatchObject({ available: 10 });
      const counts = h.sim.control.transactionCountsByCustomId();
      expect(keys.map((k) => counts[k])).toEqual(keys.map(() => 1));
    } finally {
      h.sim.control.setFaults('none');
    }
  });
});
