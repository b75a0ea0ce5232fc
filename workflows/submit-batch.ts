import {
  ActivityCancellationType,
  CancellationScope,
  condition,
  continueAsNew,
  defineSignal,
  isCancellation,
  patched,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { BulkSubmissionActivities, FollowResult } from '../activities/submission/bulk.ts';
import type { SubmissionActivities } from '../activities/submission/activities.ts';
import { bulkProgressQuery, bulkSubmitWorkflowId, type BulkProgress } from './bulk-submit.ts';
import { DEFAULT_TRANSACTION_TIMING, type TransactionTiming } from './submit-transaction.ts';
import { historyFull } from './scheduling/continue-as-new.ts';
import { forEachInWindow } from './scheduling/sliding-window.ts';
import { chunkPlan, followStep, progressOf } from './scheduling/batch-chunks.ts';

/**
 * A batch of accepted shipments in one durable workflow (the design of issue 13 part 2): chunk
 * activities create and submit the keys of a range of lines, several at once (so several workers
 * share a batch), and one activity at a time reads the transactions that are due, all of them at
 * once. The warehouse ledger is the record of what was sent and of when each transaction is read next
 * (poll backoff, the EU system's 30-minute wait, the deadline: transactions.next_poll_at); the
 * workflow sleeps until the earliest is due, or until a `transactionsUpdated` signal (the webhook
 * receiver's, after marking the transaction due) or a finished chunk wakes it. Its history grows by a
 * few events per chunk and per read of the due transactions, never per transaction; it continues as
 * new past `historyLimit`. Cancelled: no request is started after the cancellation reaches a chunk
 * (requests in flight are seen through and recorded), drafts not submitted are deleted, and what was
 * submitted is followed to the end (it exists at the EU system). The workflow id is the batch's, as
 * for bulkSubmit (which still runs batches started by earlier versions to their end).
 */
export interface SubmitBatchInput {
  batchId: string;
  /** Create and submit requests in flight at once for the batch (default 20), spread over the chunks in flight. */
  concurrency?: number;
  timing?: Partial<TransactionTiming>;
  /** `ddsync submissions retry`: accepted as bulkSubmit's; every run sends only what the ledger says is unsent. */
  restart?: boolean;
  /** Continue as new past this many history events (default 10,000; Temporal's limit is 51,200). */
  historyLimit?: number;
  /** Lines of the file per chunk activity (default: the batch spread over the chunks in flight, 10 to 100). */
  chunkLines?: number;
  /** Chunk activities in flight at once (default: up to 10, of about 2 requests each; see lanesOf). */
  chunksInFlight?: number;
  /** Heartbeat timeout of the chunk and read activities (default 10 s): how soon a dead worker's chunk runs again, and (at 80 %) how soon a cancellation reaches a chunk. */
  heartbeatTimeoutMs?: number;
  /** Carried across continue-as-new. */
  state?: SubmitBatchState;
}

interface SubmitBatchState {
  /** Every line up to here was sent by a chunk that finished. */
  cursor: number;
  lastLine: number;
  chunkLines: number;
  allSent: boolean;
  /** The batch was cancelled: nothing more is sent; what was submitted is followed to the end. */
  cancelled: boolean;
}

/** Sent by the webhook receiver after marking a transaction of the batch due: read the due ones now. */
export const transactionsUpdatedSignal = defineSignal<[{ key?: string; status?: string }]>('transactionsUpdated');
export const submitBatchWorkflowId = bulkSubmitWorkflowId;

const LANES_PATCH = 'submit-batch-lanes';
/** Counts older than the last read are taken again at the next allowed time, not after the whole wait. */
const RECOUNT_PATCH = 'submit-batch-recount';

/**
 * Chunks in flight and requests in flight per chunk: at most 10 chunks, about 2 lanes each, never more
 * than `concurrency` in all. A chunk ends with a gap (its record, the workflow's turn, the next chunk's
 * start) in which its lanes send nothing: the longer a chunk runs, the smaller that share, so many
 * chunks of few lanes lose less of the batch's time than few chunks of many.
 */
function lanesOf(concurrency: number): { chunks: number; perChunk: number } {
  const perChunk = Math.ceil(concurrency / 10);
  return { chunks: Math.max(1, Math.floor(concurrency / perChunk)), perChunk };
}

/** Due transactions read by one activity at most. */
const READS_PER_STEP = 1_000;
/** The batch's transactions are counted per state at most this often while some wait for a read (the progress query's figures). */
const STATES_EVERY_MS = 5_000;

const { closeSubmissionBatch } = proxyActivities<SubmissionActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

export async function submitBatch(input: SubmitBatchInput): Promise<BulkProgress> {
  const timing = { ...DEFAULT_TRANSACTION_TIMING, ...input.timing };
  const follow = {
    firstPollMs: timing.firstPollMs,
    maxPollMs: timing.maxPollMs,
    euWaitMs: timing.euWaitMs,
    deadlineMs: timing.deadlineMs,
  };
  const concurrency = Math.max(1, input.concurrency ?? 20);
  // Runs started before chunks in lanes keep the 4 chunks they were started with (their history says so).
  const lanes = patched(LANES_PATCH) ? lanesOf(concurrency) : { chunks: 4, perChunk: Math.ceil(concurrency / 4) };
  // Runs started before wait the whole of their wait with the counts they have (their history says so).
  const recount = patched(RECOUNT_PATCH);
  const chunksInFlight = Math.max(1, input.chunksInFlight ?? lanes.chunks);
  const perChunk =
    input.chunksInFlight === undefined ? lanes.perChunk : Math.max(1, Math.floor(concurrency / chunksInFlight));
  const { openSubmissionBatch, sendTransactions, followDueTransactions, cancelUnsentTransactions } =
    proxyActivities<BulkSubmissionActivities>({
      startToCloseTimeout: '1 hour',
      heartbeatTimeout: input.heartbeatTimeoutMs ?? 10_000,
      // Without end: a transaction must never be lost to an outage; its failures show on its row.
      retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '5 minutes' },
      // A cancelled chunk is waited for: what it sent is recorded before drafts are deleted.
      cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    });

  let progress: BulkProgress = progressOf({}, false);
  setHandler(bulkProgressQuery, () => ({ ...progress, batchId: input.batchId }));
  let woken = false;
  setHandler(transactionsUpdatedSignal, () => {
    woken = true;
  });

  let s: SubmitBatchState;
  if (input.state) s = input.state;
  else {
    // Not cancellable: a batch cancelled this early is still closed below, as cancelled.
    const opened = await CancellationScope.nonCancellable(() => openSubmissionBatch({ batchId: input.batchId }));
    s = {
      cursor: 0,
      lastLine: opened.lastLine,
      chunkLines: input.chunkLines ?? chunkPlan(opened.lastLine, chunksInFlight),
      allSent: opened.accepted === 0,
      cancelled: false,
    };
  }
  const full = () => historyFull(workflowInfo(), input.historyLimit);
  const inFlight = new Set<Promise<unknown>>();
  const track = <T>(p: Promise<T>): Promise<T> => {
    inFlight.add(p);
    return p.finally(() => inFlight.delete(p));
  };

  /** Sends the lines from the cursor, chunksInFlight chunks at once, until all are sent or the history is full. */
  let sending = !s.allSent && !s.cancelled;
  const send = async () => {
    const starts: number[] = [];
    for (let after = s.cursor; after < s.lastLine; after += s.chunkLines) starts.push(after);
    const finished = new Set<number>();
    try {
      const next = await forEachInWindow(starts, { limit: chunksInFlight, mayStart: () => !full() }, async (after) => {
        await track(
          sendTransactions({
            batchId: input.batchId,
            afterLine: after,
            throughLine: Math.min(after + s.chunkLines, s.lastLine),
            concurrency: perChunk,
            ...(timing.createSettleMs !== undefined ? { createSettleMs: timing.createSettleMs } : {}),
            timing: follow,
          }),
        );
        finished.add(after);
        while (finished.has(s.cursor)) {
          finished.delete(s.cursor);
          s.cursor = Math.min(s.cursor + s.chunkLines, s.lastLine);
        }
        // Newly submitted transactions: the next read step says when the first of them is due.
        woken = true;
      });
      if (next === starts.length) s.allSent = true;
    } finally {
      sending = false;
      woken = true;
    }
  };

  /** Reads what is due until every transaction ended ('done') or the history is full ('continue'). */
  // Counts only fall as transactions end (a retry starts a new run), so the last counts never say the
  // batch is done before it is; and when nothing waits for a read, the activity counts anyway.
  let states: Record<string, number> | undefined;
  let countedAt = 0;
  const followAll = async (): Promise<'done' | 'continue'> => {
    for (;;) {
      // Reset before reading: a signal that arrives while reading wakes the next wait.
      woken = false;
      const countStates = states === undefined || Date.now() - countedAt >= STATES_EVERY_MS;
      const r: FollowResult = await track(
        followDueTransactions({
          batchId: input.batchId,
          timing: follow,
          concurrency,
          limit: READS_PER_STEP,
          countStates,
        }),
      );
      if (r.states) {
        states = r.states;
        countedAt = Date.now();
      }
      progress = progressOf(states ?? {}, s.allSent);
      const step = followStep({
        allSent: s.allSent,
        sending,
        historyFull: full(),
        states: states ?? {},
        nextDueInMs: r.nextDueInMs,
        readAll: r.read < READS_PER_STEP,
        idleMs: timing.maxPollMs,
        // Not counted by this step: what it read (or a chunk that ended) may have changed them.
        ...(recount && !r.states ? { recountInMs: countedAt + STATES_EVERY_MS - Date.now() } : {}),
      });
      if (step.kind === 'done' || step.kind === 'continue') return step.kind;
      if (step.kind === 'read') continue;
      if (step.waitMs === null) await condition(() => woken);
      else await condition(() => woken, step.waitMs);
    }
  };

  const finish = async (end: 'done' | 'continue'): Promise<BulkProgress> => {
    if (end === 'continue') return continueAsNew<typeof submitBatch>({ ...input, state: s });
    await closeSubmissionBatch({ batchId: input.batchId, cancelled: s.cancelled });
    return progress;
  };

  if (!s.cancelled) {
    try {
      const sender = sending ? send() : Promise.resolve();
      const [, end] = await Promise.all([sender, followAll()]);
      return await finish(end);
    } catch (error) {
      if (!isCancellation(error)) throw error;
    }
  }
  // Cancelled (now or in an earlier run): nothing more is sent; what was submitted is followed to the end.
  return CancellationScope.nonCancellable(async () => {
    await Promise.allSettled([...inFlight]);
    if (!s.cancelled) {
      s.cancelled = true;
      s.allSent = true;
      await cancelUnsentTransactions({ batchId: input.batchId, timing: follow });
    }
    return finish(await followAll());
  });
}
