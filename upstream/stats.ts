/**
 * Counters the warehouse records per run (sync_runs: retries, 429s). The client keeps totals;
 * a caller may pass its own ClientStats per call to count just its work (a run, a page).
 */
export interface ClientStats {
  /** HTTP requests sent, token requests and retries included. */
  requests: number;
  /** Attempts repeated after a retryable failure (429, 5xx, network). */
  retries: number;
  /** 429 responses received. */
  rateLimited: number;
  /** 5xx responses received. */
  serverErrors: number;
  /** Requests that got no usable response (reset, timeout, truncated body). */
  networkErrors: number;
  /** Tokens obtained from the token endpoint. */
  tokenRefreshes: number;
  /** Requests repeated after a 401, with a newer token. */
  unauthorizedRetries: number;
}

export function emptyStats(): ClientStats {
  return {
    requests: 0,
    retries: 0,
    rateLimited: 0,
    serverErrors: 0,
    networkErrors: 0,
    tokenRefreshes: 0,
    unauthorizedRetries: 0,
  };
}

/** Increments a counter in every sink given (the client's totals and the caller's own). */
export function count(sinks: ReadonlyArray<ClientStats | undefined>, key: keyof ClientStats): void {
  for (const s of sinks) if (s) s[key]++;
}
