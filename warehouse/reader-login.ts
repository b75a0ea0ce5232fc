import { sql } from 'kysely';
import type { Warehouse } from './database.ts';

/**
 * A login for BI tools in the read-only group role the migrations create (`ddsync_reader`); one that
 * exists already is left as it is, and two callers at once make it once. The names are written into
 * the statement (a role cannot be a bind parameter), so only plain ones are taken.
 */
export async function createReaderLogin(db: Warehouse, login: string, password: string): Promise<void> {
  if (!/^[a-z_][a-z0-9_]*$/.test(login)) throw new Error(`a reader login is a plain lower-case name, got "${login}"`);
  if (/['$\\]/.test(password)) throw new Error('a reader login password may not hold a quote, a backslash or $');
  await sql
    .raw(`
    do $$ begin
      if not exists (select 1 from pg_roles where rolname = '${login}') then
        create role ${login} login password '${password}' in role ddsync_reader;
      end if;
    exception when duplicate_object or unique_violation then null;
    end $$`)
    .execute(db);
}
