import { describe, it, expect, beforeAll, afterAll, vi } from 'vitest';
import { MockActivityEnvironment } from '@temporalio/testing';
import { ApplicationFailure } from '@temporalio/common';
import type { Warehouse } from '../../warehouse/database.ts';
import { takeInShipments } from '../../warehouse/submission/intake.ts';
import type { FollowTiming } from '../../warehouse/submission/bulk-ledger.ts';
import { createBulkSubmissionActivities } from '../../activities/submission/bulk.ts';
import type { SubmissionApi } from '../../activities/submission/activities.ts';
import { createLogger } from '../../platform/logger.ts';
import type { Simulator } from '../../simulator/index.ts';
import { shipmentRow, writeShipments } from '../support/shipments.ts';
import { simulatorClient, startSubmissionTestbed } from '../support/submission-simulator.ts';

/**
 * The claims of every chunk attempt running on one activities instance (a worker) share one
 * statement (coalesce): two attempts of one chunk, one thought dead and its retry, may ask for the
 * same key in it. Each learns its own answer, matched by key and attempt, and only the newer one
 * (the key's current create_attempts) may send. The service is the simulator, over HTTP with the
 * real client; the interleaving is set by holding the claim statements (the ledger's noteCreatesSent).
 */
const claims = vi.hoisted(() => {
  let open: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { calls: [] as Array<Array<{ key: string; attempt: number }>>, gate, open: () => open() };
});
vi.mock('../../warehouse/submission/bulk-ledger.ts', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../warehouse/submission/bulk-ledger.ts')>();
  return {
    ...actual,
    // Every claim statement, as asked; the first is held until the test opens the gate.
    noteCreatesSent: async (...args: Parameters<typeof actual.noteCreatesSent>) => {
      claims.calls.push(args[1].map((c) => ({ key: c.key, attempt: c.attempt })));
      if (claims.calls.length === 1) await claims.gate;
      return actual.noteCreatesSent(...args);
    },
  };
});

const TIMING: FollowTiming = {
  firstPollMs: 60_000,
  maxPollMs: 3_600_000,
  euWaitMs: 1_800_000,
  deadlineMs: 7 * 86_400_000,
};
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('claims of two attempts of one chunk on one worker', () => {
  let db: Warehouse;
  let sim: Simulator;
  beforeAll(async () => {
    ({ db, sim } = await startSubmissionTestbed('claims', 77));
  });
  afterAll(async () => {
    await db?.destroy();
    await sim?.close();
  });

  it('are made in one statement, and the older attempt cannot claim what the newer one owns', async () => {
    const [d, k] = [`claims-${Date.now()}-d`, `claims-${Date.now()}-k`];
    const supplier = sim.control.suppliers()[0]!.id;
    const path = writeShipments([shipmentRow(d, supplier), shipmentRow(k, supplier)]);
    const { batchId, accepted } = await takeInShipments(db, path, `${path}.report.ndjson`);
    expect(accepted).toBe(2);

    // The real client against the simulator, which says when the answer of a look-up by customId is in.
    const client = simulatorClient(sim);
    let answered: () => void = () => undefined;
    const listAnswered = new Promise<void>((resolve) => {
      answered = resolve;
    });
    const api: SubmissionApi = {
      ...client,
      listTransactions: async (...args) => {
        const listed = await client.listTransactions(...args);
        answered();
        return listed;
      },
    };
    // One worker: one activities instance, whose claims are coalesced across every chunk attempt it runs.
    const activities = createBulkSubmissionActivities({ db, api, log: createLogger({ level: 'silent' }) });
    const chunk = { batchId, afterLine: 0, throughLine: 2, concurrency: 2, createSettleMs: 60_000, timing: TIMING };

    // The first attempt: its two lanes claim d and k (attempt 1 each); d's statement is held, k waits for the next.
    const older = new MockActivityEnvironment().run(activities.sendTransactions, chunk).catch((e: unknown) => e);
    while (claims.calls.length === 0) await turn();
    expect(claims.calls[0]).toEqual([{ key: d, attempt: 1 }]);
    // Thought dead, it is retried on the same worker: attempt 2 of both keys looks them up, then claims them.
    const newer = new MockActivityEnvironment().run(activities.sendTransactions, chunk).catch((e: unknown) => e);
    await listAnswered;
    // Its look-up answered, the rest until its claims runs without I/O.
    await turn();
    claims.open();

    expect(await newer).toEqual({ submitted: 2, refused: 0 });
    const failure = await older;
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect((failure as ApplicationFailure).message).toMatch(/being sent by a later attempt/);
    // Both attempts of k asked in one statement, with d's second attempt; nothing else was claimed.
    expect(claims.calls).toHaveLength(2);
    expect(claims.calls[1]).toEqual(
      expect.arrayContaining([
        { key: k, attempt: 1 },
        { key: k, attempt: 2 },
        { key: d, attempt: 2 },
      ]),
    );
    expect(claims.calls[1]).toHaveLength(3);
    // One transaction per key at the service, each submitted.
    const atService = sim.control.transactions().filter((t) => t.customId === d || t.customId === k);
    expect(atService.map((t) => [t.customId, t.status]).sort()).toEqual([
      [d, 'TO_SUBMIT'],
      [k, 'TO_SUBMIT'],
    ]);
  });
});
