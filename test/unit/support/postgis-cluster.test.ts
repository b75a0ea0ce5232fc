import { describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { missingPostgis, startPostgisCluster } from '../../support/postgis-cluster.ts';
import { scratchDir } from '../../support/scratch.ts';

// The extra suite (npm run test:postgis) fails loudly on a machine without PostGIS, naming the
// package; it never skips. Checked here against paths that do not exist.
describe('the PostGIS cluster of the extra suite', () => {
  it('names what is missing and the package to install, and starts nothing', async () => {
    const dir = scratchDir('no-postgis');
    const paths = { bin: join(dir, 'bin'), postgisControl: join(dir, 'postgis.control') };
    expect(missingPostgis(paths)).toEqual([
      `${dir}/bin/initdb is missing (PostgreSQL 15 server binaries)`,
      `${dir}/bin/postgres is missing (PostgreSQL 15 server binaries)`,
      `${dir}/postgis.control is missing (the PostGIS 3 extension)`,
    ]);
    await expect(startPostgisCluster(join(dir, 'data'), paths)).rejects.toThrow(
      /^The PostGIS suite needs PostgreSQL 15 with PostGIS from Debian: .*initdb is missing.*\. Install it with: apt-get install -y postgresql-15-postgis-3$/,
    );
    expect(existsSync(join(dir, 'data'))).toBe(false);
  });
});
