import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { CHECKS } from '../../../../domain/eudr/finding.ts';

const ROOT = fileURLToPath(new URL('../../../..', import.meta.url));
const read = (path: string) => readFileSync(`${ROOT}/${path}`, 'utf8');

describe('the EUDR checks are documented', () => {
  it('docs/eudr-readiness.md gives every code its severity; the README names every code', () => {
    const doc = read('docs/eudr-readiness.md');
    const readme = read('README.md');
    for (const [code, severity] of Object.entries(CHECKS)) {
      expect(doc, code).toMatch(new RegExp(`\\| \`${code}\` \\| ${severity} \\|`));
      expect(readme, code).toContain(`\`${code}\``);
    }
  });
});
