import { readdir, readFile } from 'node:fs/promises';
import { packagePath } from '../platform/package-root.ts';
import { Migrator, sql, type Kysely, type Migration, type MigrationProvider, type MigrationResultSet } from 'kysely';

export const MIGRATIONS_DIR = packagePath('sql', 'migrations');

/**
 * Numbered plain-SQL files (`0001_name.sql`), forward-only. Each file runs as one multi-statement
 * query inside the migrator's transaction; Kysely holds a Postgres advisory lock meanwhile, so two
 * workers starting at once apply each migration exactly once.
 */
class SqlFileMigrationProvider implements MigrationProvider {
  constructor(private readonly dir: string) {}

  async getMigrations(): Promise<Record<string, Migration>> {
    const files = (await readdir(this.dir)).filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f)).sort();
    const migrations: Record<string, Migration> = {};
    for (const file of files) {
      const text = await readFile(`${this.dir}/${file}`, 'utf8');
      migrations[file.replace(/\.sql$/, '')] = { up: async (db) => void (await sql.raw(text).execute(db)) };
    }
    return migrations;
  }
}

export interface MigrationOutcome {
  applied: string[];
  current: string | undefined;
}

export class MigrationError extends Error {
  override name = 'MigrationError';
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the migrator works on any schema
export async function migrateToLatest(db: Kysely<any>, dir = MIGRATIONS_DIR): Promise<MigrationOutcome> {
  const migrator = new Migrator({ db, provider: new SqlFileMigrationProvider(dir) });
  const { error, results }: MigrationResultSet = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    const reason = error instanceof Error ? error.message : String(error ?? 'unknown error');
    throw new MigrationError(`migration ${failed?.migrationName ?? '(setup)'} failed: ${reason}`);
  }
  const all = await migrator.getMigrations();
  const executed = all.filter((m) => m.executedAt !== undefined);
  return { applied: (results ?? []).map((r) => r.migrationName), current: executed.at(-1)?.name };
}
