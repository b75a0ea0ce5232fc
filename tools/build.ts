// The production build: the CLI as one ES module (dist/ddsync.mjs, plain JavaScript: no TypeScript
// loader in the process, which saves start-up time and about 50 MB of worker memory) and the
// prebuilt workflow bundle (dist/workflow-bundle.js). Usage: npm run build
import { build } from 'esbuild';
import { bundleWorkflowCode } from '@temporalio/worker';
import { mkdir, writeFile } from 'node:fs/promises';
import { packagePath } from '../platform/package-root.ts';
import { WORKFLOWS_PATH } from '../infra/worker.ts';

const cli = packagePath('dist', 'ddsync.mjs');
await build({
  entryPoints: [packagePath('cli', 'main.ts')],
  outfile: cli,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  // Dependencies stay in node_modules (native modules, embedded binaries); only ddsync's code is bundled.
  packages: 'external',
  sourcemap: true,
  logLevel: 'warning',
});
process.stdout.write(`CLI bundle written to ${cli}\n`);

const workflows = packagePath('dist', 'workflow-bundle.js');
const { code } = await bundleWorkflowCode({
  workflowsPath: WORKFLOWS_PATH,
  logger: { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} } as never,
});
await mkdir(packagePath('dist'), { recursive: true });
await writeFile(workflows, code);
process.stdout.write(`workflow bundle written to ${workflows} (${(code.length / 1024).toFixed(0)} KiB)\n`);
