import { resolve } from 'node:path';
import { mkdirSync } from 'node:fs';
import { startEmbeddedPostgres } from '../../infra/embedded-postgres.ts';
import { startTemporalDevServer } from '../../infra/temporal-dev-server.ts';
import { untilSignal } from '../../infra/exit-hooks.ts';

export async function run(o: { dir: string; fresh?: boolean }): Promise<number> {
  const dir = resolve(o.dir);
  mkdirSync(dir, { recursive: true });
  const persistent = !o.fresh;
  const interrupted = untilSignal();
  const [postgres, temporal] = await Promise.all([
    startEmbeddedPostgres({ dataDir: resolve(dir, 'postgres'), persistent }),
    startTemporalDevServer({ ui: true, dbFilename: persistent ? resolve(dir, 'temporal.db') : undefined }),
  ]);
  process.stdout.write(
    [
      `DATABASE_URL=${postgres.url}`,
      `TEMPORAL_ADDRESS=${temporal.address}`,
      `TEMPORAL_NAMESPACE=${temporal.namespace}`,
      `# Temporal UI: ${temporal.uiUrl}  (Temporal CLI from ${temporal.source})`,
      '# stack ready; Ctrl-C stops both',
      '',
    ].join('\n'),
  );
  // Ctrl-C or SIGTERM is the normal end: both servers are stopped in order, and the exit code is 0.
  const signal = await interrupted;
  process.stderr.write(`# ${signal}: stopping PostgreSQL and the Temporal dev server\n`);
  await Promise.allSettled([temporal.stop(), postgres.stop()]);
  return 0;
}
