import { startSimulator, type Simulator } from '../../simulator/index.ts';
import { createUpstreamClient, type UpstreamClient, type UpstreamClientOptions } from '../../upstream/index.ts';
import { openWarehouse, type Warehouse } from '../../warehouse/database.ts';
import { migrateToLatest } from '../../warehouse/migrate.ts';
import { createTestDatabase } from './databases.ts';

/**
 * The simulator for tests of the submission activities: over real HTTP, every transaction it accepts
 * stays where the test left it (an hour before TO_SUBMIT moves on), none ends in ERROR. Interleavings
 * are set with its control (`intercept`, `whenHeld`, `releaseHeld`, `requestCounts`: docs/simulator.md).
 */
export function startSubmissionSimulator(seed: number): Promise<Simulator> {
  return startSimulator({
    port: 0,
    seed,
    suppliers: 2,
    plots: 20,
    transactionErrorRatio: 0,
    transactionDelays: { toSubmittedMs: 3_600_000, validationMs: 3_600_000 },
  });
}

/** The real upstream client against `sim`, its backoffs shortened for tests. */
export function simulatorClient(sim: Simulator, options: Partial<UpstreamClientOptions> = {}): UpstreamClient {
  return createUpstreamClient({
    baseUrl: sim.url,
    clientId: 'ddsync-demo',
    clientSecret: 'ddsync-demo-secret',
    retryBaseMs: 1,
    retryMaxMs: 5,
    retryAfterFloorMs: 1,
    ...options,
  });
}

/** Requests that reached the simulator for `METHOD /route` since its last reset. */
export const requestsTo = (sim: Simulator, route: string): number => sim.control.requestCounts()[route] ?? 0;

/** A migrated database of the test file's own and the submission simulator, started side by side (close both after). */
export async function startSubmissionTestbed(
  database: string,
  seed: number,
): Promise<{ db: Warehouse; sim: Simulator }> {
  const [db, sim] = await Promise.all([
    (async () => {
      const w = openWarehouse(await createTestDatabase(database), 4);
      await migrateToLatest(w);
      return w;
    })(),
    startSubmissionSimulator(seed),
  ]);
  return { db, sim };
}
