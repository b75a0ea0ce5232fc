import { describe, expect, it } from 'vitest';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

/** Folders of test/unit that test the house itself or the test support, not a source folder. */
const OWN = new Set(['house', 'support']);

/** Every folder under test/unit, relative to it. */
function unitFolders(dir = ''): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(join(ROOT, 'test/unit', dir))) {
    const path = dir ? `${dir}/${entry}` : entry;
    if (statSync(join(ROOT, 'test/unit', path)).isDirectory()) out.push(path, ...unitFolders(path));
  }
  return out;
}

describe('the unit tests mirror the source folders', () => {
  it('keeps every unit test under the folder of the source it tests (test/unit/domain/eudr tests domain/eudr)', () => {
    const folders = unitFolders();
    expect(folders.length).toBeGreaterThan(15);
    const astray = folders.filter((f) => !OWN.has(f.split('/')[0]!) && !existsSync(join(ROOT, f)));
    expect(astray).toEqual([]);
  });
});
