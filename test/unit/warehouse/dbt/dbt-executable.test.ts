import { describe, expect, it } from 'vitest';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { dbtExecutable } from '../../../support/dbt.ts';
import { scratchDir } from '../../../support/scratch.ts';

// The extra suite's dbt tests find dbt or fail saying how to install it: never skipped.
describe('the dbt the extra suite runs', () => {
  it('is DDSYNC_DBT_PATH, else ddsync’s virtualenv, else dbt on PATH', () => {
    const dir = scratchDir('dbt-bin');
    const onPath = join(dir, 'dbt');
    writeFileSync(onPath, '#!/bin/sh\n');
    chmodSync(onPath, 0o755);
    expect(dbtExecutable({ DDSYNC_DBT_PATH: onPath }, dir)).toBe(onPath);
    expect(dbtExecutable({ PATH: `/nowhere:${dir}` }, dir)).toBe(onPath);
    expect(() => dbtExecutable({ DDSYNC_DBT_PATH: join(dir, 'missing') }, dir)).toThrow(
      `DDSYNC_DBT_PATH is ${join(dir, 'missing')}, which is not an executable file`,
    );
  });

  it('fails naming how to install it when there is none', () => {
    const dir = scratchDir('dbt-none');
    expect(() => dbtExecutable({ PATH: dir }, dir)).toThrow(
      /none was found .*python3 -m venv \.ddsync\/tools\/dbt-venv && \.ddsync\/tools\/dbt-venv\/bin\/python -m pip install dbt-core==1\.11\.16 dbt-postgres==1\.11\.0/,
    );
  });
});
