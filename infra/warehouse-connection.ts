import { openWarehouse, type Warehouse } from '../warehouse/database.ts';
import type { StatementKind } from '../warehouse/statement-bounds.ts';
import { probeServer } from '../warehouse/server.ts';
import { ConnectionFailedError, networkReason, warehouseEndpoint } from './connection-failure.ts';

const CONNECT_TIMEOUT_MS = 10_000;

/**
 * One connection and `select 1` with a deadline: the pool has none, and on a host that drops packets
 * it would wait for the operating system's TCP timeout (minutes) at the first query.
 */
export async function checkWarehouse(url: string, applicationName = 'ddsync'): Promise<void> {
  try {
    await probeServer({
      connectionString: url,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      application_name: applicationName,
    });
  } catch (error) {
    const endpoint = warehouseEndpoint(url);
    // A server error (wrong password, no such database) carries a severity: Postgres answered.
    if (error instanceof Error && 'severity' in error)
      throw new ConnectionFailedError(endpoint, error.message, true, error);
    const timedOut = error instanceof Error && /timeout/i.test(error.message);
    throw new ConnectionFailedError(
      endpoint,
      timedOut ? `no connection within ${CONNECT_TIMEOUT_MS / 1000} s` : networkReason(error),
      false,
      error,
    );
  }
}

/** The warehouse pool of a command, once the warehouse is known to answer. */
export async function connectWarehouse(
  database: { url: string; timeoutScale?: number },
  poolSize: number,
  applicationName: string,
  kind: StatementKind = 'work',
): Promise<Warehouse> {
  await checkWarehouse(database.url, applicationName);
  return openWarehouse(database.url, poolSize, applicationName, {
    kind,
    ...(database.timeoutScale === undefined ? {} : { timeoutScale: database.timeoutScale }),
  });
}
