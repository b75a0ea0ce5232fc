import { describe, it, expect, beforeAll, afterAll, beforeEach } from 'vitest';
import { MockActivityEnvironment } from '@temporalio/testing';
import { ApplicationFailure } from '@temporalio/common';
import { sql } from 'kysely';
import type { Warehouse } from '../../warehouse/database.ts';
import { takeInShipments } from '../../warehouse/submission/intake.ts';
import { noteCreatesSent, recordSightings, type FollowTiming } from '../../warehouse/submission/bulk-ledger.ts';
import { createBulkSubmissionActivities, type SendChunkInput } from '../../activities/submission/bulk.ts';
import type { SubmissionApi } from '../../activities/submission/activities.ts';
import { createLogger } from '../../platform/logger.ts';
import type { Transaction } from '../../schema/upstream.ts';
import type { Simulator } from '../../simulator/index.ts';
import { shipmentRow, writeShipments } from '../support/shipments.ts';
import { requestsTo, simulatorClient, startSubmissionTestbed } from '../support/submission-simulator.ts';

/**
 * The chunk activity with the real client against the simulator over HTTP: what the ledger says was
 * sent is not sent again, a create whose answer was lost is looked up by customId before any second one
 * (the create-settle rule), a refusal ends only its key, and two attempts of a chunk that overlap never
 * both create. The interleavings are the simulator's control rules (docs/simulator.md, Interceptions).
 */
const TIMING: FollowTiming = {
  firstPollMs: 60_000,
  maxPollMs: 3_600_000,
  euWaitMs: 1_800_000,
  deadlineMs: 7 * 86_400_000,
};
/** The client's timeout in the test of a lost create: it gives up on the create the service holds. */
const GIVE_UP_MS = 1_500;

describe('a chunk of a batch', () => {
  let db: Warehouse;
  let sim: Simulator;
  let api: SubmissionApi;
  beforeAll(async () => {
    ({ db, sim } = await startSubmissionTestbed('chunks', 76));
    api = simulatorClient(sim);
  });
  afterAll(async () => {
    await db?.destroy();
    await sim?.close();
  });
  // No rule, transaction or request count of one test reaches the next.
  beforeEach(() => sim.control.reset());

  const batchOf = async (prefix: string, n: number) => {
    const keys = Array.from({ length: n }, (_, i) => `${prefix}-${Date.now()}-${i}`);
    const path = writeShipments(keys.map((k) => shipmentRow(k, sim.control.suppliers()[0]!.id)));
    const intake = await takeInShipments(db, path, `${path}.report.ndjson`);
    expect(intake.accepted).toBe(n);
    return { keys, batchId: intake.batchId };
  };
  const chunk = (batchId: string, extra: Partial<SendChunkInput> = {}): SendChunkInput => ({
    batchId,
    afterLine: 0,
    throughLine: 1_000,
    concurrency: 3,
    createSettleMs: 60_000,
    timing: TIMING,
    ...extra,
  });
  const activitiesOf = (client: SubmissionApi) =>
    createBulkSubmissionActivities({ db, api: client, log: createLogger({ level: 'silent' }) });
  const rows = async (keys: string[]) =>
    (
      await sql<{ key: string; state: string; id: string | null; failed_attempts: number; last_error: string | null }>`
      select key, state, id, failed_attempts, last_error from transactions where key = any(${keys}::text[]) order by key`.execute(
        db,
      )
    ).rows;
  /** Creates (POST /transactions) and lists (GET /transactions) that reached the service. */
  const creates = () => requestsTo(sim, 'POST /transactions');
  const lists = () => requestsTo(sim, 'GET /transactions');
  /** The transactions the service holds for these keys. */
  const atService = (keys: string[]) => sim.control.transactions().filter((t) => keys.includes(t.customId));

  it('creates and submits every key once; run again, it sends nothing (the ledger says they were sent)', async () => {
    const { keys, batchId } = await batchOf('chunk-once', 7);
    const send = () => new MockActivityEnvironment().run(activitiesOf(api).sendTransactions, chunk(batchId));
    expect(await send()).toEqual({ submitted: 7, refused: 0 });
    expect((await rows(keys)).map((r) => r.state)).toEqual(keys.map(() => 'submitted'));
    expect(atService(keys).map((t) => t.status)).toEqual(keys.map(() => 'TO_SUBMIT'));
    expect(await send()).toEqual({ submitted: 0, refused: 0 });
    expect(creates()).toBe(7);
    const events = await sql<{ status: string; n: number }>`
      select status, count(*)::int as n from transaction_status_events where transaction_key = any(${keys}::text[]) group by 1 order by 1`.execute(
      db,
    );
    expect(events.rows).toEqual([
      { status: 'DRAFT', n: 7 },
      { status: 'TO_SUBMIT', n: 7 },
    ]);
  });

  it('finds a create whose answer was lost by customId, and sends no second create until the settle time has passed', async () => {
    const { keys, batchId } = await batchOf('chunk-lost', 4);
    // The service holds one create unhandled (applied late, after the chunk); the client gives up waiting.
    sim.control.intercept({ method: 'POST', path: '/transactions', action: 'holdRequest' });
    const impatient = simulatorClient(sim, { timeoutMs: GIVE_UP_MS });
    const send = () =>
      new MockActivityEnvironment()
        .run(activitiesOf(impatient).sendTransactions, chunk(batchId))
        .catch((error: unknown) => error);
    const failed = await send();
    expect(failed).toBeInstanceOf(ApplicationFailure);
    expect((failed as ApplicationFailure).type).toBe('TransactionsNotSentYet');
    expect((failed as ApplicationFailure).nonRetryable).toBeFalsy();
    expect(sim.control.heldRequests()).toBe(1);
    // Not applied yet: one key pending with its failure shown; the other three submitted.
    const after = await rows(keys);
    expect(after.filter((r) => r.state === 'submitted')).toHaveLength(3);
    const waiting = after.find((r) => r.state === 'pending')!;
    expect(waiting).toMatchObject({ failed_attempts: 1 });
    expect(waiting.last_error).toMatch(
      new RegExp(`^createAndSubmitTransaction: POST /transactions: network error: no response within ${GIVE_UP_MS} ms`),
    );

    // Retried at once: looked for (one list for the chunk), not found, no second create within the settle time.
    const retried = await send();
    expect((retried as ApplicationFailure).message).toMatch(/may still be applied by the service/);
    expect(creates()).toBe(4);
    expect(lists()).toBeGreaterThanOrEqual(2);

    // The lost create lands: the next attempt finds it, submits it, never creates it twice.
    expect(await sim.control.releaseHeld()).toBe(1);
    expect(await send()).toEqual({ submitted: 1, refused: 0 });
    expect(creates()).toBe(4);
    expect((await rows(keys)).map((r) => [r.state, r.failed_attempts])).toEqual(keys.map(() => ['submitted', 0]));
    expect(atService([waiting.key])).toHaveLength(1);
  });

  it('creates again after the settle time when the lost create never appeared, and at once after a refused one (401)', async () => {
    const { keys, batchId } = await batchOf('chunk-settled', 2);
    // The first key's create: the connection cut before the service handled it (an answer lost, nothing applied).
    sim.control.intercept({ method: 'POST', path: '/transactions', body: { customId: keys[0]! }, action: 'reset' });
    // The second key's: refused (401) every time, fresh tokens included, for as long as this attempt sends it.
    sim.control.intercept({
      method: 'POST',
      path: '/transactions',
      body: { customId: keys[1]! },
      action: 'status',
      status: 401,
      times: 1_000,
    });
    const send = () =>
      new MockActivityEnvironment()
        .run(activitiesOf(api).sendTransactions, chunk(batchId, { concurrency: 1 }))
        .catch((error: unknown) => error);
    expect(await send()).toBeInstanceOf(ApplicationFailure);
    expect(atService(keys)).toEqual([]);
    sim.control.clearIntercepts();
    // The lost create of the first key: no trace after the settle time.
    await sql`update transaction_requests set create_sent_at = create_sent_at - interval '61 seconds' where key = ${keys[0]!}`.execute(
      db,
    );
    const before = creates();
    expect(await send()).toEqual({ submitted: 2, refused: 0 });
    // One create per key, the refused key's at once.
    expect(creates() - before).toBe(2);
    expect(
      atService(keys)
        .map((t) => t.customId)
        .sort(),
    ).toEqual([...keys].sort());
  });

  it('ends a key the service refuses as failed, with its message, and sends the others', async () => {
    const { keys, batchId } = await batchOf('chunk-refused', 3);
    sim.control.intercept({
      method: 'POST',
      path: '/transactions',
      body: { customId: keys[1]! },
      action: 'status',
      status: 403,
    });
    expect(await new MockActivityEnvironment().run(activitiesOf(api).sendTransactions, chunk(batchId))).toEqual({
      submitted: 2,
      refused: 1,
    });
    const after = await rows(keys);
    expect(after.map((r) => r.state)).toEqual(['submitted', 'failed', 'submitted']);
    expect(after[1]!.last_error).toMatch(/403/);
  });

  it('never lets two overlapping attempts of a chunk both create a key (a worker thought dead that still runs)', async () => {
    const { keys, batchId } = await batchOf('chunk-overlap', 1);
    // An earlier attempt began and never sent: the next ones look the key up by customId before creating.
    await sql`update transaction_requests set create_attempts = 1 where key = ${keys[0]!}`.execute(db);
    // The first attempt's look-up is answered as the service held it then (nothing yet), but the answer
    // arrives only after a second attempt has created the key.
    sim.control.intercept({ method: 'GET', path: '/transactions', action: 'holdResponse' });
    const first = new MockActivityEnvironment()
      .run(activitiesOf(api).sendTransactions, chunk(batchId))
      .catch((e: unknown) => e);
    await sim.control.whenHeld(1);
    expect(await new MockActivityEnvironment().run(activitiesOf(api).sendTransactions, chunk(batchId))).toEqual({
      submitted: 1,
      refused: 0,
    });
    // The first (still running, its look-up found nothing) may not send: a later attempt began after it.
    await sim.control.releaseHeld();
    const failure = await first;
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect((failure as ApplicationFailure).message).toMatch(/being sent by a later attempt/);
    expect(creates()).toBe(1);
    expect(atService(keys)).toHaveLength(1);
    expect((await rows(keys))[0]).toMatchObject({ state: 'submitted' });
  });

  it('claims a key for the current attempt only, when an attempt thought dead and its retry ask in one statement', async () => {
    const { keys } = await batchOf('chunk-claim', 2);
    const [a, b] = keys as [string, string];
    await sql`update transaction_requests set create_attempts = 2 where key = ${a}`.execute(db);
    await sql`update transaction_requests set create_attempts = 1 where key = ${b}`.execute(db);
    // The workers' lanes share one claim statement: the same key may come with two attempts.
    const claimed = await noteCreatesSent(db, [
      { key: a, attempt: 1 },
      { key: a, attempt: 2 },
      { key: b, attempt: 1 },
    ]);
    expect(claimed.map((c) => [c.key, c.attempt, c.previous])).toEqual(
      expect.arrayContaining([
        [a, 2, null],
        [b, 1, null],
      ]),
    );
    expect(claimed).toHaveLength(2);
    // Claimed again by the same attempt: the time of the claim before comes back (for withdrawCreateSent).
    const again = await noteCreatesSent(db, [{ key: b, attempt: 1 }]);
    expect(again[0]?.previous).toBeInstanceOf(Date);
  });

  it('keeps a submitted transaction followed when a stale create answer (DRAFT) is recorded after its submit', async () => {
    // An attempt thought dead records its create's answer after its retry found the transaction by
    // customId, submitted it and recorded that: the DRAFT must not undo it (it would never be read again).
    const { keys } = await batchOf('chunk-stale-draft', 1);
    const key = keys[0]!;
    const t = { id: `tx-stale-${Date.now()}`, customId: key } as Transaction;
    await recordSightings(db, [{ key, transaction: { ...t, status: 'TO_SUBMIT' }, source: 'submit' }], TIMING);
    await recordSightings(db, [{ key, transaction: { ...t, status: 'DRAFT' }, source: 'create' }], TIMING);
    const after = await sql<{ status: string; state: string; due: boolean }>`
      select status, state, next_poll_at is not null as due from transactions where key = ${key}`.execute(db);
    expect(after.rows).toEqual([{ status: 'TO_SUBMIT', state: (await rows([key]))[0]!.state, due: true }]);
    expect(after.rows[0]!.state).not.toBe('created');
  });

  it("schedules a key's first read from its own submit, not from when the chunk records it", async () => {
    // A chunk records its keys together at its end: the first key was submitted seconds before.
    const { keys } = await batchOf('chunk-own-submit', 2);
    const [early, late] = keys as [string, string];
    const timing: FollowTiming = { ...TIMING, firstPollMs: 1_000 };
    const submittedAt = new Date(Date.now() - 20_000);
    await recordSightings(
      db,
      [
        {
          key: early,
          transaction: { id: `tx-early-${Date.now()}`, customId: early, status: 'DRAFT' } as Transaction,
          source: 'create',
          at: submittedAt,
        },
        {
          key: early,
          transaction: { id: `tx-early-${Date.now()}`, customId: early, status: 'TO_SUBMIT' } as Transaction,
          source: 'submit',
          at: submittedAt,
        },
        {
          key: late,
          transaction: { id: `tx-late-${Date.now()}`, customId: late, status: 'TO_SUBMIT' } as Transaction,
          source: 'submit',
        },
      ],
      timing,
    );
    const { rows: after } = await sql<{ key: string; since_submit_s: number; due_in_s: number }>`
      select key, extract(epoch from now() - submitted_at)::float8 as since_submit_s,
             extract(epoch from next_poll_at - now())::float8 as due_in_s
      from transactions where key = any(${keys}::text[]) order by key`.execute(db);
    const of = (key: string) => after.find((r) => r.key === key)!;
    // Submitted 20 s ago: due 19 s ago (read at once), its deadline counted from then too.
    expect(of(early).since_submit_s).toBeCloseTo(20, 0);
    expect(of(early).due_in_s).toBeCloseTo(-19, 0);
    // Without a time of its own: when it is recorded.
    expect(of(late).since_submit_s).toBeCloseTo(0, 0);
    expect(of(late).due_in_s).toBeCloseTo(1, 0);
    // A time ahead of the database's clock (a worker's clock ahead) counts as now.
    const { keys: ahead } = await batchOf('chunk-ahead', 1);
    await recordSightings(
      db,
      [
        {
          key: ahead[0]!,
          transaction: { id: `tx-ahead-${Date.now()}`, customId: ahead[0]!, status: 'TO_SUBMIT' } as Transaction,
          source: 'submit',
          at: new Date(Date.now() + 60_000),
        },
      ],
      timing,
    );
    const { rows: aheadRow } = await sql<{ future: boolean }>`
      select submitted_at > now() as future from transactions where key = ${ahead[0]!}`.execute(db);
    expect(aheadRow[0]!.future).toBe(false);
  });

  it('computes when each transaction is read next from the ledger: backoff, the EU wait after SUBMITTED, the deadline', async () => {
    const { keys, batchId } = await batchOf('chunk-timing', 1);
    const key = keys[0]!;
    const t = { id: `tx-timing-${Date.now()}`, customId: key } as Transaction;
    const timing: FollowTiming = { firstPollMs: 1_000, maxPollMs: 5_000, euWaitMs: 60_000, deadlineMs: 120_000 };
    const dueIn = async () =>
      (
        await sql<{ s: number; polls: number }>`
        select extract(epoch from next_poll_at - now())::float8 as s, polls from transactions where key = ${key}`.execute(
          db,
        )
      ).rows[0]!;
    await recordSightings(db, [{ key, transaction: { ...t, status: 'DRAFT' }, source: 'create' }], timing);
    expect((await rows([key]))[0]!.state).toBe('created');
    await recordSightings(db, [{ key, transaction: { ...t, status: 'TO_SUBMIT' }, source: 'submit' }], timing);
    expect((await dueIn()).s).toBeCloseTo(1, 0);
    // Each read doubles the wait: 2 s, 4 s, then at most 5 s.
    const read = (status: string) =>
      recordSightings(db, [{ key, transaction: { ...t, status }, source: 'poll' }], timing, new Date());
    await read('TO_SUBMIT');
    expect(await dueIn()).toMatchObject({ polls: 1 });
    expect((await dueIn()).s).toBeCloseTo(2, 0);
    await read('TO_SUBMIT');
    expect((await dueIn()).s).toBeCloseTo(4, 0);
    // Seen SUBMITTED: not read again sooner than the EU wait after it was first seen so.
    await read('SUBMITTED');
    expect((await dueIn()).s).toBeCloseTo(60, 0);
    await read('SUBMITTED');
    expect((await dueIn()).s).toBeCloseTo(60, 0);
    // Never later than the deadline (120 s after it was submitted).
    await sql`update transactions set submitted_at = now() - interval '100 seconds' where key = ${key}`.execute(db);
    await read('SUBMITTED');
    expect((await dueIn()).s).toBeCloseTo(20, 0);
    // A webhook that woke it while it was being read: due again at once, the wake-up kept for that read.
    const readStarted = new Date(Date.now() - 5_000);
    await sql`update transactions set woken_at = now() where key = ${key}`.execute(db);
    await recordSightings(
      db,
      [{ key, transaction: { ...t, status: 'SUBMITTED' }, source: 'poll' }],
      timing,
      readStarted,
    );
    expect((await dueIn()).s).toBeCloseTo(0, 0);
    expect(
      (
        await sql<{
          woken: boolean;
        }>`select woken_at is not null as woken from transactions where key = ${key}`.execute(db)
      ).rows[0]!.woken,
    ).toBe(true);
    await read('AVAILABLE');
    expect((await rows([key]))[0]!.state).toBe('available');
    expect((await dueIn()).s).toBeNull();
    void batchId;
  });
});
