import { describe, it, expect } from 'vitest';
import {
  readMigrationFiles,
  readReleased,
  releasedMismatches,
  releasedOutOfOrder,
  unreleased,
  type MigrationFile,
} from '../../../warehouse/migrate.ts';

describe('released migrations (sql/migrations/checksums.json)', () => {
  it('are every migration file, each with the sha256 of its bytes', async () => {
    const files = await readMigrationFiles();
    const released = await readReleased();
    expect(files.length).toBeGreaterThan(10);
    expect(releasedMismatches(files, released), 'Never edit a released migration; add a new one.').toEqual([]);
    expect(
      unreleased(files, released).map((f) => f.file),
      'A new migration: record it with `npm run migrations:release` before it lands.',
    ).toEqual([]);
  });

  it('would notice a released migration edited or gone, and a migration not recorded', () => {
    const file = (name: string, sha256: string): MigrationFile => ({ file: `${name}.sql`, name, sha256, text: '' });
    const released = { '0001_a.sql': 'aaa', '0002_b.sql': 'bbb', '0003_c.sql': 'ccc' };
    const files = [file('0001_a', 'aaa'), file('0002_b', 'b2'), file('0004_d', 'ddd')];
    expect(releasedMismatches(files, released)).toEqual([
      'sql/migrations/0002_b.sql is not the migration that was released: its sha256 is b2, sql/migrations/checksums.json records bbb.',
      'sql/migrations/0003_c.sql was released (sql/migrations/checksums.json) and is gone: put it back; a released migration stays.',
    ]);
    expect(unreleased(files, released).map((f) => f.file)).toEqual(['0004_d.sql']);
    expect(releasedOutOfOrder(files, released)).toEqual([]);
  });

  it('refuses a new migration numbered before a released one (a warehouse past it could not migrate)', () => {
    const file = (name: string): MigrationFile => ({ file: `${name}.sql`, name, sha256: 'x', text: '' });
    const released = { '//': 'note', '0001_a.sql': 'x', '0003_c.sql': 'x' };
    expect(releasedOutOfOrder([file('0001_a'), file('0002_b'), file('0003_c'), file('0004_d')], released)).toEqual([
      'sql/migrations/0002_b.sql comes before 0003_c.sql, which is released: a warehouse migrated past it would refuse to start; give it a number after 0003_c.sql.',
    ]);
  });
});
