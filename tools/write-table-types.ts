// Rewrites schema/database.generated.ts from the database sql/migrations and sql/views make: a throwaway
// embedded Postgres, migrated, then read by kysely-codegen (tools/table-types.ts). Run it after
// adding a migration or changing a view. Usage: npm run db:types
import { writeFile } from 'node:fs/promises';
import { relative } from 'node:path';
import { packagePath } from '../platform/package-root.ts';
import { openWarehouse } from '../warehouse/database.ts';
import { migrateToLatest } from '../warehouse/migrate.ts';
import { startEmbeddedPostgres } from '../infra/embedded-postgres.ts';
import { renderTableTypes, TABLE_TYPES_FILE } from './table-types.ts';

const postgres = await startEmbeddedPostgres({
  dataDir: packagePath('.ddsync', `db-types-${process.pid}`),
  persistent: false,
});
try {
  const db = openWarehouse(postgres.url, 2, 'ddsync-db-types');
  try {
    const { current } = await migrateToLatest(db);
    await writeFile(TABLE_TYPES_FILE, await renderTableTypes(db));
    process.stdout.write(`${relative(process.cwd(), TABLE_TYPES_FILE)} written from the warehouse at ${current}\n`);
  } finally {
    await db.destroy();
  }
} finally {
  await postgres.stop();
}
