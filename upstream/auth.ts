import { TokenResponseSchema } from '../schema/upstream/auth.ts';
import { CredentialsRefusedError } from './errors.ts';
import { DEFAULT_TOKEN_LIFETIME_S } from '../schema/upstream/service-facts.ts';

/**
 * The access token's lifecycle: client-credentials exchange, reuse until shortly before expiry,
 * one shared refresh for any number of concurrent callers (the whole process), and a forced refresh
 * when the service rejects a token (401). Credentials the service refuses stay refused: every later
 * call fails at once with that refusal instead of asking again. The token is never logged nor put
 * in an error (see redact.ts).
 */

export interface IssuedToken {
  accessToken: string;
  /** Lifetime in seconds, as the service announced it. */
  expiresInS: number;
}

/** Performs the exchange (POST /auth/machine-to-machine-clients/token). */
export type TokenExchange = () => Promise<IssuedToken>;

/** Refresh this long before expiry: 10% of the lifetime, at most 60 s (short test tokens stay usable). */
export function refreshMarginMs(lifetimeMs: number): number {
  return Math.min(60_000, lifetimeMs * 0.1);
}

/** Reads the token response; `expires_in` defaults to the contract's 86400 s when absent. */
export function issuedTokenFrom(body: unknown): IssuedToken | { problem: string } {
  const r = TokenResponseSchema.safeParse(body);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    return { problem: `${issue.path.join('.') || 'body'}: ${issue.message}` };
  }
  return { accessToken: r.data.access_token, expiresInS: r.data.expires_in ?? DEFAULT_TOKEN_LIFETIME_S };
}

export class TokenManager {
  #current: { value: string; refreshAt: number } | undefined;
  /** The last token issued, kept after #current is dropped, and whether the service accepted it yet. */
  #newest: { value: string; accepted: boolean } | undefined;
  #inFlight: Promise<string> | undefined;
  #refused: CredentialsRefusedError | undefined;

  constructor(
    private readonly exchange: TokenExchange,
    private readonly now: () => number = Date.now,
    private readonly onIssued: (token: string) => void = () => {},
  ) {}

  /** A valid token: the cached one, or the result of the (single, shared) refresh. */
  token(): Promise<string> {
    if (this.#refused) return Promise.reject(this.#refused);
    const c = this.#current;
    if (c && this.now() < c.refreshAt) return Promise.resolve(c.value);
    return this.#refresh();
  }

  /**
   * After a 401 with `rejected`: if another caller already replaced that token, use the new one;
   * otherwise drop it and refresh (joining a refresh already under way).
   */
  refreshAfterRejection(rejected: string): Promise<string> {
    if (this.#refused) return Promise.reject(this.#refused);
    const c = this.#current;
    if (c && c.value !== rejected && this.now() < c.refreshAt) return Promise.resolve(c.value);
    if (c?.value === rejected) this.#current = undefined;
    return this.#refresh();
  }

  /** A call went through with `token`: the service accepted it (so a later 401 means it was revoked). */
  noteAccepted(token: string): void {
    if (this.#newest?.value === token) this.#newest.accepted = true;
  }

  /**
   * What a 401 with `token` says: `stale`, a newer token exists (the 401 says nothing of it);
   * `revoked`, the newest, accepted before and revoked or expired early; `refused`, the newest,
   * never accepted by the service (a service refusing every fresh token looks like this).
   */
  rejectionOf(token: string): 'stale' | 'revoked' | 'refused' {
    if (token !== this.#newest?.value) return 'stale';
    return this.#newest.accepted ? 'revoked' : 'refused';
  }

  /** Forget the token and a refusal (e.g. after a secret rotation). */
  invalidate(): void {
    this.#current = undefined;
    this.#refused = undefined;
  }

  #refresh(): Promise<string> {
    // Not tied to any caller's AbortSignal: one caller giving up must not fail the others.
    if (!this.#inFlight) {
      const refresh = this.#exchange();
      this.#inFlight = refresh;
      // Cleared after settling (also when exchange throws synchronously), so a failure is retried next time.
      refresh.then(
        () => {
          if (this.#inFlight === refresh) this.#inFlight = undefined;
        },
        () => {
          if (this.#inFlight === refresh) this.#inFlight = undefined;
        },
      );
    }
    return this.#inFlight;
  }

  async #exchange(): Promise<string> {
    const startedAt = this.now();
    let issued: IssuedToken;
    try {
      issued = await this.exchange();
    } catch (error) {
      if (error instanceof CredentialsRefusedError) this.#refused = error;
      throw error;
    }
    this.onIssued(issued.accessToken);
    this.#newest = { value: issued.accessToken, accepted: false };
    const lifetimeMs = issued.expiresInS * 1000;
    this.#current = { value: issued.accessToken, refreshAt: startedAt + lifetimeMs - refreshMarginMs(lifetimeMs) };
    return issued.accessToken;
  }
}
