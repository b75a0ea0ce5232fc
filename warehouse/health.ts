import { sql } from 'kysely';
import type { Warehouse } from './database.ts';

/** The server a worker's pool reaches: its version and the database it is connected to. */
export interface ServerIdentity {
  serverVersion: string;
  database: string;
}

/** One round trip to the warehouse (the health check's): what server, which database. */
export async function readServerIdentity(db: Warehouse): Promise<ServerIdentity> {
  const { rows } = await sql<{
    version: string;
    db: string;
  }>`select current_setting('server_version') as version, current_database() as db`.execute(db);
  const row = rows[0]!;
  return { serverVersion: row.version, database: row.db };
}
