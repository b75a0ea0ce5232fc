import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { inject, onTestFinished } from 'vitest';

/**
 * A new directory in the run's scratch space (`.ddsync/test/run-…/scratch`), removed when the calling
 * test finishes, passed or failed. Call it inside a test (vitest refuses `onTestFinished` elsewhere):
 * the run's teardown fails the run when anything is left in the scratch space.
 */
export function scratchDir(prefix: string): string {
  const dir = mkdtempSync(join(inject('scratchDir'), `${prefix}-`));
  // Not private (mkdtemp's 0700): another OS user (embedded Postgres under root) may work inside it.
  chmodSync(dir, 0o755);
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}
