import { NETWORK_WORDS } from '../platform/network-words.ts';

/**
 * One message for every system ddsync connects to (Temporal, the warehouse, the service): what it
 * tried to reach, why that failed, and what to do next. Never a password or user: `where` is built
 * from the host, port and database or path only.
 */
export interface Endpoint {
  /** "Temporal", "the warehouse", "the service". */
  name: string;
  /** host:port and namespace, host:port/database, or the base URL. */
  where: string;
  /** The settings that say where it is. */
  settings: string;
  /** How to start one on this machine. */
  start: string;
}

export class ConnectionFailedError extends Error {
  override name = 'ConnectionFailedError';

  /**
   * `answered`: something answered and refused (a wrong password, no such database); otherwise nothing
   * answered. The original error is kept as `underlying`, not `cause`: the CLI prints the innermost
   * cause's message, which would hide this one.
   */
  constructor(
    readonly endpoint: Endpoint,
    readonly reason: string,
    readonly answered: boolean,
    readonly underlying?: unknown,
  ) {
    super(
      answered
        ? `${endpoint.name} at ${endpoint.where} refused the connection: ${reason}. Check ${endpoint.settings}.`
        : `cannot reach ${endpoint.name} at ${endpoint.where}: ${reason}. Is it running? ${endpoint.start}; otherwise check ${endpoint.settings}.`,
    );
  }
}

export function temporalEndpoint(address: string, namespace: string): Endpoint {
  return {
    name: 'Temporal',
    where: `${address} (namespace ${namespace})`,
    settings:
      'TEMPORAL_ADDRESS and TEMPORAL_NAMESPACE (Temporal Cloud: TEMPORAL_API_KEY or TEMPORAL_TLS_CERT_PATH and TEMPORAL_TLS_KEY_PATH)',
    start: '`ddsync stack` starts one and prints its TEMPORAL_ADDRESS',
  };
}

/** The warehouse of a postgres:// URL, named by host, port and database only. */
export function warehouseEndpoint(databaseUrl: string): Endpoint {
  const url = new URL(databaseUrl);
  // libpq forms: ?host= overrides the URL's host (a socket directory), and the database defaults to the user's name.
  const host = url.searchParams.get('host') ?? url.hostname;
  const port = url.searchParams.get('port') ?? (url.port || '5432');
  const database = decodeURIComponent(url.pathname.slice(1)) || "(the user's default database)";
  return {
    name: 'the warehouse',
    where: `${host}:${port}/${database}`,
    settings: 'DATABASE_URL',
    start: '`ddsync stack` starts one and prints its DATABASE_URL',
  };
}

/** The service at a base URL, without user info, query or fragment. */
export function upstreamEndpoint(baseUrl: string): Endpoint {
  const url = new URL(baseUrl);
  return {
    name: 'the service',
    where: `${url.origin}${url.pathname.replace(/\/+$/, '')}`,
    settings: 'DDSYNC_UPSTREAM_URL',
    start: '`ddsync simulator` starts a local stand-in and prints its URL',
  };
}

/**
 * The words for the operating system's network error code found on the error or its causes (fetch
 * wraps it twice); the error's own message otherwise.
 */
export function networkReason(error: unknown): string {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && NETWORK_WORDS[code]) return NETWORK_WORDS[code];
    current = (current as { cause?: unknown }).cause;
  }
  return error instanceof Error ? error.message : String(error);
}
