import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { MockActivityEnvironment } from '@temporalio/testing';
import { ApplicationFailure } from '@temporalio/common';
import { sql } from 'kysely';
import { openWarehouse, type Warehouse } from '../../warehouse/database.ts';
import { migrateToLatest } from '../../warehouse/migrate.ts';
import { takeInShipments } from '../../warehouse/submission/intake.ts';
import type { FollowTiming } from '../../warehouse/submission/bulk-ledger.ts';
import { createBulkSubmissionActivities } from '../../activities/submission/bulk.ts';
import { createSubmissionActivities } from '../../activities/submission/activities.ts';
import { createLogger } from '../../platform/logger.ts';
import { startSimulator, type Simulator } from '../../simulator/index.ts';
import { createTestDatabase } from '../support/databases.ts';
import { shipmentRow, writeShipments } from '../support/shipments.ts';
import { simulatorClient } from '../support/submission-simulator.ts';

/**
 * A create the service answers 429 (or 503) is sent again by the upstream client, maybe minutes
 * later: past the chunk's heartbeat timeout and the create-settle time, after a later attempt looked
 * the key up by customId, found nothing and created it. Such a repeat must not be sent: each send of a
 * create is made under a claim of its attempt (activities/submission/claimed-create.ts). The real
 * client against the simulator; the first create is answered 429, and before that answer arrives the
 * later attempt runs, as Temporal would start it once the first one was thought dead.
 */
const TIMING: FollowTiming = {
  firstPollMs: 60_000,
  maxPollMs: 3_600_000,
  euWaitMs: 1_800_000,
  deadlineMs: 7 * 86_400_000,
};
const log = createLogger({ level: 'silent' });

describe('a create refused for now (429) and repeated by the client', () => {
  let db: Warehouse;
  let sim: Simulator;
  beforeAll(async () => {
    [db, sim] = await Promise.all([
      (async () => {
        const w = openWarehouse(await createTestDatabase('create_resend'), 4);
        await migrateToLatest(w);
        return w;
      })(),
      startSimulator({ port: 0, seed: 75, suppliers: 2, plots: 20, timeScale: 0.001, transactionErrorRatio: 0 }),
    ]);
  });
  afterAll(async () => {
    await db?.destroy();
    await sim?.close();
  });

  const acceptedKey = async (prefix: string) => {
    const key = `${prefix}-${Date.now()}`;
    const path = writeShipments([shipmentRow(key, sim.control.suppliers()[0]!.id)]);
    const intake = await takeInShipments(db, path, `${path}.report.ndjson`);
    expect(intake.accepted).toBe(1);
    return { key, batchId: intake.batchId };
  };

  /**
   * The real client; its first create is held and answered 429 only after `meanwhile` ran (the
   * settle time passing and a later attempt), every other request reaches the simulator.
   */
  const clientWith429First = (meanwhile: () => Promise<void>) => {
    let creates = 0;
    const fetch: typeof globalThis.fetch = async (input, init) => {
      const url = new URL(String(input instanceof Request ? input.url : input));
      if (init?.method === 'POST' && url.pathname === '/transactions' && ++creates === 1) {
        await meanwhile();
        return new Response(JSON.stringify({ message: 'too many requests' }), {
          status: 429,
          headers: { 'content-type': 'application/json', 'retry-after': '0' },
        });
      }
      return globalThis.fetch(input, init);
    };
    return simulatorClient(sim, { fetch });
  };
  /** Minutes pass: the first attempt's claim is older than the settle time. */
  const settled = (key: string) =>
    sql`update transaction_requests set create_sent_at = create_sent_at - interval '3 minutes' where key = ${key}`.execute(
      db,
    );

  it('in a chunk: the client does not send it again once a later attempt of the chunk has created the key', async () => {
    const { key, batchId } = await acceptedKey('resend-chunk');
    const chunk = { batchId, afterLine: 0, throughLine: 1, concurrency: 1, createSettleMs: 60_000, timing: TIMING };
    let later: unknown;
    const api = clientWith429First(async () => {
      await settled(key);
      // The chunk's retry (on another worker): looks the key up, finds nothing, creates and submits it.
      const retry = createBulkSubmissionActivities({ db, api, log });
      later = await new MockActivityEnvironment().run(retry.sendTransactions, chunk);
    });
    const first = createBulkSubmissionActivities({ db, api, log });
    const failure = await new MockActivityEnvironment().run(first.sendTransactions, chunk).catch((e: unknown) => e);
    expect(later).toEqual({ submitted: 1, refused: 0 });
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect((failure as ApplicationFailure).message).toMatch(/being sent by a later attempt/);
    expect(sim.control.transactionCountsByCustomId()[key]).toBe(1);
    const row = await sql<{ state: string }>`select state from transactions where key = ${key}`.execute(db);
    expect(row.rows[0]!.state).toBe('submitted');
  });

  it('one key at a time (batches of earlier versions): the same', async () => {
    const { key } = await acceptedKey('resend-key');
    let later: unknown;
    const api = clientWith429First(async () => {
      await settled(key);
      const retry = createSubmissionActivities({ db, api, log });
      later = await new MockActivityEnvironment().run(retry.createAndSubmitTransaction, {
        key,
        createSettleMs: 60_000,
      });
    });
    const first = createSubmissionActivities({ db, api, log });
    const failure = await new MockActivityEnvironment()
      .run(first.createAndSubmitTransaction, { key, createSettleMs: 60_000 })
      .catch((e: unknown) => e);
    expect(later).toMatchObject({ state: 'submitted' });
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect((failure as ApplicationFailure).type).toBe('SentByLaterAttempt');
    expect(sim.control.transactionCountsByCustomId()[key]).toBe(1);
  });
});
