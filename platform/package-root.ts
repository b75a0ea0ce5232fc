import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The ddsync package's own folder, found by walking up from this module to its package.json. Paths
 * to sql/, workflows/ and .ddsync/ are resolved from it, so they hold both when the sources run
 * through tsx and when the CLI runs as one bundled file (dist/ddsync.mjs).
 */
function findPackageRoot(from: string): string {
  for (let dir = dirname(fileURLToPath(from)); ; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'ddsync')
      return dir;
    if (dirname(dir) === dir) throw new Error(`cannot find the ddsync package folder above ${fileURLToPath(from)}`);
  }
}

const PACKAGE_ROOT = findPackageRoot(import.meta.url);

export function packagePath(...parts: string[]): string {
  return join(PACKAGE_ROOT, ...parts);
}
