// Pure scheduling for workflow code: no I/O, no clock, no randomness; safe in the workflow bundle.

/** The batch workflow's decisions (workflows/submit-batch.ts), apart from its I/O. */

/** Lines per chunk activity: at most this many (a chunk's keys are recorded together). */
export const MAX_CHUNK_LINES = 100;
/** At least this many, unless the file is shorter (a chunk costs a few history events). */
export const MIN_CHUNK_LINES = 10;

/**
 * Lines per chunk for a file whose last line is `lastLine`: the batch spread over `chunksInFlight`
 * chunks, so even a small batch runs that many activities at once (several workers share it), between
 * MIN_CHUNK_LINES and MAX_CHUNK_LINES.
 */
export function chunkPlan(lastLine: number, chunksInFlight: number): number {
  const spread = Math.ceil(Math.max(1, lastLine) / Math.max(1, chunksInFlight));
  return Math.max(Math.min(MIN_CHUNK_LINES, Math.max(1, lastLine)), Math.min(MAX_CHUNK_LINES, spread));
}

/** States of a transaction still in progress: not sent yet, a DRAFT, or submitted and followed. */
export const UNFINISHED_STATES = ['pending', 'created', 'submitted'] as const;
const ENDED = ['available', 'error', 'withdrawn', 'failed', 'timed_out', 'cancelled'];

export interface FollowStanding {
  /** Every chunk of the batch finished (or the batch was cancelled). */
  allSent: boolean;
  /** Chunks are still being sent in this run. */
  sending: boolean;
  /** This run should continue as new (its history is long, or Temporal suggests it). */
  historyFull: boolean;
  /** Transactions of the batch per state. */
  states: Record<string, number>;
  /** Until the next transaction is due, as the ledger says; null when none waits for a read. */
  nextDueInMs: number | null;
  /** The last read step read every transaction that was due (not cut at its limit). */
  readAll: boolean;
  /** Longest wait when nothing is due and nothing is being sent (a check of the ledger). */
  idleMs: number;
  /**
   * The counts per state are older than the last read step (it did not count: counted too recently),
   * and may be taken again in this many ms. The wait ends then at the latest, so the counts the
   * `progress` query shows are never behind what was read by more than that (absent: they are current).
   */
  recountInMs?: number;
}

export type FollowStep =
  | { kind: 'done' }
  | { kind: 'continue' }
  | { kind: 'read' }
  /** Wait for a signal (a webhook, a finished chunk) or waitMs (null: only a signal). */
  | { kind: 'wait'; waitMs: number | null };

/** What the batch does after reading its due transactions. */
export function followStep(s: FollowStanding): FollowStep {
  const unfinished = UNFINISHED_STATES.reduce((n, state) => n + (s.states[state] ?? 0), 0);
  if (s.allSent && !s.sending && unfinished === 0) return { kind: 'done' };
  if (s.historyFull && !s.sending) return { kind: 'continue' };
  if (!s.readAll || s.nextDueInMs === 0) return { kind: 'read' };
  // Nothing waits for a read: a chunk (or a webhook) will say when; once all is sent, look again now and then.
  const waitMs = s.nextDueInMs ?? (s.sending ? null : s.idleMs);
  if (s.recountInMs === undefined) return { kind: 'wait', waitMs };
  // Stale counts: read (and count) again once a count is allowed, not after the whole wait (an hour of EU wait).
  if (s.recountInMs <= 0) return { kind: 'read' };
  return { kind: 'wait', waitMs: waitMs === null ? s.recountInMs : Math.min(waitMs, s.recountInMs) };
}

/** A batch's progress, as the `progress` query answers it (both batch workflows). */
export interface BatchProgressFigures {
  started: number;
  /** Per ddsync state (pending, created, submitted, available, error, withdrawn, failed, timed_out, cancelled). */
  states: Record<string, number>;
  ended: number;
  /** Started, not ended yet. */
  pending: number;
  available: number;
  error: number;
  failed: number;
  /** Keys whose workflow already existed (started by an earlier run of bulkSubmit): not started again. */
  alreadyStarted: number;
  allStarted: boolean;
}

/** The `progress` query's figures (as bulkSubmit's) from the ledger's counts per state. */
export function progressOf(states: Record<string, number>, allSent: boolean): BatchProgressFigures {
  const total = Object.values(states).reduce((a, b) => a + b, 0);
  const ended = ENDED.reduce((n, state) => n + (states[state] ?? 0), 0);
  const started = total - (states['pending'] ?? 0);
  return {
    started,
    states,
    ended,
    pending: started - ended,
    available: states['available'] ?? 0,
    error: states['error'] ?? 0,
    failed: (states['failed'] ?? 0) + (states['timed_out'] ?? 0),
    alreadyStarted: 0,
    allStarted: allSent,
  };
}
