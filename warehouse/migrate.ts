import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { isAbsolute, join, relative } from 'node:path';
import { packagePath } from '../platform/package-root.ts';
import { ensureSpatial, type SpatialSetup } from './spatial/ensure.ts';
import { applyViews, inDependencyOrder, readViewFiles, VIEWS_DIR, ViewFileError, type ViewFile } from './views.ts';
import { Migrator, sql, type Kysely, type Migration, type MigrationProvider, type MigrationResultSet } from 'kysely';
import { refreshSummariesAfterMigrations } from './analyst-summaries.ts';
import { boundedFor } from './database.ts';

export const MIGRATIONS_DIR = packagePath('sql', 'migrations');
/** In the migrations folder: the sha256 of every released migration, by file name. */
export const CHECKSUMS_FILE = 'checksums.json';
const MIGRATION_FILE = /^\d{4}_[a-z0-9_]+\.sql$/;
const NEVER_EDIT = 'Never edit a released migration; add a new one (the next number) that makes the change.';
/**
 * The advisory lock Kysely's Migrator takes (its PostgresAdapter's), as every ddsync before this one
 * took it: held here for the whole transaction of migrations and views, so a worker of any version
 * starting meanwhile waits for both.
 */
const MIGRATION_LOCK_ID = '3853314791062309107';

export interface MigrationFile {
  /** `0001_warehouse.sql` */
  file: string;
  /** `0001_warehouse`: the name the migrator records. */
  name: string;
  /** Of the file's bytes. */
  sha256: string;
  text: string;
}

export async function readMigrationFiles(dir = MIGRATIONS_DIR): Promise<MigrationFile[]> {
  const files = (await readdir(dir)).filter((f) => MIGRATION_FILE.test(f)).sort();
  return Promise.all(
    files.map(async (file) => {
      const bytes = await readFile(join(dir, file));
      return {
        file,
        name: file.replace(/\.sql$/, ''),
        sha256: createHash('sha256').update(bytes).digest('hex'),
        text: bytes.toString('utf8'),
      };
    }),
  );
}

/**
 * The released migrations (sql/migrations/checksums.json): file name → sha256. A folder without the
 * file has released nothing (a test's copy of some migrations).
 */
export async function readReleased(dir = MIGRATIONS_DIR): Promise<Record<string, string>> {
  let text: string;
  try {
    text = await readFile(join(dir, CHECKSUMS_FILE), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw error;
  }
  // Keys that are not migration files ("//") are comments.
  return Object.fromEntries(
    Object.entries(JSON.parse(text) as Record<string, string>).filter(([file]) => MIGRATION_FILE.test(file)),
  );
}

/** A path to show: relative to the working directory when inside it (sql/migrations/0001_warehouse.sql). */
function shown(dir: string, file: string): string {
  const path = relative(process.cwd(), join(dir, file));
  return path.startsWith('..') || isAbsolute(path) ? join(dir, file) : path;
}

/** What differs from the release record: a released migration edited or gone. One sentence each. */
export function releasedMismatches(
  files: readonly MigrationFile[],
  released: Readonly<Record<string, string>>,
  dir = MIGRATIONS_DIR,
): string[] {
  const record = shown(dir, CHECKSUMS_FILE);
  const byFile = new Map(files.map((f) => [f.file, f]));
  const problems: string[] = [];
  for (const [file, sha256] of Object.entries(released).sort()) {
    const found = byFile.get(file);
    if (!found)
      problems.push(
        `${shown(dir, file)} was released (${record}) and is gone: put it back; a released migration stays.`,
      );
    else if (found.sha256 !== sha256)
      problems.push(
        `${shown(dir, file)} is not the migration that was released: its sha256 is ${found.sha256}, ${record} records ${sha256}.`,
      );
  }
  return problems;
}

/** Migration files with no entry in the release record: new ones, to record before they land. */
export function unreleased(
  files: readonly MigrationFile[],
  released: Readonly<Record<string, string>>,
): MigrationFile[] {
  return files.filter((f) => !(f.file in released));
}

/**
 * New migrations numbered below one already released: a warehouse that ran the released one would
 * meet a migration it skipped, which the migrator refuses (it applies in order only). A new
 * migration takes the next number after every released one. One sentence per file. Pure.
 */
export function releasedOutOfOrder(
  files: readonly MigrationFile[],
  released: Readonly<Record<string, string>>,
): string[] {
  const last = Object.keys(released)
    .filter((f) => f.endsWith('.sql'))
    .sort()
    .at(-1);
  if (last === undefined) return [];
  return unreleased(files, released)
    .filter((f) => f.file < last)
    .map(
      (f) =>
        `sql/migrations/${f.file} comes before ${last}, which is released: a warehouse migrated past it would refuse to start; give it a number after ${last}.`,
    );
}

/**
 * Numbered plain-SQL files (`0001_name.sql`), forward-only. Each file runs as one multi-statement
 * query inside migrateToLatest's transaction, which holds the migrator's advisory lock, so two
 * workers starting at once apply each migration exactly once. Each migration applied is recorded in
 * migration_checksums with its file's sha256, in the same transaction.
 */
class SqlFileMigrationProvider implements MigrationProvider {
  /** Applied by this run, not recorded yet: the table arrives with 0013, after the migrations before it ran. */
  private unrecorded: Array<{ name: string; sha256: string }> = [];

  constructor(private readonly files: readonly MigrationFile[]) {}

  async getMigrations(): Promise<Record<string, Migration>> {
    const migrations: Record<string, Migration> = {};
    for (const f of this.files) {
      migrations[f.name] = {
        up: async (db) => {
          // In a savepoint: a failing file leaves the transaction usable, so the migrator still
          // releases its lock and reports which file failed and why; then everything is rolled back.
          await sql`savepoint migration`.execute(db);
          try {
            await sql.raw(f.text).execute(db);
          } catch (error) {
            await sql`rollback to savepoint migration`.execute(db);
            throw error;
          }
          await sql`release savepoint migration`.execute(db);
          this.unrecorded.push({ name: f.name, sha256: f.sha256 });
          await this.record(db);
        },
      };
    }
    return migrations;
  }

  private async record(db: Kysely<unknown>): Promise<void> {
    const { rows } = await sql<{
      present: boolean;
    }>`select to_regclass('migration_checksums') is not null as present`.execute(db);
    if (!rows[0]?.present) return;
    // 0013 wrote a row without checksum for each migration applied before it; this run knows its own.
    await sql`
      insert into migration_checksums (name, sha256)
      select * from unnest(${this.unrecorded.map((m) => m.name)}::text[], ${this.unrecorded.map((m) => m.sha256)}::text[])
      on conflict (name) do update set sha256 = excluded.sha256 where migration_checksums.sha256 is null`.execute(db);
    this.unrecorded = [];
  }
}

/** Migrations whose file differs from what this warehouse applied (as migration_checksums recorded it). */
async function appliedMismatches(db: Kysely<unknown>, files: readonly MigrationFile[], dir: string): Promise<string[]> {
  const {
    rows: [table],
  } = await sql<{ present: boolean }>`select to_regclass('migration_checksums') is not null as present`.execute(db);
  if (!table?.present) return [];
  const { rows } = await sql<{
    name: string;
    sha256: string;
  }>`select name, sha256 from migration_checksums where sha256 is not null`.execute(db);
  const applied = new Map(rows.map((r) => [r.name, r.sha256]));
  return files
    .filter((f) => applied.has(f.name) && applied.get(f.name) !== f.sha256)
    .map(
      (f) =>
        `${shown(dir, f.file)} is not the migration this warehouse applied: its sha256 is ${f.sha256}, the warehouse ran ${applied.get(f.name)} (migration_checksums).`,
    );
}

/** Migrations this warehouse applied that are not among the files: a newer ddsync migrated it. */
async function unknownApplied(db: Kysely<unknown>, files: readonly MigrationFile[]): Promise<string[]> {
  const {
    rows: [table],
  } = await sql<{ present: boolean }>`select to_regclass('kysely_migration') is not null as present`.execute(db);
  if (!table?.present) return [];
  const { rows } = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(db);
  const known = new Set(files.map((f) => f.name));
  return rows.map((r) => r.name).filter((name) => !known.has(name));
}

export interface MigrationOutcome {
  applied: string[];
  current: string | undefined;
  /** The views made again from sql/views, in the order made (empty when none changed). */
  views: string[];
  /** The spatial mode decided after migrating (docs/postgis.md); undefined before migration 0016. */
  spatial: SpatialSetup | undefined;
}

export class MigrationError extends Error {
  override name = 'MigrationError';
}

/**
 * Applies the migrations not applied yet, then brings the views to what sql/views says
 * (warehouse/views.ts), in one transaction under the migrator's lock: a warehouse has both or
 * neither, and workers starting together apply each once. Refuses to start, before touching
 * anything, when a released migration's file was edited or removed (checksums.json), or when a file
 * differs from what this warehouse applied (migration_checksums): what the warehouse is would no
 * longer be what the files say.
 *
 * `viewsDir`: the view files, by default sql/views with sql/migrations; none with another folder of
 * migrations (a test's copy of some of them: the warehouse as an older release left it, whose views
 * its migrations made).
 */
export async function migrateToLatest(
  // biome-ignore lint/suspicious/noExplicitAny: the migrator works on any schema
  db: Kysely<any>,
  dir = MIGRATIONS_DIR,
  viewsDir: string | undefined = dir === MIGRATIONS_DIR ? VIEWS_DIR : undefined,
): Promise<MigrationOutcome> {
  const files = await readMigrationFiles(dir);
  const edited = releasedMismatches(files, await readReleased(dir), dir);
  if (edited.length > 0) {
    throw new MigrationError(
      `${edited.join(' ')} ${NEVER_EDIT} To go on, put the file back as it was released (git log -- ${shown(dir, '')}).`,
    );
  }
  let views: ViewFile[] = [];
  try {
    if (viewsDir !== undefined) views = inDependencyOrder(await readViewFiles(viewsDir));
  } catch (error) {
    if (error instanceof ViewFileError) throw new MigrationError(error.message);
    throw error;
  }
  const newer = await unknownApplied(db, files);
  if (newer.length > 0) {
    throw new MigrationError(
      `the warehouse was migrated by a newer ddsync: it has applied ${newer.join(', ')}, which this ddsync does not have (its last is ${files.at(-1)?.name ?? 'none'}). Run the ddsync release that migrated it, or a newer one; never an older one against it.`,
    );
  }
  const drifted = await appliedMismatches(db, files, dir);
  if (drifted.length > 0) {
    throw new MigrationError(
      `${drifted.join(' ')} ${NEVER_EDIT} Put the file back as this warehouse ran it; a development warehouse that ran a draft can be made anew instead (ddsync stack --fresh).`,
    );
  }
  const provider = new SqlFileMigrationProvider(files);
  // Index builds over whole tables, and the lock another worker's migration holds: bounded as such.
  const migrating = boundedFor(db, 'migration');
  const outcome = await migrating.connection().execute(async (conn) => {
    // One transaction of ours, under the lock: Kysely's Migrator runs inside it (its own transaction
    // turned off), then the views.
    await sql`begin`.execute(conn);
    try {
      await sql`select pg_advisory_xact_lock(${sql.raw(MIGRATION_LOCK_ID)})`.execute(conn);
      const migrator = new Migrator({ db: conn, provider, disableTransactions: true });
      const { error, results }: MigrationResultSet = await migrator.migrateToLatest();
      const failed = results?.find((r) => r.status === 'Error');
      if (error || failed) {
        const reason = error instanceof Error ? error.message : String(error ?? 'unknown error');
        throw new MigrationError(`migration ${failed?.migrationName ?? '(setup)'} failed: ${reason}`);
      }
      let made: string[] = [];
      try {
        if (viewsDir !== undefined) made = await applyViews(conn, views);
      } catch (e) {
        if (e instanceof ViewFileError) throw new MigrationError(e.message);
        throw e;
      }
      // A migration may change what the analysts' summaries add up (0028 makes them empty): made to
      // agree with the plots in the same transaction (warehouse/analyst-summaries.ts).
      if (viewsDir !== undefined && (results ?? []).length > 0) await refreshSummariesAfterMigrations(conn);
      const executed = (await migrator.getMigrations()).filter((m) => m.executedAt !== undefined);
      await sql`commit`.execute(conn);
      return { applied: (results ?? []).map((r) => r.migrationName), current: executed.at(-1)?.name, views: made };
    } catch (error) {
      await sql`rollback`.execute(conn).catch(() => undefined);
      throw error;
    }
  });
  // The mode follows the warehouse as it is now: PostGIS installed after 0016 ran is taken up here.
  const spatial = await ensureSpatial(db);
  return { ...outcome, spatial };
}
