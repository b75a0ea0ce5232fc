import type { TestProject } from 'vitest/node';
import { mkdtemp, rm } from 'node:fs/promises';
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { startTemporalDevServer } from '../../infra/temporal-dev-server.ts';
import { startPostgisCluster } from './postgis-cluster.ts';
import type { EmbeddedStack } from './stack.ts';

/**
 * The postgis project's global setup (`npm run test:postgis`): the same stack as the integration
 * project's (test/support/stack-setup.ts) with a PostgreSQL 15 + PostGIS cluster from Debian's
 * packages in place of embedded Postgres, provided under the same name, so the worker harness, the
 * test databases and the CLI helpers work unchanged. Missing binaries or PostGIS fail the run here,
 * naming the package to install: nothing is skipped.
 */
export default async function startPostgisStack(project: TestProject): Promise<() => Promise<void>> {
  const root = resolve('.ddsync/test');
  mkdirSync(root, { recursive: true });
  const dir = await mkdtemp(resolve(root, 'postgis-'));
  const [postgres, temporal] = await Promise.allSettled([
    startPostgisCluster(resolve(dir, 'postgres')),
    startTemporalDevServer({ startTimeoutMs: 60_000 }),
  ]);
  if (postgres.status === 'rejected' || temporal.status === 'rejected') {
    if (postgres.status === 'fulfilled') await postgres.value.stop();
    if (temporal.status === 'fulfilled') await temporal.value.stop();
    await rm(dir, { recursive: true, force: true });
    throw postgres.status === 'rejected' ? postgres.reason : (temporal as PromiseRejectedResult).reason;
  }
  const stack: EmbeddedStack = {
    postgresUrlTemplate: postgres.value.urlFor('{database}'),
    temporalAddress: temporal.value.address,
    temporalNamespace: temporal.value.namespace,
  };
  project.provide('stack', stack);
  return async () => {
    await Promise.allSettled([temporal.value.stop(), postgres.value.stop()]);
    await rm(dir, { recursive: true, force: true });
  };
}
