import type { CreateTransactionInput, Transaction } from '../../schema/upstream.ts';
import { backoffDelay, shouldRetry, UnauthorizedError, type UpstreamClient } from '../../upstream/index.ts';

/** The one call of the service this module makes (activities.ts's SubmissionApi has it). */
type CreateApi = Pick<UpstreamClient, 'createTransaction'>;

/**
 * Every send of a create is made under a claim of its attempt (transaction_requests.create_sent_at
 * set to the time of the send, only while create_attempts is still the attempt's): that is what the
 * create-settle rule and a later attempt's look-up by customId rely on (docs/submission.md, "Why each
 * key is created exactly once"). The upstream client by itself repeats a POST after an answer that
 * proves it was not applied (429, 503, a 401 with a fresh token, a connection that never reached the
 * service), but a repeat is a new create, and its repeats of one call can go on for minutes
 * (Retry-After up to 60 s, six attempts): past the chunk's heartbeat timeout and the settle time,
 * after a later attempt of the chunk has looked the key up, found nothing and created it. So a create
 * is called with the client's `once` option (no repeat; a 401 refreshes the token first), and the
 * repeat is sent here, under a new claim, or not at all when a later attempt took the key over.
 */

/** Sends of one create in a row within an attempt, the first included; past them the key waits for the chunk's retry. */
export const CREATE_SENDS = 6;
/** Backoff between them (full jitter; below the heartbeat timeout, so a waiting lane does not look dead). */
const RESEND_BACKOFF = { baseMs: 250, maxMs: 5_000 };

/**
 * Whether the client would have sent the create again by itself: the refusals that prove nothing was
 * applied and are worth another send (shouldRetry of a POST), and a refused token.
 */
function refusedForNow(error: unknown): boolean {
  return error instanceof UnauthorizedError || shouldRetry(error, false);
}

/** One send of createTransaction; 'again' when it was refused for now and nothing of it was applied. */
export async function createOnce(api: CreateApi, body: CreateTransactionInput): Promise<Transaction | 'again'> {
  try {
    return await api.createTransaction(body, { once: true });
  } catch (error) {
    if (refusedForNow(error)) return 'again';
    throw error;
  }
}

export interface CreateClaim {
  /** Claims the key again for this attempt; false when a later attempt began (it sends, not this one). */
  again: () => Promise<boolean>;
  /** Gives the claim back (every send of it was refused): the settle time runs from the create before. */
  withdraw: () => Promise<void>;
  /** The batch was cancelled: no further send. */
  cancelled: () => boolean;
  /** Called before each wait for a repeat (a chunk heartbeats). */
  beat?: () => void;
}

export type CreateOutcome =
  | { created: Transaction }
  /** taken: a later attempt claimed the key; refusedForNow: refused (429, 503, 401) CREATE_SENDS times, or cancelled. */
  | { stopped: 'taken' | 'refusedForNow' };

/**
 * Sends a create the caller has claimed, and sends it again after a refusal only under a new claim.
 * Throws what the create call throws otherwise (a refusal, a lost answer): the caller handles it as before.
 */
export async function sendClaimedCreate(
  api: CreateApi,
  body: CreateTransactionInput,
  claim: CreateClaim,
): Promise<CreateOutcome> {
  for (let sends = 1; ; sends++) {
    const sent = await createOnce(api, body);
    if (sent !== 'again') return { created: sent };
    if (sends >= CREATE_SENDS || claim.cancelled()) {
      await claim.withdraw();
      return { stopped: 'refusedForNow' };
    }
    claim.beat?.();
    await new Promise((resolve) => setTimeout(resolve, backoffDelay(sends, RESEND_BACKOFF)));
    if (!(await claim.again())) return { stopped: 'taken' };
  }
}
