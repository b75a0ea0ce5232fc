import type { TestProject } from 'vitest/node';
import { chmod, mkdtemp, readdir, rm } from 'node:fs/promises';
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Where tests make files and directories (test/support/scratch.ts); must be empty at the end. */
    scratchDir: string;
  }
}

/**
 * Global setup of every run, whichever projects it runs (the root's, see vitest.config.ts): the
 * run's scratch space, and a failed run when a test left anything in it.
 */
export default async function makeScratchSpace(project: TestProject): Promise<() => Promise<void>> {
  const root = resolve('.ddsync/test');
  mkdirSync(root, { recursive: true });
  // One directory per run: runs of other checkouts or terminals at the same time never see each other's files.
  const runDir = await mkdtemp(resolve(root, 'run-'));
  // mkdtemp makes it private (0700); embedded Postgres, run as root, works as the postgres user, which
  // must pass through it to a cluster a test makes in the scratch space.
  await chmod(runDir, 0o755);
  const scratch = resolve(runDir, 'scratch');
  mkdirSync(scratch);
  project.provide('scratchDir', scratch);
  return async () => {
    const left = await readdir(scratch).catch(() => []);
    await rm(runDir, { recursive: true, force: true });
    if (left.length > 0) {
      // vitest only prints an error thrown here; the exit code is what CI and `npm test` users see.
      process.exitCode = 1;
      throw new Error(
        `Tests left ${left.join(', ')} behind in ${scratch} (removed now): a test removes what it makes, e.g. with scratchDir() from test/support/scratch.ts.`,
      );
    }
  };
}
