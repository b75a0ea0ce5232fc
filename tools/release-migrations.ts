// Records new migrations as released: adds the sha256 of each migration file that has no entry yet
// to sql/migrations/checksums.json, and never changes an entry (docs/development.md, "Migrations").
// Run it when adding a migration, before it lands. Usage: npm run migrations:release
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  CHECKSUMS_FILE,
  MIGRATIONS_DIR,
  readMigrationFiles,
  readReleased,
  releasedMismatches,
  releasedOutOfOrder,
  unreleased,
} from '../warehouse/migrate.ts';

const NOTE =
  'sha256 of the bytes of each released migration: never edit one, add a new one. ' +
  'npm run migrations:release adds new files; the migrator refuses to start when a file differs (docs/development.md, "Migrations").';

const files = await readMigrationFiles();
const released = await readReleased();
const edited = [...releasedMismatches(files, released), ...releasedOutOfOrder(files, released)];
if (edited.length > 0) {
  process.stderr.write(
    `${edited.join('\n')}\nNever edit a released migration; add a new one, numbered after every released one. Nothing recorded.\n`,
  );
  process.exit(1);
}
const added = unreleased(files, released);
const entries = Object.entries({ ...released, ...Object.fromEntries(added.map((f) => [f.file, f.sha256])) }).sort(
  ([a], [b]) => a.localeCompare(b),
);
await writeFile(
  join(MIGRATIONS_DIR, CHECKSUMS_FILE),
  `${JSON.stringify({ '//': NOTE, ...Object.fromEntries(entries) }, null, 2)}\n`,
);
process.stdout.write(
  added.length === 0 ? 'every migration is recorded already\n' : `released: ${added.map((f) => f.file).join(', ')}\n`,
);
