/**
 * What the client tells whoever watches it (the process's metrics): every response or network failure,
 * every retry, every token obtained. Endpoint names are `METHOD /path/{template}`: bounded, never an id.
 */
export interface UpstreamObserver {
  /** A request ended: its HTTP status, or network_error when no response came; seconds to headers or failure. */
  response(endpoint: string, status: number | 'network_error', seconds: number): void;
  /** A request will be sent again after a failure (the error's class name says why). */
  retry(endpoint: string, errorName: string): void;
  tokenRefreshed(): void;
}
