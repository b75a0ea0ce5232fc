import { resolve } from 'node:path';
import { mkdirSync } from 'node:fs';
import { parseFlags } from '../usage.ts';
import { startEmbeddedPostgres } from '../../infra/embedded-postgres.ts';
import { startTemporalDevServer } from '../../infra/temporal-dev-server.ts';

export const summary = 'start the embedded Postgres and a Temporal dev server (with UI) until Ctrl-C';
export const help = `ddsync stack [--dir DIR] [--fresh]

Starts an embedded PostgreSQL and a Temporal dev server on free loopback ports, prints the
environment variables that point ddsync at them, and keeps both running until Ctrl-C.
State is kept under DIR (default .ddsync/stack) between runs unless --fresh.`;

export async function run(argv: string[]): Promise<number> {
  const { values } = parseFlags(argv, { dir: { type: 'string' }, fresh: { type: 'boolean' } });
  const dir = resolve(values.dir ?? '.ddsync/stack');
  mkdirSync(dir, { recursive: true });
  const persistent = !values.fresh;
  const [postgres, temporal] = await Promise.all([
    startEmbeddedPostgres({ dataDir: resolve(dir, 'postgres'), persistent }),
    startTemporalDevServer({ ui: true, dbFilename: persistent ? resolve(dir, 'temporal.db') : undefined }),
  ]);
  process.stdout.write([
    `DATABASE_URL=${postgres.url}`,
    `TEMPORAL_ADDRESS=${temporal.address}`,
    `TEMPORAL_NAMESPACE=${temporal.namespace}`,
    `# Temporal UI: ${temporal.uiUrl}  (Temporal CLI from ${temporal.source})`,
    '# stack ready; Ctrl-C stops both',
    '',
  ].join('\n'));
  // Stay up until a signal; the exit hooks stop both servers.
  await new Promise<never>(() => undefined);
  return 0;
}
