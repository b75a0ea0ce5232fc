import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { MockActivityEnvironment } from '@temporalio/testing';
import { ApplicationFailure } from '@temporalio/common';
import { sql } from 'kysely';
import { openWarehouse, type Warehouse } from '../../warehouse/database.ts';
import { migrateToLatest } from '../../warehouse/migrate.ts';
import { takeInShipments } from '../../warehouse/submission/intake.ts';
import { recordTransaction } from '../../warehouse/submission/transaction-ledger.ts';
import { createSubmissionActivities, type SubmissionApi } from '../../activities/submission/activities.ts';
import { NetworkError, ServerError, UnauthorizedError } from '../../upstream/index.ts';
import { createLogger } from '../../platform/logger.ts';
import type { Transaction } from '../../schema/upstream.ts';
import { createTestDatabase } from '../support/databases.ts';
import { shipmentRow, writeShipments } from '../support/shipments.ts';

/**
 * A service so slow that a create times out and is applied only later: no second create may be
 * sent for the key until the first had time to appear under its customId.
 */
/**
 * A service in memory: `create` decides what each create does (the n-th, from 1), everything else
 * behaves as the contract says (a DRAFT may be deleted, a submitted transaction not).
 */
function fakeService(create: (body: { customId: string }, n: number) => Transaction) {
  const atService: Transaction[] = [];
  let creates = 0;
  const api = {
    async createTransaction(body: { customId: string }) {
      const t = create(body, ++creates);
      atService.push(t);
      return t;
    },
    async findTransactionByCustomId(customId: string) {
      return atService.find((t) => t.customId === customId);
    },
    async getTransaction(id: string) {
      return atService.find((t) => t.id === id)!;
    },
    async submitTransaction(id: string) {
      atService.find((t) => t.id === id)!.status = 'TO_SUBMIT';
    },
    async deleteTransaction(id: string) {
      const at = atService.findIndex((t) => t.id === id);
      if (atService[at]!.status !== 'DRAFT') throw new Error('a submitted transaction cannot be deleted');
      atService.splice(at, 1);
    },
  } as unknown as SubmissionApi;
  return { api, atService, creates: () => creates };
}

describe('creating a transaction whose answer was lost', () => {
  let db: Warehouse;
  beforeAll(async () => {
    db = openWarehouse(await createTestDatabase('settle'), 2);
    await migrateToLatest(db);
  });
  afterAll(() => db?.destroy());

  /** A key taken in from a file, ready to be created. */
  const acceptedKey = async (prefix: string) => {
    const key = `${prefix}-${Date.now()}`;
    const path = writeShipments([shipmentRow(key, 'supplier-1')]);
    expect((await takeInShipments(db, path, `${path}.report.ndjson`)).accepted).toBe(1);
    return key;
  };
  const activitiesOf = (api: SubmissionApi) =>
    createSubmissionActivities({ db, api, log: createLogger({ level: 'silent' }) });

  it('looks again instead of creating a second one until the settle time has passed', async () => {
    const key = await acceptedKey('settle');
    // Sent, timed out; the service applies it later (or never).
    const service = fakeService(() => {
      throw new NetworkError('POST /transactions', 'request timed out', { outcomeUnknown: true });
    });
    const activities = activitiesOf(service.api);
    const env = new MockActivityEnvironment();
    const attempt = () => env.run(activities.createAndSubmitTransaction, { key, createSettleMs: 60_000 });

    await expect(attempt()).rejects.toBeInstanceOf(NetworkError);
    expect(service.creates()).toBe(1);
    // Retried at once: not found yet, but the first create may still land: no second one.
    const early = await attempt().catch((error: unknown) => error);
    expect(early).toBeInstanceOf(ApplicationFailure);
    expect((early as ApplicationFailure).type).toBe('CreateMayStillApply');
    expect(service.creates()).toBe(1);

    // The first create lands after all: found, submitted, never created twice.
    service.atService.push({ id: 'tx-1', customId: key, status: 'DRAFT' } as Transaction);
    const view = await attempt();
    expect(view).toMatchObject({ transactionId: 'tx-1', status: 'TO_SUBMIT' });
    expect(service.creates()).toBe(1);
  });

  it('creates again once the settle time has passed without a trace of the first', async () => {
    const key = await acceptedKey('settle-late');
    const service = fakeService((body, n) => {
      if (n === 1) throw new NetworkError('POST /transactions', 'connection reset', { outcomeUnknown: true });
      return { id: 'tx-2', customId: body.customId, status: 'DRAFT' } as Transaction;
    });
    const activities = activitiesOf(service.api);
    const env = new MockActivityEnvironment();
    await expect(
      env.run(activities.createAndSubmitTransaction, { key, createSettleMs: 60_000 }),
    ).rejects.toBeInstanceOf(NetworkError);
    await sql`update transaction_requests set create_sent_at = now() - interval '61 seconds' where key = ${key}`.execute(
      db,
    );
    expect(await env.run(activities.createAndSubmitTransaction, { key, createSettleMs: 60_000 })).toMatchObject({
      transactionId: 'tx-2',
      status: 'TO_SUBMIT',
    });
    expect(service.creates()).toBe(2);
  });

  it('creates again at once after a create the service refused (401): a refused create cannot land later', async () => {
    const key = await acceptedKey('settle-401');
    const service = fakeService((body, n) => {
      if (n === 1) throw new UnauthorizedError({ endpoint: 'POST /transactions', status: 401 });
      return { id: 'tx-4', customId: body.customId, status: 'DRAFT' } as Transaction;
    });
    const activities = activitiesOf(service.api);
    const env = new MockActivityEnvironment();
    // The create is sent with the client's `once` option: refused, it is sent again by the attempt
    // itself under a new claim, without waiting for the settle time.
    expect(await env.run(activities.createAndSubmitTransaction, { key, createSettleMs: 60_000 })).toMatchObject({
      transactionId: 'tx-4',
      status: 'TO_SUBMIT',
    });
    expect(service.creates()).toBe(2);
  });

  it('after a refused create, still waits for an earlier one whose answer was lost, and for a 500 (which proves nothing)', async () => {
    const key = await acceptedKey('settle-lost-then-401');
    const service = fakeService((body, n) => {
      if (n === 1) throw new NetworkError('POST /transactions', 'request timed out', { outcomeUnknown: true });
      if (n === 2) throw new UnauthorizedError({ endpoint: 'POST /transactions', status: 401 });
      if (n === 3) throw new ServerError({ endpoint: 'POST /transactions', status: 500 });
      return { id: 'tx-5', customId: body.customId, status: 'DRAFT' } as Transaction;
    });
    const activities = activitiesOf(service.api);
    const env = new MockActivityEnvironment();
    // What failed: the error's name, or the type of the ApplicationFailure a repeated failure may be handed over as.
    const attempt = () =>
      env.run(activities.createAndSubmitTransaction, { key, createSettleMs: 60_000 }).then(
        () => 'created',
        (error: unknown) => (error instanceof ApplicationFailure ? error.type : (error as Error).name),
      );
    const sentAt = async () =>
      (await sql<{ at: Date }>`select create_sent_at as at from transaction_requests where key = ${key}`.execute(db))
        .rows[0]!.at;

    expect(await attempt()).toBe('NetworkError');
    // The lost create has settled without a trace: the next one is sent, and refused.
    await sql`update transaction_requests set create_sent_at = create_sent_at - interval '61 seconds' where key = ${key}`.execute(
      db,
    );
    const settled = await sentAt();
    // The next one is sent and refused (401), so the attempt sends a third at once (a refusal proves
    // nothing landed), which fails with a 500.
    expect(await attempt()).toBe('ServerError');
    expect(service.creates()).toBe(3);
    expect((await sentAt()).getTime()).toBeGreaterThan(settled.getTime());
    // A 500 may have been applied: no fourth create until it had time to appear.
    expect(await attempt()).toBe('CreateMayStillApply');
    expect(service.creates()).toBe(3);
  });

  it('stops before sending when the batch was cancelled, and reports a transaction already submitted instead of deleting it', async () => {
    const key = await acceptedKey('settle-cancel');
    const service = fakeService(() => {
      throw new Error('must not be sent');
    });
    const activities = activitiesOf(service.api);
    const cancelled = new MockActivityEnvironment();
    cancelled.cancel();
    await expect(cancelled.run(activities.createAndSubmitTransaction, { key })).rejects.toThrow(
      'cancelled before creating',
    );
    expect(service.creates()).toBe(0);

    // The create of an earlier attempt had landed and been submitted as the batch was cancelled.
    service.atService.push({ id: 'tx-3', customId: key, status: 'TO_SUBMIT' } as Transaction);
    const outcome = await new MockActivityEnvironment().run(activities.deleteDraftTransaction, { key });
    expect(outcome).toMatchObject({
      deleted: false,
      submitted: { transactionId: 'tx-3', status: 'TO_SUBMIT', state: 'submitted' },
    });
    expect(service.atService).toHaveLength(1);
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
