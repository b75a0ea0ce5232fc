import { setTimeout as delay } from 'node:timers/promises';
import type { WorkflowHandle } from '@temporalio/client';
import { temporalUnreachable } from '../infra/temporal-outages.ts';
import { backoffCeiling } from '../platform/backoff.ts';

/** A command that follows a workflow gave up waiting for Temporal; the work itself goes on. */
export class TemporalLostError extends Error {
  override name = 'TemporalLostError';
}

export interface FollowOptions {
  /** What is followed, for the messages: "refresh 1a2b…", "batch 3c4d…". */
  what: string;
  /** The command that follows it again: "ddsync refresh --wait". */
  again: string;
  /** Writes one line for the user (above a progress line, or on stderr). */
  note: (line: string) => void;
  /** How long to wait for Temporal before giving up (default 10 minutes). */
  giveUpAfterMs?: number;
}

/**
 * The workflow's result, through Temporal outages. A follower is only a reader: the work runs in the
 * workers, which carry on by themselves when Temporal returns. So when the server cannot be reached the
 * command says so once, keeps asking with backoff, and says so again when it answers; after
 * `giveUpAfterMs` it gives up with the command that follows the work again. A workflow's own failure
 * is thrown as it is, never mistaken for an outage.
 */
export async function resultThroughOutages<T>(handle: WorkflowHandle, options: FollowOptions): Promise<T> {
  const giveUpAfterMs = options.giveUpAfterMs ?? 600_000;
  let lostAt: number | undefined;
  for (let attempt = 0; ; attempt++) {
    try {
      const result = (await handle.result()) as T;
      if (lostAt !== undefined) options.note(`Temporal answers again: the ${options.what} has ended`);
      return result;
    } catch (error) {
      const reason = temporalUnreachable(error);
      if (!reason) throw error;
      const now = Date.now();
      if (lostAt === undefined) {
        lostAt = now;
        options.note(
          `lost Temporal (${reason}): the ${options.what} goes on in the workers; waiting for Temporal to answer (Ctrl-C stops following, not the work)`,
        );
      } else if (now - lostAt >= giveUpAfterMs) {
        throw new TemporalLostError(
          `Temporal has not answered for ${Math.round((now - lostAt) / 60_000)} min (${reason}): the ${options.what} goes on in the workers without this command; follow it again with \`${options.again}\` once Temporal answers`,
        );
      }
      await delay(backoffCeiling(attempt + 1, { baseMs: 250, maxMs: 5_000 }));
      // Asked again below; said when the answer comes (result() resolves or fails for the workflow's reason).
      if (lostAt !== undefined) {
        const answered = await handle.describe().then(
          () => true,
          () => false,
        );
        if (answered) {
          options.note(
            `Temporal answers again after ${((Date.now() - lostAt) / 1000).toFixed(0)} s: following the ${options.what}`,
          );
          lostAt = undefined;
        }
      }
    }
  }
}
