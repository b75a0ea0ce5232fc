import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { sql } from 'kysely';
import { startWorkerHarness, FAST_TIMING, type WorkerHarness } from '../support/worker-harness.ts';
import { shipmentRow, writeShipments } from '../support/shipments.ts';
import { batchReport } from '../../warehouse/submission/batch-report.ts';
import type { IntakeSummary } from '../../warehouse/submission/intake.ts';
import { retryBatch } from '../../cli/submission-retry.ts';
import type { CreateTransactionInput } from '../../schema/upstream.ts';

const RUN = Math.random().toString(36).slice(2, 8);
const LEGACY_401 = (endpoint: string) =>
  `${endpoint}: 401 unauthorized (token or client credentials rejected): Unauthorized`;

/**
 * A warehouse of an earlier ddsync, where a 401 ended transactions as failed for good, some of them
 * already created or even submitted at the service: `ddsync submissions retry` sends them again under
 * their keys, each going on with what the service already has, and leaves the others alone.
 */
describe('resubmitting transactions that failed for a transient reason', () => {
  let h: WorkerHarness;
  beforeAll(async () => {
    h = await startWorkerHarness(
      { seed: 61, suppliers: 2, plots: 50, timeScale: 0.001, transactionErrorRatio: 0 },
      'resubmit',
    );
  });
  afterAll(() => h?.close());

  const rowsOf = async (keys: string[]) =>
    Object.fromEntries(
      (
        await sql<{ key: string; id: string | null; state: string; status: string | null; last_error: string | null }>`
    select key, id, state, status, last_error from transactions where key = any(${keys}::text[])`.execute(h.db)
      ).rows.map((r) => [r.key, r]),
    );

  it('goes on with the DRAFT (or submitted transaction) each key has, creates what is missing, once per key', async () => {
    const supplier = h.sim.control.suppliers()[0]!.id;
    const [draftKnown, draftUnknown, nothing, submitted, refused, credentials] = [
      'draft-known',
      'draft-unknown',
      'nothing',
      'submitted',
      'refused',
      'credentials',
    ].map((n) => `resubmit-${n}-${RUN}`) as [string, string, string, string, string, string];
    const keys = [draftKnown, draftUnknown, nothing, submitted, refused, credentials];
    // A real batch whose every transaction ended failed, with closed workflows: the business was not entitled.
    h.sim.control.setEntitlements({ canManageTransactions: false });
    let intake: IntakeSummary;
    try {
      ({ intake } = await h.submit(writeShipments(keys.map((k) => shipmentRow(k, supplier)))));
    } finally {
      h.sim.control.setEntitlements({ canManageTransactions: true });
    }
    expect(Object.values(await rowsOf(keys)).map((r) => r.state)).toEqual(keys.map(() => 'failed'));

    // What an earlier ddsync left, key by key (the service's side made real with the client).
    const bodyOf = async (key: string) => ({
      ...(
        await sql<{
          payload: CreateTransactionInput;
        }>`select payload from transaction_requests where key = ${key} and status = 'accepted'`.execute(h.db)
      ).rows[0]!.payload,
      customId: key,
    });
    const fail = (key: string, error: string, id: string | null = null, status: string | null = null) =>
      sql`update transactions set last_error = ${error}, id = ${id}, status = ${status} where key = ${key}`.execute(
        h.db,
      );
    const known = await h.api.createTransaction(await bodyOf(draftKnown));
    await fail(draftKnown, LEGACY_401('PUT /transactions/{id}/submit'), known.id, 'DRAFT');
    const unknown = await h.api.createTransaction(await bodyOf(draftUnknown));
    await fail(draftUnknown, LEGACY_401('GET /transactions'));
    await fail(nothing, LEGACY_401('POST /transactions'));
    const sent = await h.api.createTransaction(await bodyOf(submitted));
    await h.api.submitTransaction(sent.id);
    await fail(submitted, LEGACY_401('GET /transactions/{id}'), sent.id, 'TO_SUBMIT');
    await fail(
      credentials,
      'POST /auth/machine-to-machine-clients/token: 401 client credentials refused: Invalid client credentials',
    );
    const refusedError = (await rowsOf([refused]))[refused]!.last_error!;
    expect(refusedError).toMatch(/403/);

    const outcome = await retryBatch(h.db, h.temporal.client, (await batchReport(h.db, intake.batchId))!, {
      taskQueue: h.temporal.taskQueue,
      concurrency: 3,
      timing: FAST_TIMING,
    });
    expect(outcome).toMatchObject({ kind: 'restarted', reopened: 5, pending: 5 });
    const progress = await (outcome as Extract<typeof outcome, { kind: 'restarted' }>).handle.result();
    expect(progress).toMatchObject({ available: 5, failed: 1, pending: 0 });

    const after = await rowsOf(keys);
    for (const key of [draftKnown, draftUnknown, nothing, submitted, credentials])
      expect(after[key]).toMatchObject({ state: 'available', status: 'AVAILABLE', last_error: null });
    // The refusal of the service stands: not sent again.
    expect(after[refused]).toMatchObject({ state: 'failed', last_error: refusedError });
    // One transaction per key, the ones that existed carried on, no draft left behind.
    const counts = h.sim.control.transactionCountsByCustomId();
    expect(keys.map((k) => counts[k])).toEqual([1, 1, 1, 1, undefined, 1]);
    expect([after[draftKnown]!.id, after[draftUnknown]!.id, after[submitted]!.id]).toEqual([
      known.id,
      unknown.id,
      sent.id,
    ]);
    expect(h.sim.control.transactions().filter((t) => keys.includes(t.customId ?? '') && t.status === 'DRAFT')).toEqual(
      [],
    );
    expect((await batchReport(h.db, intake.batchId))!.status).toBe('done');

    // Nothing more to send: a second retry starts nothing.
    expect(
      await retryBatch(h.db, h.temporal.client, (await batchReport(h.db, intake.batchId))!, {
        taskQueue: h.temporal.taskQueue,
        concurrency: 3,
      }),
    ).toEqual({ kind: 'nothing' });
  }, 180_000);
});
