import { sql } from 'kysely';
import { openWarehouse, type Warehouse } from '../../warehouse/database.ts';
import { migrateToLatest } from '../../warehouse/migrate.ts';
import { createTestDatabase } from './databases.ts';

/**
 * A fresh, migrated database (`prepare` runs as its owner first) and a warehouse over it as a role
 * that may read and write every table but not create temporary tables, as a locked-down warehouse
 * may be: the refresh must then write without its COPY staging tables. Fails if the role still can.
 */
export async function warehouseWithoutTemporaryTables(
  prefix: string,
  prepare: (admin: Warehouse) => Promise<void>,
): Promise<Warehouse> {
  const url = new URL(await createTestDatabase(prefix));
  const dbName = url.pathname.slice(1);
  const role = `${prefix}_${dbName}`;
  const admin = openWarehouse(url.toString(), 1);
  try {
    await migrateToLatest(admin);
    await prepare(admin);
    await sql.raw(`create role ${role} login password 'pw'`).execute(admin);
    await sql.raw(`revoke temporary on database ${dbName} from public`).execute(admin);
    await sql.raw(`grant select, insert, update, delete on all tables in schema public to ${role}`).execute(admin);
  } finally {
    await admin.destroy();
  }
  url.username = role;
  url.password = 'pw';
  const limited = openWarehouse(url.toString(), 2);
  const refused = await limited
    .connection()
    .execute((c) => sql`create temp table t (x int)`.execute(c))
    .catch((e: unknown) => e);
  if ((refused as { code?: string } | undefined)?.code !== '42501') {
    await limited.destroy();
    throw new Error(`role ${role} may still create temporary tables (${String(refused)})`);
  }
  return limited;
}
