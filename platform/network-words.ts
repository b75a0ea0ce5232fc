/**
 * The operating system's network error codes in words, for every message that says why a connection
 * failed (the warehouse, Temporal, the service): one list, so each names a failure the same way.
 */
export const NETWORK_WORDS: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'connection refused (nothing listens there)',
  ENOTFOUND: 'no such host',
  EAI_AGAIN: 'the host name cannot be resolved now',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ETIMEDOUT: 'no answer (timed out)',
  ECONNRESET: 'the connection was reset',
  EPIPE: 'the connection was closed while writing to it',
};
