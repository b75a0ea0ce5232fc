import { spawn } from 'node:child_process';
import { accessSync, constants, readFileSync, statSync } from 'node:fs';
import { delimiter, join, resolve } from 'node:path';

/**
 * The real dbt (dbt-core with dbt-postgres, from PyPI) for the extra suite's dbt tests. Found in this
 * order: DDSYNC_DBT_PATH, ddsync's own virtualenv (.ddsync/tools/dbt-venv, where .ci/run installs it),
 * `dbt` on PATH. None: the test fails saying how to install it, never skips.
 */
export function dbtExecutable(env: NodeJS.ProcessEnv = process.env, root = process.cwd()): string {
  const given = env.DDSYNC_DBT_PATH;
  if (given) {
    if (!isExecutable(given)) throw new Error(`DDSYNC_DBT_PATH is ${given}, which is not an executable file`);
    return given;
  }
  const venv = resolve(root, '.ddsync/tools/dbt-venv/bin/dbt');
  if (isExecutable(venv)) return venv;
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    const candidate = join(dir, 'dbt');
    if (dir && isExecutable(candidate)) return candidate;
  }
  throw new Error(
    'The dbt tests need dbt-core with dbt-postgres, and none was found (DDSYNC_DBT_PATH, .ddsync/tools/dbt-venv/bin/dbt, dbt on PATH). ' +
      'Install them as .ci/run does: python3 -m venv .ddsync/tools/dbt-venv && ' +
      '.ddsync/tools/dbt-venv/bin/python -m pip install dbt-core==1.11.16 dbt-postgres==1.11.0',
  );
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

export interface DbtRun {
  code: number | null;
  output: string;
}

/** One result of run_results.json (dbt test) or sources.json (dbt source freshness). */
export interface DbtResult {
  unique_id: string;
  status: string;
  failures?: number | null;
  message?: string | null;
}

export interface DbtProject {
  /** Runs `dbt <args>` in the package with its own profiles.yml; target/ and logs/ under `workDir`. */
  run(args: string[]): Promise<DbtRun>;
  /** The results of the last `dbt test` (run_results.json). */
  testResults(): DbtResult[];
  /** The results of the last `dbt source freshness` (sources.json). */
  freshnessResults(): DbtResult[];
  /** The manifest of the last parse (manifest.json). */
  manifest(): {
    sources: Record<string, { name: string; description: string; columns: Record<string, { description: string }> }>;
  };
}

/**
 * dbt over a package folder, offline: no anonymous usage statistics, no version check against PyPI, no
 * packages (the package uses dbt's built-in tests only, so `dbt deps` never runs). `env` gives the
 * profile's connection (the package's profiles.yml reads it with env_var()).
 */
export function dbtProject(packageDir: string, workDir: string, env: Record<string, string>): DbtProject {
  const executable = dbtExecutable();
  const targetPath = join(workDir, 'target');
  const logPath = join(workDir, 'logs');
  const json = <T>(file: string) => JSON.parse(readFileSync(join(targetPath, file), 'utf8')) as T;
  return {
    run: (args) =>
      new Promise((resolvePromise, reject) => {
        const child = spawn(
          executable,
          [
            ...args,
            '--profiles-dir',
            packageDir,
            '--project-dir',
            packageDir,
            '--target-path',
            targetPath,
            '--log-path',
            logPath,
            '--no-use-colors',
          ],
          {
            cwd: packageDir,
            env: {
              PATH: process.env.PATH ?? '',
              HOME: process.env.HOME ?? '',
              DO_NOT_TRACK: '1',
              DBT_SEND_ANONYMOUS_USAGE_STATS: 'false',
              DBT_PARTIAL_PARSE: 'false',
              ...env,
            },
            stdio: ['ignore', 'pipe', 'pipe'],
          },
        );
        let output = '';
        child.stdout.on('data', (chunk: Buffer) => {
          output += chunk.toString('utf8');
        });
        child.stderr.on('data', (chunk: Buffer) => {
          output += chunk.toString('utf8');
        });
        child.once('error', reject);
        child.once('close', (code) => resolvePromise({ code, output }));
      }),
    testResults: () => json<{ results: DbtResult[] }>('run_results.json').results,
    freshnessResults: () => json<{ results: DbtResult[] }>('sources.json').results,
    manifest: () => json('manifest.json'),
  };
}
