// Production workers load a prebuilt workflow bundle instead of bundling at every start.
// Usage: npm run build:workflows [-- OUT]   (default dist/workflow-bundle.js)
import { bundleWorkflowCode } from '@temporalio/worker';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { WORKFLOWS_PATH } from './worker.ts';

const out = resolve(process.argv[2] ?? 'dist/workflow-bundle.js');
const { code } = await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH });
await mkdir(dirname(out), { recursive: true });
await writeFile(out, code);
process.stdout.write(`workflow bundle written to ${out} (${(code.length / 1024).toFixed(0)} KiB)\n`);
