import type { TestProject } from 'vitest/node';
import { mkdtemp } from 'node:fs/promises';
import { resolve } from 'node:path';
import { mkdirSync } from 'node:fs';
import { startEmbeddedPostgres, type RunningPostgres } from '../../infra/embedded-postgres.ts';
import { startTemporalDevServer, type RunningDevServer } from '../../infra/temporal-dev-server.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Superuser URL of the run's cluster, with the database name left to each test file. */
    postgresUrlTemplate: string;
    temporalAddress: string;
    temporalNamespace: string;
  }
}

let postgres: RunningPostgres | undefined;
let temporal: RunningDevServer | undefined;

/**
 * Starts the real components once per test run. A missing component fails the run loudly here:
 * nothing is skipped.
 */
export async function setup(project: TestProject): Promise<void> {
  const root = resolve('.ddsync/test');
  mkdirSync(root, { recursive: true });
  const dir = await mkdtemp(resolve(root, 'run-'));
  [postgres, temporal] = await Promise.all([
    startEmbeddedPostgres({ dataDir: resolve(dir, 'postgres'), persistent: false }),
    startTemporalDevServer({ startTimeoutMs: 60_000 }),
  ]);
  project.provide('postgresUrlTemplate', postgres.urlFor('{database}'));
  project.provide('temporalAddress', temporal.address);
  project.provide('temporalNamespace', temporal.namespace);
}

export async function teardown(): Promise<void> {
  await Promise.allSettled([temporal?.stop(), postgres?.stop()]);
}
