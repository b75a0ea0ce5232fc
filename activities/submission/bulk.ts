import { ApplicationFailure, CancelledFailure, Context } from '@temporalio/activity';
import PQueue from 'p-queue';
import type { ComponentInput, Transaction } from '../../schema/upstream.ts';
import { ConflictError, NetworkError, NotFoundError, UpstreamError, provesNotApplied } from '../../upstream/index.ts';
import { oldestFirst } from '../../schema/upstream/order.ts';
import {
  beginCreateAttempts,
  batchStates,
  cancelUnsent,
  clearKeyFailures,
  dueTransactions,
  endFailed,
  endTimedOut,
  nextDueInMs,
  noteCreatesSent,
  openBulkBatch,
  recordKeyFailures,
  recordSightingsOrEach,
  unsubmittedOf,
  type FollowTiming,
  type Sighting,
} from '../../warehouse/submission/bulk-ledger.ts';
import { withdrawCreateSent } from '../../warehouse/submission/transaction-ledger.ts';
import { DEFAULT_CREATE_SETTLE_MS, refusedForNow, sentByLaterAttempt, type SubmissionDeps } from './activities.ts';
import { sendClaimedCreate, type CreateOutcome } from './claimed-create.ts';
import { RECORDED_ON_KEYS, stepError, trackStepFailures } from './step-failures.ts';
import { toActivityFailure } from '../failures.ts';
import { coalesce } from './coalesce.ts';

/**
 * The activities of the batch workflow (workflows/submit-batch.ts): a chunk of keys created and
 * submitted at once, the due transactions of a batch read at once, a cancelled batch's drafts deleted.
 * The ledger (transactions, transaction_requests) is the record of what was sent: a retried chunk
 * skips every key it says was submitted, and a key an earlier attempt may have created is looked up by
 * its customId before any second create, under the create-settle rule (activities.ts, createDraft).
 * Failures of one key are recorded on that key (the failed step, attempts in a row, when), never
 * hold back the other keys of the chunk, and make the chunk fail (retried by Temporal with backoff)
 * only once every other key is done.
 */

export interface SendChunkInput {
  batchId: string;
  /** Lines (afterLine, throughLine] of the batch's file. */
  afterLine: number;
  throughLine: number;
  /** Requests in flight at once for this chunk. */
  concurrency: number;
  createSettleMs?: number;
  timing: FollowTiming;
}

export interface SendChunkResult {
  /** Keys submitted (or found submitted) by this attempt. */
  submitted: number;
  /** Keys the service refused: ended failed. */
  refused: number;
}

export interface FollowInput {
  batchId: string;
  timing: FollowTiming;
  concurrency: number;
  /** Reads per call at most. */
  limit: number;
  /**
   * Count the batch's transactions per state (default true). Counted anyway when nothing waits for a
   * read (the batch may have ended); else the workflow keeps its last counts for a while: at 100,000
   * transactions a count reads them all, and the batch reads what is due several times a second.
   */
  countStates?: boolean;
}

export interface FollowResult {
  read: number;
  /** Transactions of the batch per state, after the reads; absent when not counted (countStates). */
  states?: Record<string, number>;
  /** Until the next transaction is due (ms); null when none is waiting. */
  nextDueInMs: number | null;
}

/** The per-key step names, as the old per-transaction activities were named (what operators know). */
const CREATE_STEP = 'createAndSubmitTransaction';
const READ_STEP = 'pollTransactionStatus';

/** A refusal by the service (or of ddsync's credentials): not retried, the transaction ends failed. */
function isRefusal(error: unknown): boolean {
  const mapped = toActivityFailure(error);
  return mapped instanceof ApplicationFailure && mapped.nonRetryable === true;
}

/** A chunk heartbeats at most this often (the SDK sends at most one per 80 % of the timeout anyway). */
const HEARTBEAT_EVERY_MS = 1_000;

const isPowerOfTwo = (n: number) => n > 0 && (n & (n - 1)) === 0;

function signal(): AbortSignal {
  return Context.current().cancellationSignal;
}

export function createBulkSubmissionActivities({ db, api, log }: SubmissionDeps) {
  /** Transactions at the service by customId (the oldest of each, as findTransactionByCustomId). */
  const byCustomId = async (): Promise<Map<string, Transaction>> => {
    const all = (await api.listTransactions({ signal: signal() })).sort(oldestFirst);
    const map = new Map<string, Transaction>();
    for (const t of all) if (t.customId && !map.has(t.customId)) map.set(t.customId, t);
    return map;
  };

  /** Records per-key failures; the worker logs each key's at attempts 1, 2, 4, 8, … */
  const recordFailures = async (step: string, failures: Array<{ key: string; error: unknown }>, retryInMs?: number) => {
    if (failures.length === 0) return;
    const attempts = await recordKeyFailures(
      db,
      failures.map((f) => ({ key: f.key, message: stepError(step, f.error) })),
      retryInMs,
    );
    for (const f of failures) {
      const n = attempts.get(f.key) ?? 1;
      if (isPowerOfTwo(n)) log.warn({ key: f.key, attempt: n, err: f.error }, `${step} failed; retried`);
    }
  };

  // Each create is claimed (create_sent_at) just before it is sent; the lanes of every chunk running on
  // this worker that are ready at the same time share one statement, and no lane waits for another's requests.
  const claim = coalesce(async (keys: Array<{ key: string; attempt: number }>) => {
    const claimed = await noteCreatesSent(db, keys);
    // By key and attempt: an attempt thought dead and its retry may both ask on this worker; one wins.
    return new Map(
      claimed.map((c) => [keys.find((k) => k.key === c.key && k.attempt === c.attempt)!, c.previous] as const),
    );
  });

  /** Submits a DRAFT (DRAFT → TO_SUBMIT); a refused or unanswered submit is followed by a read. */
  const submitDraft = async (current: Transaction): Promise<Transaction> => {
    try {
      // Not aborted once sent: a cancelled batch stops before a request, never during one.
      await api.submitTransaction(current.id);
    } catch (error) {
      const settled =
        error instanceof ConflictError ||
        (error instanceof UpstreamError && error.status === 400) ||
        (error instanceof NetworkError && error.outcomeUnknown);
      if (!settled) throw error;
      const after = await api.getTransaction(current.id, { signal: signal() });
      if (after.status === 'DRAFT') throw error;
      return after;
    }
    return { ...current, status: 'TO_SUBMIT' };
  };

  return {
    ...trackStepFailures(db, {
      /** Marks the batch as followed in bulk; says where its lines end. */
      async openSubmissionBatch(input: { batchId: string }): Promise<{ lastLine: number; accepted: number }> {
        return openBulkBatch(db, input.batchId);
      },

      /** Reads the transactions that are due (backoff, EU wait, webhook), records what is new, ends those past their deadline. */
      async followDueTransactions(input: FollowInput): Promise<FollowResult> {
        await endTimedOut(db, input.batchId, input.timing.deadlineMs);
        const due = await dueTransactions(db, input.batchId, input.limit);
        if (due.length > 0) {
          // Database time: a webhook's wake-up after it is not cleared by these reads.
          const startedAt = due[0]!.readAt;
          const queue = new PQueue({ concurrency: Math.max(1, input.concurrency) });
          const sightings: Sighting[] = [];
          const failures: Array<{ key: string; error: unknown }> = [];
          const refusals: Array<{ key: string; message: string }> = [];
          await queue.addAll(
            due.map(({ key, id, woken }) => async () => {
              if (signal().aborted) return;
              try {
                const t = await api.getTransaction(id, { signal: signal() });
                sightings.push({ key, transaction: t, source: woken ? 'webhook' : 'poll' });
              } catch (error) {
                if (signal().aborted) return;
                if (isRefusal(error)) refusals.push({ key, message: String((error as Error).message) });
                else failures.push({ key, error });
              }
            }),
          );
          const unrecorded = await recordSightingsOrEach(db, sightings, [], input.timing, startedAt);
          for (const [key, error] of unrecorded) failures.push({ key, error });
          await endFailed(db, refusals);
          await clearKeyFailures(
            db,
            sightings.map((s) => s.key).filter((k) => !unrecorded.has(k)),
          );
          await recordFailures(READ_STEP, failures, input.timing.firstPollMs);
          Context.current().heartbeat();
          if (signal().aborted) throw new CancelledFailure('cancelled while reading');
        }
        const next = await nextDueInMs(db, input.batchId);
        if (input.countStates === false && next !== null) return { read: due.length, nextDueInMs: next };
        return { read: due.length, states: await batchStates(db, input.batchId), nextDueInMs: next };
      },

      /**
       * A cancelled batch: drafts not submitted are deleted at the service (a create an attempt may have
       * sent is looked up by customId first); one whose submit reached the service is recorded and
       * followed; every key not submitted ends cancelled, and the batch says cancelled.
       */
      async cancelUnsentTransactions(input: {
        batchId: string;
        timing: FollowTiming;
      }): Promise<{ cancelled: number; deleted: number }> {
        const rows = await unsubmittedOf(db, input.batchId);
        const found = rows.some((r) => !r.id) ? await byCustomId() : new Map<string, Transaction>();
        const queue = new PQueue({ concurrency: 8 });
        const submitted: Sighting[] = [];
        let deleted = 0;
        await queue.addAll(
          rows.map((r) => async () => {
            const t = r.id ? await api.getTransaction(r.id) : found.get(r.key);
            if (!t) return;
            if (t.status !== 'DRAFT') {
              submitted.push({ key: r.key, transaction: t, source: 'poll' });
              return;
            }
            try {
              await api.deleteTransaction(t.id);
              deleted++;
            } catch (error) {
              if (!(error instanceof NotFoundError)) throw error;
            }
          }),
        );
        // Submitted as the batch was cancelled: it exists at the EU, so it is followed to the end.
        const unrecorded = await recordSightingsOrEach(db, submitted, [], input.timing);
        if (unrecorded.size > 0) throw [...unrecorded.values()][0];
        const cancelled = await cancelUnsent(db, input.batchId);
        return { cancelled, deleted };
      },

      /**
       * Creates and submits the keys of lines (afterLine, throughLine] not sent yet, `concurrency` at a
       * time. Heartbeats as it goes; a cancelled batch stops before the next request (requests in flight
       * are seen through and recorded). A key's failure is recorded on the key; the chunk then fails
       * (RECORDED_ON_KEYS) and is retried, and the retry skips every key the ledger says was sent.
       */
      async sendTransactions(input: SendChunkInput): Promise<SendChunkResult> {
        const context = Context.current();
        const settleMs = input.createSettleMs ?? DEFAULT_CREATE_SETTLE_MS;
        const concurrency = Math.max(1, input.concurrency);
        const requests = await beginCreateAttempts(db, input.batchId, input.afterLine, input.throughLine);
        if (requests.length === 0) return { submitted: 0, refused: 0 };

        const sightings: Sighting[] = [];
        const components: Array<{ key: string; components: readonly ComponentInput[] }> = [];
        const failures: Array<{ key: string; error: unknown }> = [];
        const refusals: Array<{ key: string; message: string }> = [];
        const done = new Set<string>();
        const fail = (key: string, error: unknown) => {
          if (isRefusal(error)) refusals.push({ key, message: (error as Error).message });
          else failures.push({ key, error });
        };

        // What earlier attempts created: by id when recorded, else by customId (one list for the chunk).
        const existing = new Map<string, Transaction>();
        const lookups = new PQueue({ concurrency });
        const unknown = requests.filter((r) => !r.transactionId && r.earlierAttempts > 0);
        let listed: Map<string, Transaction> | undefined;
        if (unknown.length > 0) {
          try {
            listed = await byCustomId();
          } catch (error) {
            for (const r of unknown) fail(r.key, error);
          }
        }
        for (const r of unknown) {
          const t = listed?.get(r.key);
          if (t) existing.set(r.key, t);
        }
        await lookups.addAll(
          requests
            .filter((r) => r.transactionId)
            .map((r) => async () => {
              try {
                existing.set(r.key, await api.getTransaction(r.transactionId!, { signal: signal() }));
              } catch (error) {
                fail(r.key, error);
              }
            }),
        );
        const looked = new Set([...failures.map((f) => f.key), ...refusals.map((f) => f.key)]);

        /** Records the transaction found or created for `key`, then submits it if it is a DRAFT. */
        const carryOn = async (key: string, body: { components?: readonly ComponentInput[] }, t: Transaction) => {
          // A copy: what was seen now, whatever later changes the object.
          sightings.push({ key, transaction: { ...t }, source: 'create', at: new Date() });
          components.push({ key, components: body.components ?? [] });
          if (t.status === 'DRAFT') {
            if (signal().aborted) return;
            const after = await submitDraft(t);
            // Its own submit time: its first read is due firstPollMs after it, not after the chunk's end.
            sightings.push({ key, transaction: after, source: 'submit', at: new Date() });
          }
          done.add(key);
        };

        const lost: typeof requests = [];
        const sendOne = async (r: (typeof requests)[number]) => {
          try {
            const found = existing.get(r.key);
            if (found) return await carryOn(r.key, r.body, found);
            if (r.sinceCreateSentMs !== null && r.sinceCreateSentMs < settleMs) {
              failures.push({
                key: r.key,
                error: ApplicationFailure.retryable(
                  `a create of ${r.key} got no answer and may still be applied by the service: looked for by customId until ${Math.round(settleMs / 1000)} s after it was sent, then sent again`,
                  'CreateMayStillApply',
                ),
              });
              return;
            }
            const claimed = await claim({ key: r.key, attempt: r.attempt });
            if (claimed === undefined) {
              // A later attempt of this chunk began meanwhile (this one was thought dead): it sends.
              failures.push({ key: r.key, error: sentByLaterAttempt(r.key) });
              return;
            }
            const previous = claimed;
            const withdraw = () => withdrawCreateSent(db, r.key, previous, r.attempt);
            let outcome: CreateOutcome;
            try {
              // Sent again after a refusal (429, 503, 401) only under a new claim (claimed-create.ts).
              outcome = await sendClaimedCreate(
                api,
                { ...r.body, customId: r.key },
                {
                  again: async () => (await claim({ key: r.key, attempt: r.attempt })) !== undefined,
                  withdraw,
                  cancelled: () => signal().aborted,
                  beat: () => context.heartbeat({ line: r.line }),
                },
              );
            } catch (error) {
              if (provesNotApplied(error)) await withdraw();
              if (error instanceof NetworkError && error.outcomeUnknown) {
                lost.push(r);
                failures.push({ key: r.key, error });
                return;
              }
              throw error;
            }
            if ('stopped' in outcome) {
              const error = outcome.stopped === 'taken' ? sentByLaterAttempt(r.key) : refusedForNow(r.key);
              failures.push({ key: r.key, error });
              return;
            }
            const created = outcome.created;
            await carryOn(r.key, r.body, created);
          } catch (error) {
            fail(r.key, error);
          }
        };
        const todo = requests.filter((r) => !looked.has(r.key));
        let next = 0;
        let beat = 0;
        const lane = async () => {
          // A cancelled batch stops before the next request; the ones in flight are seen through.
          while (next < todo.length && !signal().aborted) {
            const r = todo[next++]!;
            await sendOne(r);
            if (performance.now() - beat > HEARTBEAT_EVERY_MS) {
              beat = performance.now();
              context.heartbeat({ line: r.line });
            }
          }
        };
        await Promise.all(Array.from({ length: Math.min(concurrency, todo.length) }, lane));

        // Creates whose answer was lost: found by customId (one list), carried on; else the chunk's retry looks again.
        if (lost.length > 0 && !signal().aborted) {
          try {
            const listedNow = await byCustomId();
            for (const r of lost) {
              const t = listedNow.get(r.key);
              if (!t) continue;
              log.info({ key: r.key, transactionId: t.id }, 'create response lost; transaction found by customId');
              const at = failures.findIndex((f) => f.key === r.key);
              if (at >= 0) failures.splice(at, 1);
              try {
                await carryOn(r.key, r.body, t);
              } catch (error) {
                fail(r.key, error);
              }
            }
          } catch {
            // The chunk's retry looks again.
          }
        }

        const unrecorded = await recordSightingsOrEach(db, sightings, components, input.timing);
        for (const [key, error] of unrecorded) {
          done.delete(key);
          failures.push({ key, error });
        }
        await endFailed(
          db,
          refusals.filter((r) => !unrecorded.has(r.key)),
        );
        await clearKeyFailures(db, [...done]);
        await recordFailures(CREATE_STEP, failures);
        context.heartbeat({ line: input.throughLine });
        if (signal().aborted) throw new CancelledFailure('cancelled before sending the rest of the chunk');
        if (failures.length > 0) {
          const first = failures[0]!;
          throw ApplicationFailure.retryable(
            `${failures.length} of ${requests.length} transactions of lines ${input.afterLine + 1}–${input.throughLine} not sent yet (${stepError(CREATE_STEP, first.error)}; e.g. ${first.key})`,
            RECORDED_ON_KEYS,
          );
        }
        return { submitted: done.size, refused: refusals.length };
      },
    }),
  };
}

export type BulkSubmissionActivities = ReturnType<typeof createBulkSubmissionActivities>;
