import { TokenResponseSchema } from '../../schema/upstream/auth.ts';
import { DEFAULT_TOKEN_LIFETIME_S } from './service-facts.ts';

/**
 * The access token's lifecycle: client-credentials exchange, reuse until shortly before expiry,
 * one shared refresh for any number of concurrent callers, and a forced refresh when the service
 * rejects a token (401). The token is never logged nor put in an error (see redact.ts).
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
  #inFlight: Promise<string> | undefined;

  constructor(
    private readonly exchange: TokenExchange,
    private readonly now: () => number = Date.now,
    private readonly onIssued: (token: string) => void = () => {},
  ) {}

  /** A valid token: the cached one, or the result of the (single, shared) refresh. */
  token(): Promise<string> {
    const c = this.#current;
    if (c && this.now() < c.refreshAt) return Promise.resolve(c.value);
    return this.#refresh();
  }

  /**
   * After a 401 with `rejected`: if another caller already replaced that token, use the new one;
   * otherwise drop it and refresh (joining a refresh already under way).
   */
  refreshAfterRejection(rejected: string): Promise<string> {
    const c = this.#current;
    if (c && c.value !== rejected && this.now() < c.refreshAt) return Promise.resolve(c.value);
    if (c?.value === rejected) this.#current = undefined;
    return this.#refresh();
  }

  /** Forget the token (e.g. after a secret rotation). */
  invalidate(): void {
    this.#current = undefined;
  }

  #refresh(): Promise<string> {
    // Not tied to any caller's AbortSignal: one caller giving up must not fail the others.
    if (!this.#inFlight) {
      const refresh = this.#exchange();
      this.#inFlight = refresh;
      // Cleared after settling (also when exchange throws synchronously), so a failure is retried next time.
      refresh.then(
        () => { if (this.#inFlight === refresh) this.#inFlight = undefined; },
        () => { if (this.#inFlight === refresh) this.#inFlight = undefined; },
      );
    }
    return this.#inFlight;
  }

  async #exchange(): Promise<string> {
    const startedAt = this.now();
    const issued = await this.exchange();
    this.onIssued(issued.accessToken);
    const lifetimeMs = issued.expiresInS * 1000;
    this.#current = { value: issued.accessToken, refreshAt: startedAt + lifetimeMs - refreshMarginMs(lifetimeMs) };
    return issued.accessToken;
  }
}
