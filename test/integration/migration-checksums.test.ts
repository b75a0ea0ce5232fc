import { describe, it, expect } from 'vitest';
import { sql } from 'kysely';
import { appendFile, copyFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { openWarehouse, type Warehouse } from '../../warehouse/database.ts';
import { CHECKSUMS_FILE, MIGRATIONS_DIR, migrateToLatest, readMigrationFiles } from '../../warehouse/migrate.ts';
import { createTestDatabase } from '../support/databases.ts';
import { scratchDir } from '../support/scratch.ts';

/** A copy of sql/migrations (the files `keep` accepts) to change without touching the real one. */
async function copyOfMigrations(keep: (file: string) => boolean): Promise<string> {
  const dir = scratchDir('migrations');
  for (const f of (await readdir(MIGRATIONS_DIR)).filter(keep)) await copyFile(join(MIGRATIONS_DIR, f), join(dir, f));
  return dir;
}

async function withWarehouse(prefix: string, use: (db: Warehouse) => Promise<void>): Promise<void> {
  const db = openWarehouse(await createTestDatabase(prefix), 2);
  try {
    await use(db);
  } finally {
    await db.destroy();
  }
}

const recorded = async (db: Warehouse) =>
  (
    await sql<{
      name: string;
      sha256: string | null;
    }>`select name, sha256 from migration_checksums order by name`.execute(db)
  ).rows;

describe('the migrator and what migrations were', () => {
  it('refuses to start, applying nothing, when a released migration was edited', async () => {
    const dir = await copyOfMigrations(() => true);
    await appendFile(join(dir, '0003_transactions.sql'), '\n-- an afterthought\n');
    await withWarehouse('edited', async (db) => {
      await expect(migrateToLatest(db, dir)).rejects.toThrow(
        /0003_transactions\.sql is not the migration that was released: its sha256 is [0-9a-f]{64}, .*checksums\.json records [0-9a-f]{64}\. Never edit a released migration; add a new one/,
      );
      const { rows } = await sql<{ plots: string | null }>`select to_regclass('plots')::text as plots`.execute(db);
      expect(rows[0]!.plots).toBeNull();
    });
  });

  it('records the sha256 of each migration it applies, and refuses a file that differs from what this warehouse ran', async () => {
    // A folder without checksums.json released nothing: only what the warehouse ran is compared.
    const dir = await copyOfMigrations((f) => f !== CHECKSUMS_FILE);
    const files = await readMigrationFiles(dir);
    await withWarehouse('applied', async (db) => {
      await migrateToLatest(db, dir);
      expect(await recorded(db)).toEqual(files.map((f) => ({ name: f.name, sha256: f.sha256 })));

      await appendFile(join(dir, '0005_survey_pdfs.sql'), '\n-- a draft changed after it ran\n');
      await expect(migrateToLatest(db, dir)).rejects.toThrow(
        /0005_survey_pdfs\.sql is not the migration this warehouse applied: its sha256 is [0-9a-f]{64}, the warehouse ran [0-9a-f]{64} \(migration_checksums\)\. Never edit a released migration; add a new one.*ddsync stack --fresh/,
      );
    });
    // A warehouse that never ran the file takes it as it is now.
    await withWarehouse('appliednew', async (db) => {
      expect((await migrateToLatest(db, dir)).applied).toHaveLength(files.length);
    });
  });

  it('refuses, in one sentence and before touching anything, a warehouse migrated by a newer ddsync', async () => {
    // This ddsync knows migrations up to 0014; the warehouse has every one there is.
    const older = await copyOfMigrations((f) => f < '0015');
    await withWarehouse('newer', async (db) => {
      await migrateToLatest(db);
      await expect(migrateToLatest(db, older)).rejects.toThrow(
        /^the warehouse was migrated by a newer ddsync: it has applied 0015_eudr_readiness, 0016_postgis, .*which this ddsync does not have \(its last is 0014_submission_in_bulk\)\. Run the ddsync release that migrated it, or a newer one; never an older one against it\.$/,
      );
    });
  });

  it('knows no checksum of a migration applied before it recorded them, and compares only what it knows', async () => {
    const before = await copyOfMigrations((f) => f < '0012');
    await withWarehouse('older', async (db) => {
      await migrateToLatest(db, before);
      await migrateToLatest(db);
      const files = await readMigrationFiles();
      const rows = await recorded(db);
      expect(rows.map((r) => r.name)).toEqual(files.map((f) => f.name));
      for (const r of rows)
        expect(r.sha256, r.name).toBe(r.name < '0012' ? null : files.find((f) => f.name === r.name)!.sha256);

      // 0001 as such a warehouse may have run it (it was edited after its first release): nothing to compare it with.
      const edited = await copyOfMigrations((f) => f !== CHECKSUMS_FILE);
      await appendFile(join(edited, '0001_warehouse.sql'), '\n-- another version\n');
      expect((await migrateToLatest(db, edited)).applied).toEqual([]);
    });
  });
});
