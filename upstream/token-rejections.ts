import type { TokenManager } from './auth.ts';
import { backoffDelay, type BackoffOptions } from '../platform/backoff.ts';
import { UnauthorizedError } from './errors.ts';
import type { Sleep } from './sleep.ts';

/**
 * What a 401 on an ordinary endpoint leads to. It refuses the token (expired or revoked early, as the
 * service may do at any time), never the credentials: only the token endpoint refuses those
 * (CredentialsRefusedError, final, kept by the TokenManager). The request was not processed, so it is
 * sent again whatever its method, with:
 * - a token older than the newest issued (`stale`): the newest, at once (another call refreshed);
 * - the newest, which the service accepted before (`revoked`): a fresh one from the refresh every
 *   call of the process shares, at once: the service works, this call lost a race with a revocation;
 * - the newest, never accepted (`refused`): a fresh one too, at once the first time, after a jittered
 *   backoff the next times, up to `maxRejections` per call.
 * Past that bound (or a generous cap on all repeats of one call) the call ends with a *retryable*
 * UnauthorizedError: a service that refuses every fresh token is asked again later, not spun on.
 */

export interface TokenRejectionPolicy {
  /** 401s with a fresh token never accepted that one call takes (each followed by a refresh) before it gives up, retryably. */
  maxRejections: number;
  backoff: BackoffOptions;
  sleep: Sleep;
  random?: (() => number) | undefined;
  signal?: AbortSignal | undefined;
  /** No repeat: after a 401 the token is refreshed and the 401 thrown, retryable (the caller sends again). */
  once?: boolean;
  /** Called before each repeat (the client counts unauthorizedRetries). */
  onRepeat?: () => void;
}

/** Cap on all repeats of one call, per allowed rejection: a call that keeps losing its token to revocations still ends. */
const REPEATS_PER_REJECTION = 10;

export async function withAcceptedToken<T>(
  auth: TokenManager,
  send: (token: string) => Promise<T>,
  p: TokenRejectionPolicy,
): Promise<T> {
  let token = await auth.token();
  let refused = 0;
  let repeats = 0;
  for (;;) {
    try {
      const result = await send(token);
      auth.noteAccepted(token);
      return result;
    } catch (error) {
      if (!(error instanceof UnauthorizedError)) throw error;
      if (p.once) {
        // A refresh that fails (credentials refused) is kept by the TokenManager and met by the next call.
        await auth.refreshAfterRejection(token).catch(() => undefined);
        throw error;
      }
      const kind = auth.rejectionOf(token);
      if (kind === 'refused') refused++;
      if (refused > p.maxRejections || repeats >= p.maxRejections * REPEATS_PER_REJECTION) {
        throw new UnauthorizedError(
          { endpoint: error.endpoint, status: 401, serviceMessages: error.serviceMessages, cause: error },
          `401 unauthorized: the token was refused ${repeats + 1} times in a row, fresh ones included (retried later)`,
        );
      }
      if (kind === 'refused' && refused > 1) await p.sleep(backoffDelay(refused - 1, p.backoff, p.random), p.signal);
      token = await auth.refreshAfterRejection(token);
      repeats++;
      p.onRepeat?.();
    }
  }
}
