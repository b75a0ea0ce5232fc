import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { Database } from '../schema/database.ts';

// bigint and numeric come back as strings by default; counts fit in a JS number.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

export type Warehouse = Kysely<Database>;

/** One pool per process, shared by every activity. */
export function openWarehouse(url: string, poolSize: number, applicationName = 'ddsync'): Warehouse {
  const pool = new pg.Pool({ connectionString: url, max: poolSize, application_name: applicationName });
  // An idle client that loses its connection must not crash the worker; the next query reconnects.
  pool.on('error', () => undefined);
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
}
