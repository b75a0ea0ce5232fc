import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { execFile } from 'node:child_process';
import { chmod, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * Issue 35, part 1: the product as a user installs it. `npm pack` makes the tarball (its prepack builds
 * the compiled CLI and the workflow bundle); it is installed into an empty folder outside the
 * repository (so nothing can be found by walking up into the tree's node_modules); then, from yet
 * another working directory and with nothing but PATH and HOME in the environment, the installed
 * `ddsync` prints its version and help, its configuration, and runs the whole demo (embedded Postgres,
 * the Temporal dev server, the simulator, a worker on the packaged workflow bundle). Slow (an npm
 * install and a demo): the extra suite.
 */
describe('the npm package, installed into an empty folder', () => {
  const repo = resolve(import.meta.dirname, '../..');
  let root: string;
  let tarball: string;
  let installed: string;
  let elsewhere: string;
  const env = { PATH: process.env.PATH, HOME: process.env.HOME };

  const ddsync = (args: string[], timeout = 60_000, extra: NodeJS.ProcessEnv = {}) =>
    run(join(installed, 'node_modules', '.bin', 'ddsync'), args, {
      cwd: elsewhere,
      env: { ...env, ...extra },
      timeout,
      maxBuffer: 16 * 1024 * 1024,
    });

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'ddsync-package-'));
    // Embedded Postgres runs as another OS user under root: it must pass through these folders.
    await chmod(root, 0o755);
    installed = join(root, 'app');
    elsewhere = join(root, 'elsewhere');
    await run('mkdir', ['-p', installed, elsewhere]);
    const packed = await run('npm', ['pack', '--pack-destination', root, '--json'], {
      cwd: repo,
      maxBuffer: 64 * 1024 * 1024,
    });
    const [{ filename }] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as [{ filename: string }];
    tarball = join(root, filename);
    await writeFile(join(installed, 'package.json'), JSON.stringify({ name: 'an-empty-folder', private: true }));
    await run('npm', ['install', '--no-audit', '--no-fund', tarball], {
      cwd: installed,
      env: { ...env, npm_config_update_notifier: 'false' },
      maxBuffer: 64 * 1024 * 1024,
    });
  }, 600_000);

  afterAll(async () => {
    if (root) await rm(root, { recursive: true, force: true });
  });

  it('ships the compiled CLI, the workflow bundle, the migrations and views: no sources, tests or benchmarks', async () => {
    const { stdout } = await run('tar', ['tzf', tarball], { maxBuffer: 16 * 1024 * 1024 });
    const files = stdout
      .trim()
      .split('\n')
      .map((f) => f.replace(/^package\//, ''));
    for (const needed of [
      'bin/ddsync.js',
      'dist/ddsync.mjs',
      'dist/workflow-bundle.cjs',
      'dist/report-page.js',
      'sql/migrations/0001_warehouse.sql',
      'sql/views/bi_suppliers.sql',
      'examples/shipments.ndjson',
      'README.md',
      'LICENSE',
      'CHANGELOG.md',
      'package.json',
    ])
      expect(files, needed).toContain(needed);
    expect(files.filter((f) => /\.ts$|^(test|bench|tools|docs|\.ddsync)\//.test(f))).toEqual([]);
    // publint (the package linter) reads the installed package as a consumer's tools would.
    const lint = await run(join(repo, 'node_modules', '.bin', 'publint'), [join(installed, 'node_modules', 'ddsync')]);
    expect(lint.stdout).toMatch(/All good!/);
    // No TypeScript loader or bundler is needed to run it.
    const modules = await readdir(join(installed, 'node_modules'));
    expect(modules).not.toContain('tsx');
    expect(modules).not.toContain('typescript');
  });

  it('runs from another folder: version with its schema, help, configuration', async () => {
    const { version } = JSON.parse(await readFile(join(repo, 'package.json'), 'utf8')) as { version: string };
    const last = (await readdir(join(repo, 'sql', 'migrations')))
      .filter((n) => n.endsWith('.sql'))
      .sort()
      .at(-1)!;
    expect((await ddsync(['--version'])).stdout.trim()).toBe(
      `ddsync ${version} (warehouse schema ${last.replace(/\.sql$/, '')})`,
    );
    expect((await ddsync(['--help'])).stdout).toMatch(/^Usage: ddsync <command>/);
    const config = await ddsync(['config'], 60_000, {
      DDSYNC_UPSTREAM_URL: 'https://service.example/api',
      DDSYNC_CLIENT_ID: 'id',
      DDSYNC_CLIENT_SECRET: 'a-secret-never-printed',
      DATABASE_URL: 'postgres://u:pw-never-printed@db.example/ddsync',
    });
    expect(config.stdout).toMatch(/DDSYNC_UPSTREAM_URL\s+https:\/\/service\.example\/api/);
    expect(config.stdout).not.toMatch(/never-printed/);
  });

  it('runs the whole demo on the packaged workflow bundle', async () => {
    const demo = await ddsync(['demo'], 480_000);
    expect(demo.stdout).toMatch(/ddsync status: OK/);
    expect(demo.stdout).toMatch(/with a DDS reference/);
    expect(`${demo.stdout}${demo.stderr}`).not.toMatch(/Webpack|Module parse failed/);
  }, 600_000);
});
