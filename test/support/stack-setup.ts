import type { TestProject } from 'vitest/node';
import { mkdtemp, rm } from 'node:fs/promises';
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { startEmbeddedPostgres } from '../../infra/embedded-postgres.ts';
import { startTemporalDevServer } from '../../infra/temporal-dev-server.ts';
import type { EmbeddedStack } from './stack.ts';

/**
 * The integration project's global setup: one embedded Postgres and one Temporal dev server for the
 * whole run, started only when integration files run (vitest runs a project's global setup only then).
 * A missing component fails the run loudly here: nothing is skipped.
 */
export default async function startStack(project: TestProject): Promise<() => Promise<void>> {
  const root = resolve('.ddsync/test');
  mkdirSync(root, { recursive: true });
  // One directory per run: runs of other checkouts or terminals at the same time never see each other's files.
  const dir = await mkdtemp(resolve(root, 'stack-'));
  const [postgres, temporal] = await Promise.all([
    startEmbeddedPostgres({ dataDir: resolve(dir, 'postgres'), persistent: false }),
    startTemporalDevServer({ startTimeoutMs: 60_000 }),
  ]);
  const stack: EmbeddedStack = {
    postgresUrlTemplate: postgres.urlFor('{database}'),
    temporalAddress: temporal.address,
    temporalNamespace: temporal.namespace,
  };
  project.provide('stack', stack);
  return async () => {
    await Promise.allSettled([temporal.stop(), postgres.stop()]);
    await rm(dir, { recursive: true, force: true });
  };
}
