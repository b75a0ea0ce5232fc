import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { sql } from 'kysely';
import { readFile } from 'node:fs/promises';
import { renderTableTypes, TABLE_TYPES_FILE } from '../../tools/table-types.ts';
import { NARROWED_COLUMNS } from '../../schema/database.ts';
import { openWarehouse, type Warehouse } from '../../warehouse/database.ts';
import { migrateToLatest } from '../../warehouse/migrate.ts';
import { createTestDatabase } from '../support/databases.ts';

async function migratedDatabase(prefix: string): Promise<Warehouse> {
  const db = openWarehouse(await createTestDatabase(prefix), 2);
  await migrateToLatest(db);
  return db;
}

describe('the warehouse table types (schema/database.generated.ts)', () => {
  let db: Warehouse;
  beforeAll(async () => {
    db = await migratedDatabase('types');
  });
  afterAll(() => db?.destroy());

  it('are what kysely-codegen makes of a freshly migrated database', async () => {
    const fresh = await renderTableTypes(db);
    const committed = await readFile(TABLE_TYPES_FILE, 'utf8');
    expect(committed, 'schema/database.generated.ts is stale: run `npm run db:types` and commit it').toBe(fresh);
  });

  it('would be stale after a column is renamed in SQL', async () => {
    const changed = await migratedDatabase('typesrenamed');
    try {
      await sql`alter table plots rename column owner_id to owner_business_id`.execute(changed);
      const generated = await renderTableTypes(changed);
      expect(generated).not.toBe(await readFile(TABLE_TYPES_FILE, 'utf8'));
      const plots = /export interface Plots \{([^}]*)\}/.exec(generated)?.[1] ?? '';
      expect(plots).toContain('owner_business_id: string | null;');
      expect(plots).not.toContain('owner_id');
    } finally {
      await changed.destroy();
    }
  });

  it('narrow a column (schema/database.ts) to exactly the values its CHECK allows', async () => {
    const checked: Record<string, string[]> = {};
    const unchecked: string[] = [];
    for (const [path, values] of Object.entries(NARROWED_COLUMNS)) {
      const [table, column] = path.split('.') as [string, string];
      const { rows } = await sql<{ definition: string }>`
        select pg_get_constraintdef(c.oid) as definition
        from pg_constraint c join pg_attribute a on a.attrelid = c.conrelid and a.attnum = c.conkey[1]
        where c.contype = 'c' and c.conrelid = ${table}::regclass and cardinality(c.conkey) = 1 and a.attname = ${column}`.execute(
        db,
      );
      if (rows.length === 0) {
        unchecked.push(path);
        continue;
      }
      expect(rows, path).toHaveLength(1);
      const allowed = [...rows[0]!.definition.matchAll(/'([^']*)'::text/g)].map((m) => m[1]!);
      checked[path] = allowed.sort();
      expect(checked[path], path).toEqual([...values].sort());
    }
    // Narrowed without a CHECK in the SQL: the values ddsync alone writes (marked so in schema/database.ts).
    expect(unchecked.sort()).toEqual(['transaction_status_events.source', 'webhook_events.handling']);
    expect(Object.keys(checked).length).toBeGreaterThanOrEqual(10);
  });
});
