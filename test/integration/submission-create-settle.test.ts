import { describe, it, expect, beforeAll, afterAll, beforeEach } from 'vitest';
import { MockActivityEnvironment } from '@temporalio/testing';
import { ApplicationFailure } from '@temporalio/common';
import { sql } from 'kysely';
import type { Warehouse } from '../../warehouse/database.ts';
import { takeInShipments } from '../../warehouse/submission/intake.ts';
import { recordTransaction } from '../../warehouse/submission/transaction-ledger.ts';
import { createSubmissionActivities, type SubmissionApi } from '../../activities/submission/activities.ts';
import { NetworkError } from '../../upstream/index.ts';
import { createLogger } from '../../platform/logger.ts';
import type { CreateTransactionInput, Transaction } from '../../schema/upstream.ts';
import type { Simulator } from '../../simulator/index.ts';
import { shipmentRow, writeShipments } from '../support/shipments.ts';
import { requestsTo, simulatorClient, startSubmissionTestbed } from '../support/submission-simulator.ts';

/**
 * One key at a time (createAndSubmitTransaction) with the real client against the simulator over
 * HTTP: a create whose answer was lost is looked up by customId, and no second one is sent until the
 * first had time to appear under it (the create-settle rule); a refused create (401) is sent again at
 * once by the attempt itself, under a new claim; a 500 proves nothing, so it is waited for like a lost
 * answer. The interleavings are the simulator's control rules (docs/simulator.md, Interceptions).
 */
/** The client's timeout in the tests of a create the service holds: it gives up waiting for the answer. */
const GIVE_UP_MS = 1_500;
const SETTLE_MS = 60_000;

describe('creating a transaction whose answer was lost', () => {
  let db: Warehouse;
  let sim: Simulator;
  let api: SubmissionApi;
  beforeAll(async () => {
    ({ db, sim } = await startSubmissionTestbed('settle', 78));
    api = simulatorClient(sim);
  });
  afterAll(async () => {
    await db?.destroy();
    await sim?.close();
  });
  // No rule, held request, transaction or request count of one test reaches the next.
  beforeEach(() => sim.control.reset());

  /** A key taken in from a file, ready to be created. */
  const acceptedKey = async (prefix: string) => {
    const key = `${prefix}-${Date.now()}`;
    const path = writeShipments([shipmentRow(key, sim.control.suppliers()[0]!.id)]);
    expect((await takeInShipments(db, path, `${path}.report.ndjson`)).accepted).toBe(1);
    return key;
  };
  const activitiesOf = (client: SubmissionApi) =>
    createSubmissionActivities({ db, api: client, log: createLogger({ level: 'silent' }) });
  /** Creates (POST /transactions) that reached the service. */
  const creates = () => requestsTo(sim, 'POST /transactions');
  /** The transactions the service holds for `key`. */
  const atService = (key: string) => sim.control.transactions().filter((t) => t.customId === key);
  /** When the key's create was last claimed (transaction_requests.create_sent_at), in µs since the epoch. */
  const sentAt = async (key: string) =>
    (
      await sql<{ us: number | null }>`
        select (extract(epoch from create_sent_at) * 1e6)::float8 as us from transaction_requests where key = ${key}`.execute(
        db,
      )
    ).rows[0]!.us;
  /** Minutes pass: the last create's claim is older than the settle time. */
  const settle = (key: string) =>
    sql`update transaction_requests set create_sent_at = create_sent_at - interval '61 seconds' where key = ${key}`.execute(
      db,
    );
  /** What an attempt ended with: 'created', the error's name, or the type of an ApplicationFailure. */
  const outcomeOf = (run: Promise<unknown>) =>
    run.then(
      () => 'created',
      (error: unknown) => (error instanceof ApplicationFailure ? error.type : (error as Error).name),
    );

  it('looks again instead of creating a second one until the settle time has passed', async () => {
    const key = await acceptedKey('settle');
    // Sent and held unhandled by the service (applied only on release); the client gives up waiting.
    sim.control.intercept({ method: 'POST', path: '/transactions', body: { customId: key }, action: 'holdRequest' });
    const activities = activitiesOf(simulatorClient(sim, { timeoutMs: GIVE_UP_MS }));
    const env = new MockActivityEnvironment();
    const attempt = () => env.run(activities.createAndSubmitTransaction, { key, createSettleMs: SETTLE_MS });

    const lost = await attempt().catch((error: unknown) => error);
    expect(lost).toBeInstanceOf(NetworkError);
    expect((lost as NetworkError).outcomeUnknown).toBe(true);
    expect(sim.control.heldRequests()).toBe(1);
    expect(creates()).toBe(1);
    // Retried at once: looked for by customId, not found yet, but the first create may still land: no second one.
    const listsBefore = requestsTo(sim, 'GET /transactions');
    const early = await attempt().catch((error: unknown) => error);
    expect(early).toBeInstanceOf(ApplicationFailure);
    expect((early as ApplicationFailure).type).toBe('CreateMayStillApply');
    expect(requestsTo(sim, 'GET /transactions')).toBe(listsBefore + 1);
    expect(creates()).toBe(1);

    // The first create lands after all: found, submitted, never created twice.
    expect(await sim.control.releaseHeld()).toBe(1);
    const [landed] = atService(key);
    expect(landed).toMatchObject({ status: 'DRAFT' });
    expect(await attempt()).toMatchObject({ transactionId: landed!.id, status: 'TO_SUBMIT', state: 'submitted' });
    expect(creates()).toBe(1);
    expect(atService(key).map((t) => [t.id, t.status])).toEqual([[landed!.id, 'TO_SUBMIT']]);
  });

  it('finds a create that was applied but whose answer was cut off by customId, in the same attempt', async () => {
    const key = await acceptedKey('settle-dropped');
    // Handled by the service, then the connection is cut: applied, its answer lost.
    sim.control.intercept({ method: 'POST', path: '/transactions', body: { customId: key }, action: 'dropResponse' });
    const activities = activitiesOf(api);
    const view = await new MockActivityEnvironment().run(activities.createAndSubmitTransaction, {
      key,
      createSettleMs: SETTLE_MS,
    });
    const [only, ...others] = atService(key);
    expect(others).toEqual([]);
    expect(view).toMatchObject({ transactionId: only!.id, status: 'TO_SUBMIT', state: 'submitted' });
    expect(only!.status).toBe('TO_SUBMIT');
    expect(creates()).toBe(1);
  });

  it('creates again once the settle time has passed without a trace of the first', async () => {
    const key = await acceptedKey('settle-late');
    // The connection cut before the service handled the create: its answer lost, nothing applied.
    sim.control.intercept({ method: 'POST', path: '/transactions', body: { customId: key }, action: 'reset' });
    const activities = activitiesOf(api);
    const env = new MockActivityEnvironment();
    const lost = await env
      .run(activities.createAndSubmitTransaction, { key, createSettleMs: SETTLE_MS })
      .catch((error: unknown) => error);
    expect(lost).toBeInstanceOf(NetworkError);
    expect((lost as NetworkError).outcomeUnknown).toBe(true);
    expect(creates()).toBe(1);
    expect(atService(key)).toEqual([]);

    await settle(key);
    const view = await env.run(activities.createAndSubmitTransaction, { key, createSettleMs: SETTLE_MS });
    const [created] = atService(key);
    expect(view).toMatchObject({ transactionId: created!.id, status: 'TO_SUBMIT', state: 'submitted' });
    expect(creates()).toBe(2);
    expect(atService(key)).toHaveLength(1);
  });

  it('creates again at once after a create the service refused (401), under a new claim: a refused create cannot land later', async () => {
    const key = await acceptedKey('settle-401');
    sim.control.intercept({
      method: 'POST',
      path: '/transactions',
      body: { customId: key },
      action: 'status',
      status: 401,
    });
    // The real client; before each create is sent, the claim it is sent under is read.
    const client = simulatorClient(sim);
    const claimsAtSend: Array<number | null> = [];
    const activities = activitiesOf({
      ...client,
      createTransaction: async (body: CreateTransactionInput, opts) => {
        claimsAtSend.push(await sentAt(key));
        return client.createTransaction(body, opts);
      },
    });
    // The create is sent with the client's `once` option: refused, it is sent again by the attempt
    // itself under a new claim, without waiting for the settle time.
    const view = await new MockActivityEnvironment().run(activities.createAndSubmitTransaction, {
      key,
      createSettleMs: SETTLE_MS,
    });
    const [created] = atService(key);
    expect(view).toMatchObject({ transactionId: created!.id, status: 'TO_SUBMIT', state: 'submitted' });
    expect(creates()).toBe(2);
    expect(atService(key)).toHaveLength(1);
    // Each send under a claim of its own: the second claimed after the first was refused.
    expect(claimsAtSend).toHaveLength(2);
    expect(claimsAtSend[0]).toEqual(expect.any(Number));
    expect(claimsAtSend[1]).toBeGreaterThan(claimsAtSend[0]!);
    // One attempt did it all.
    const attempts = await sql<{ n: number }>`
      select create_attempts as n from transaction_requests where key = ${key}`.execute(db);
    expect(attempts.rows[0]!.n).toBe(1);
  });

  it('after a refused create, still waits for an earlier one whose answer was lost, and for a 500 (which proves nothing)', async () => {
    const key = await acceptedKey('settle-lost-then-401');
    // The first create: held unhandled, never released (the service never applies it); the client gives up.
    // The next: refused (401). The one after: 500.
    const ofKey = { method: 'POST', path: '/transactions', body: { customId: key } };
    sim.control.intercept({ ...ofKey, action: 'holdRequest' });
    sim.control.intercept({ ...ofKey, action: 'status', status: 401 });
    sim.control.intercept({ ...ofKey, action: 'status', status: 500 });
    const activities = activitiesOf(simulatorClient(sim, { timeoutMs: GIVE_UP_MS }));
    const env = new MockActivityEnvironment();
    const attempt = () => outcomeOf(env.run(activities.createAndSubmitTransaction, { key, createSettleMs: SETTLE_MS }));

    expect(await attempt()).toBe('NetworkError');
    expect(sim.control.heldRequests()).toBe(1);
    // The lost create has settled without a trace: the next one is sent, and refused.
    await settle(key);
    const settled = (await sentAt(key))!;
    // The next one is sent and refused (401), so the attempt sends a third at once (a refusal proves
    // nothing landed), which fails with a 500.
    expect(await attempt()).toBe('ServerError');
    expect(creates()).toBe(3);
    // The 500's claim stands: the settle time runs from it, not from the lost create.
    expect(await sentAt(key)).toBeGreaterThan(settled);
    // A 500 may have been applied: no fourth create until it had time to appear.
    expect(await attempt()).toBe('CreateMayStillApply');
    expect(creates()).toBe(3);
    expect(atService(key)).toEqual([]);
  });

  it('stops before sending when the batch was cancelled, and reports a transaction already submitted instead of deleting it', async () => {
    const key = await acceptedKey('settle-cancel');
    const activities = activitiesOf(api);
    const cancelled = new MockActivityEnvironment();
    cancelled.cancel();
    await expect(cancelled.run(activities.createAndSubmitTransaction, { key })).rejects.toThrow(
      'cancelled before creating',
    );
    expect(creates()).toBe(0);

    // The create of an earlier attempt had landed and been submitted as the batch was cancelled
    // (sent straight to the service, so the warehouse never heard of it).
    const payload = (
      await sql<{ payload: CreateTransactionInput }>`
        select payload from transaction_requests where key = ${key}`.execute(db)
    ).rows[0]!.payload;
    const earlier = await api.createTransaction({ ...payload, customId: key });
    await api.submitTransaction(earlier.id);
    const outcome = await new MockActivityEnvironment().run(activities.deleteDraftTransaction, { key });
    expect(outcome).toMatchObject({
      deleted: false,
      submitted: { transactionId: earlier.id, status: 'TO_SUBMIT', state: 'submitted' },
    });
    expect(requestsTo(sim, 'DELETE /transactions/:id')).toBe(0);
    expect(atService(key).map((t) => [t.id, t.status])).toEqual([[earlier.id, 'TO_SUBMIT']]);
  });

  it('keeps a submitted transaction submitted when a stale create answer (DRAFT) is recorded after its submit', async () => {
    // One attempt thought dead records its create's answer after its retry found the transaction by
    // customId, submitted it and recorded that: the DRAFT must not set it back to created.
    const key = await acceptedKey('settle-stale-draft');
    const t = { id: `tx-stale-${Date.now()}`, customId: key } as Transaction;
    await recordTransaction(db, key, { ...t, status: 'DRAFT' }, 'create');
    await recordTransaction(db, key, { ...t, status: 'TO_SUBMIT' }, 'submit');
    await recordTransaction(db, key, { ...t, status: 'DRAFT' }, 'create');
    const after = await sql<{ status: string; state: string; submitted: boolean }>`
      select status, state, submitted_at is not null as submitted from transactions where key = ${key}`.execute(db);
    expect(after.rows).toEqual([{ status: 'TO_SUBMIT', state: 'submitted', submitted: true }]);
    const events = await sql<{ status: string }>`
      select status from transaction_status_events where transaction_key = ${key} order by status`.execute(db);
    expect(events.rows.map((e) => e.status)).toEqual(['DRAFT', 'TO_SUBMIT']);
  });
});
