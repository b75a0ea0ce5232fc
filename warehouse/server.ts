import type pg from 'pg';
import { newClient } from './database.ts';

/**
 * The Postgres server itself, on a connection of its own outside any pool (guarded like every other):
 * whether it answers, and the databases of a cluster ddsync runs (the embedded default's).
 */

/** Connects and runs `select 1`; throws what connecting or the statement threw. */
export async function probeServer(config: pg.ClientConfig): Promise<void> {
  const client = newClient(config);
  try {
    await client.connect();
    await client.query('select 1');
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Creates database `name` unless the server has it; `adminUrl` reaches the cluster (its `postgres` database). */
export async function ensureDatabase(adminUrl: string, name: string): Promise<void> {
  const client = newClient({ connectionString: adminUrl });
  await client.connect();
  try {
    const found = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (found.rowCount === 0) await client.query(`create database "${name.replace(/"/g, '""')}"`);
  } finally {
    await client.end();
  }
}
