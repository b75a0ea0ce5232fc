import { describe, it, expect } from 'vitest';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { LAYERS, sourceFiles } from '../../support/import-graph.ts';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

/**
 * One rule for every Postgres connection ddsync makes (warehouse/database.ts, guardClient): it has an
 * 'error' listener from its first moment, or a warehouse restart ends the process. So a pg client or
 * pool is made in that one file only; anywhere else it goes through newClient() or openWarehouse().
 */
describe('the house: pg clients are made in one place', () => {
  it('makes no pg.Client or pg.Pool outside warehouse/database.ts', () => {
    const makers = /new\s+(pg\.)?(Client|Pool)\s*\(/;
    const offenders = sourceFiles(ROOT, LAYERS)
      .filter((f) => f !== 'warehouse/database.ts')
      .filter((f) => {
        const text = readFileSync(`${ROOT}/${f}`, 'utf8');
        // Temporal's Client is another thing: only pg's count.
        return /from 'pg'/.test(text) && makers.test(text);
      });
    expect(offenders).toEqual([]);
  });

  it('would notice one', () => {
    expect(/new\s+(pg\.)?(Client|Pool)\s*\(/.test('const c = new pg.Client({ connectionString })')).toBe(true);
  });
});
