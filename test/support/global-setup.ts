import type { TestProject } from 'vitest/node';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
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
    /** Where tests make files and directories (test/support/scratch.ts); must be empty at the end. */
    scratchDir: string;
  }
}

let postgres: RunningPostgres | undefined;
let temporal: RunningDevServer | undefined;
let runDir: string | undefined;

/**
 * Starts the real components once per test run. A missing component fails the run loudly here:
 * nothing is skipped.
 */
export async function setup(project: TestProject): Promise<void> {
  const root = resolve('.ddsync/test');
  mkdirSync(root, { recursive: true });
  // One directory per run: runs of other checkouts or terminals at the same time never see each other's files.
  runDir = await mkdtemp(resolve(root, 'run-'));
  mkdirSync(resolve(runDir, 'scratch'));
  [postgres, temporal] = await Promise.all([
    startEmbeddedPostgres({ dataDir: resolve(runDir, 'postgres'), persistent: false }),
    startTemporalDevServer({ startTimeoutMs: 60_000 }),
  ]);
  project.provide('postgresUrlTemplate', postgres.urlFor('{database}'));
  project.provide('temporalAddress', temporal.address);
  project.provide('temporalNamespace', temporal.namespace);
  project.provide('scratchDir', resolve(runDir, 'scratch'));
}

/** Stops the components and removes the run's directory; fails the run if a test left files behind. */
export async function teardown(): Promise<void> {
  await Promise.allSettled([temporal?.stop(), postgres?.stop()]);
  if (!runDir) return;
  const left = await readdir(resolve(runDir, 'scratch')).catch(() => []);
  await rm(runDir, { recursive: true, force: true });
  if (left.length > 0) {
    // vitest only prints an error thrown here; the exit code is what CI and `npm test` users see.
    process.exitCode = 1;
    throw new Error(`Tests left ${left.join(', ')} behind in ${resolve(runDir, 'scratch')} (removed now): a test removes what it makes, e.g. with scratchDir() from test/support/scratch.ts.`);
  }
}
