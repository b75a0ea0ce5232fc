import { ApplicationFailure, CancelledFailure, Context } from '@temporalio/activity';
import type { Transaction } from '../../schema/upstream.ts';
import type { UpstreamClient } from '../../upstream/index.ts';
import { ConflictError, NetworkError, UpstreamError, provesNotApplied, serviceFacts } from '../../upstream/index.ts';
import type { Warehouse } from '../../warehouse/database.ts';
import type { Logger } from '../../platform/logger.ts';
import {
  batchStanding,
  beginCreateAttempt,
  cancelUnstarted,
  closeBatch,
  noteCreateSent,
  type BatchStanding,
  recordComponents,
  recordEnd,
  recordTransaction,
  requestsAfter,
  stateOf,
  transactionIdOf,
  withdrawCreateSent,
  type StatusSource,
  type TransactionState,
} from '../../warehouse/submission/transaction-ledger.ts';
import { trackStepFailures } from './step-failures.ts';
import { CREATE_SENDS, sendClaimedCreate, type CreateOutcome } from './claimed-create.ts';

/**
 * The activities of bulk submission. Each one says where a transaction stands after it, in the
 * warehouse and in its result (ids and statuses only: shipment payloads never enter workflow history).
 * An attempt that fails says so there too, until the step succeeds (step-failures.ts).
 */

export type SubmissionApi = Pick<
  UpstreamClient,
  | 'createTransaction'
  | 'findTransactionByCustomId'
  | 'listTransactions'
  | 'getTransaction'
  | 'submitTransaction'
  | 'deleteTransaction'
>;

export interface SubmissionDeps {
  db: Warehouse;
  api: SubmissionApi;
  log: Logger;
}

export interface TransactionView {
  transactionId: string;
  status: string;
  state: TransactionState;
  final: boolean;
}

function view(t: Transaction): TransactionView {
  const state = stateOf(t.status);
  return { transactionId: t.id, status: t.status, state, final: serviceFacts.FINAL_TRANSACTION_STATUSES.has(t.status) };
}

function signal(): AbortSignal {
  return Context.current().cancellationSignal;
}

/** How long an unanswered create may take to appear under its customId (default of createSettleMs). */
export const DEFAULT_CREATE_SETTLE_MS = 120_000;

/** A later attempt (this one was thought dead) claimed the key: it sends, this one does not. */
export function sentByLaterAttempt(key: string): ApplicationFailure {
  return ApplicationFailure.retryable(`${key} is being sent by a later attempt`, 'SentByLaterAttempt');
}

/** The service kept refusing the create for now (429, 503, 401): sent again by the step's retry. */
export function refusedForNow(key: string): ApplicationFailure {
  return ApplicationFailure.retryable(
    `the service refused the create of ${key} for now (429, 503 or 401) ${CREATE_SENDS} times in a row; sent again at the next retry`,
    'CreateRefusedForNow',
  );
}

/** A cancelled batch stops between requests, never in the middle of one the service may apply. */
function stopIfCancelled(step: string): void {
  if (signal().aborted) throw new CancelledFailure(`cancelled before ${step}`);
}

export function createSubmissionActivities({ db, api, log }: SubmissionDeps) {
  /** The transaction at the service for `key`, if an earlier attempt created it. */
  const findExisting = async (key: string, knownId: string | null): Promise<Transaction | undefined> => {
    if (knownId) return api.getTransaction(knownId, { signal: signal() });
    return api.findTransactionByCustomId(key, { signal: signal() });
  };

  /** The transaction for `key` at the service, created if no earlier attempt did: as just read or created. */
  const createDraft = async (key: string, settleMs: number): Promise<Transaction> => {
    const request = await beginCreateAttempt(db, key);
    let transaction =
      request.earlierAttempts > 0 || request.transactionId ? await findExisting(key, request.transactionId) : undefined;
    if (!transaction) {
      // An earlier create whose answer never came may still be applied: not a second one until it
      // had time to appear under its customId (then this look found it).
      if (request.sinceCreateSentMs !== null && request.sinceCreateSentMs < settleMs) {
        throw ApplicationFailure.retryable(
          // Worded the same at every attempt: it is shown as the step's error while it repeats (step-failures.ts).
          `a create of ${key} got no answer and may still be applied by the service: looked for by customId until ${Math.round(settleMs / 1000)} s after it was sent, then sent again`,
          'CreateMayStillApply',
        );
      }
      stopIfCancelled('creating');
      const attempt = request.earlierAttempts + 1;
      const claimed = await noteCreateSent(db, key, attempt);
      if (!claimed) throw sentByLaterAttempt(key);
      const withdraw = () => withdrawCreateSent(db, key, claimed.previous, attempt);
      let outcome: CreateOutcome;
      try {
        // Not aborted once sent: a request the service may have applied is seen through to its answer.
        // Sent again after a refusal only under a new claim (claimed-create.ts).
        outcome = await sendClaimedCreate(
          api,
          { ...request.body, customId: key },
          {
            again: async () => (await noteCreateSent(db, key, attempt)) !== undefined,
            withdraw,
            cancelled: () => signal().aborted,
          },
        );
      } catch (error) {
        // Refused (a 401, say): nothing to wait for before creating again.
        if (provesNotApplied(error)) await withdraw();
        if (!(error instanceof NetworkError && error.outcomeUnknown)) throw error;
        // The request may have been applied: find it; if it is not there, the next attempt creates it.
        const found = await api.findTransactionByCustomId(key, { signal: signal() });
        if (!found) throw error;
        log.info({ key, transactionId: found.id }, 'create response lost; transaction found by customId');
        outcome = { created: found };
      }
      if ('stopped' in outcome) throw outcome.stopped === 'taken' ? sentByLaterAttempt(key) : refusedForNow(key);
      transaction = outcome.created;
    }
    await recordTransaction(db, key, transaction, 'create');
    await recordComponents(db, key, request.body.components ?? []);
    return transaction;
  };

  /** Submits `current` (fresh from createDraft, recorded there) unless it is no longer a DRAFT. */
  const submitDraft = async (key: string, current: Transaction): Promise<TransactionView> => {
    if (current.status !== 'DRAFT') return view(current);
    const transactionId = current.id;
    stopIfCancelled('submitting');
    try {
      // Not aborted once sent (see createDraft): a cancelled batch stops before, never during.
      await api.submitTransaction(transactionId);
    } catch (error) {
      const settled =
        error instanceof ConflictError ||
        (error instanceof UpstreamError && error.status === 400) ||
        (error instanceof NetworkError && error.outcomeUnknown);
      if (!settled) throw error;
      const after = await api.getTransaction(transactionId, { signal: signal() });
      if (after.status === 'DRAFT') throw error;
      await recordTransaction(db, key, after, 'submit');
      return view(after);
    }
    const submitted = { ...current, status: 'TO_SUBMIT' };
    await recordTransaction(db, key, submitted, 'submit');
    return view(submitted);
  };

  // A step that keeps failing shows in the warehouse (step-failures.ts). Failure mapping and
  // heartbeats come from the worker's interceptors, as for every activity (activities/index.ts).
  return trackStepFailures(db, {
    async nextRequestsOfBatch(input: {
      batchId: string;
      afterLine: number;
      limit: number;
      onlyPending?: boolean;
    }): Promise<Array<{ key: string; line: number }>> {
      return requestsAfter(db, input.batchId, input.afterLine, input.limit, input.onlyPending ?? false);
    },

    /**
     * Creates the DRAFT with customId = key, exactly once, then submits it (DRAFT → TO_SUBMIT).
     * There is no idempotency key: when an earlier attempt may have reached the service (it was
     * attempted, or this response was lost), the transaction is looked up by its customId before
     * anything is created again. A submit whose response was lost is not repeated blindly: a
     * refusal (no longer a DRAFT) is followed by a read, which says where it stands.
     */
    async createAndSubmitTransaction(input: { key: string; createSettleMs?: number }): Promise<TransactionView> {
      return submitDraft(input.key, await createDraft(input.key, input.createSettleMs ?? DEFAULT_CREATE_SETTLE_MS));
    },

    /** Reads the transaction (on a timer, or because a webhook said it changed) and records what is new. */
    async pollTransactionStatus(input: {
      key: string;
      transactionId: string;
      source: Extract<StatusSource, 'poll' | 'webhook'>;
    }): Promise<TransactionView> {
      const t = await api.getTransaction(input.transactionId, { signal: signal() });
      await recordTransaction(db, input.key, t, input.source);
      return view(t);
    },

    /**
     * A draft of a cancelled batch is deleted (allowed while DRAFT). One that is no longer a draft
     * (its submit reached the service as the batch was cancelled) is returned, to be followed.
     */
    async deleteDraftTransaction(input: { key: string }): Promise<{ deleted: boolean; submitted?: TransactionView }> {
      // A create cancelled mid-flight may have reached the service without being recorded.
      const t = await findExisting(input.key, await transactionIdOf(db, input.key));
      if (!t) return { deleted: false };
      if (t.status !== 'DRAFT') {
        await recordTransaction(db, input.key, t, 'poll');
        return { deleted: false, submitted: view(t) };
      }
      await api.deleteTransaction(t.id, { signal: signal() });
      return { deleted: true };
    },

    async recordTransactionEnd(input: {
      key: string;
      state: 'failed' | 'timed_out' | 'cancelled';
      error: string | null;
    }): Promise<void> {
      await recordEnd(db, input.key, input.state, input.error);
      log.warn({ key: input.key, state: input.state, error: input.error }, 'transaction ended without a DDS reference');
    },

    /** Where a batch stands in the warehouse: slots held, transactions ended, the keys still holding a slot. */
    async batchStanding(input: { batchId: string; cursor: number }): Promise<BatchStanding> {
      return batchStanding(db, input.batchId, input.cursor);
    },

    async closeSubmissionBatch(input: { batchId: string; cancelled: boolean }): Promise<{ unsent: number }> {
      const unsent = input.cancelled ? await cancelUnstarted(db, input.batchId) : 0;
      await closeBatch(db, input.batchId, input.cancelled ? 'cancelled' : 'done');
      return { unsent };
    },
  });
}

export type SubmissionActivities = ReturnType<typeof createSubmissionActivities>;
