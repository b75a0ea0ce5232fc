import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { chownSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { execFileSync } from 'node:child_process';
import pg from 'pg';
import { openWarehouse, type Warehouse } from '../../warehouse/database.ts';
import { migrateToLatest } from '../../warehouse/migrate.ts';
import { createReaderLogin } from '../../warehouse/reader-login.ts';
import { probeWrites } from '../../warehouse/write-probe.ts';
import { createTestDatabase } from '../support/databases.ts';
import { embeddedStack } from '../support/stack.ts';

/**
 * `ddsync status`'s write probe on a real server: a temporary table per tablespace of ddsync's, one row,
 * rolled back. What a full disk does to it is proven in the extra suite (test/postgis/full-disk.test.ts,
 * on a real tmpfs); here, that it writes where ddsync's tables are, leaves nothing behind, tells a
 * read-only warehouse, and says so when the role may not write in a tablespace rather than guessing.
 */
describe("status's write probe", () => {
  let url: string;
  let db: Warehouse;
  let admin: pg.Client;
  let tablespaceDir: string;
  const tablespace = `probe_${Math.random().toString(36).slice(2, 8)}`;

  beforeAll(async () => {
    url = await createTestDatabase('write_probe');
    db = openWarehouse(url, 2, 'write-probe-test');
    await migrateToLatest(db);
    admin = new pg.Client({ connectionString: url });
    await admin.connect();
    // A tablespace's directory must belong to the server's OS user (`postgres` when the tests run as root).
    const root = resolve('.ddsync/test');
    mkdirSync(root, { recursive: true });
    tablespaceDir = mkdtempSync(resolve(root, 'tablespace-'));
    if (process.getuid?.() === 0) {
      const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
      const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
      chownSync(tablespaceDir, uid, gid);
    }
  });

  afterAll(async () => {
    await db?.destroy();
    await admin?.query(`alter table plots set tablespace pg_default`).catch(() => undefined);
    await admin?.end();
    const other = new pg.Client({
      connectionString: embeddedStack().postgresUrlTemplate.replace('{database}', 'postgres'),
    });
    await other.connect();
    await other.query(`drop tablespace if exists ${tablespace}`).catch(() => undefined);
    await other.end();
    rmSync(tablespaceDir, { recursive: true, force: true });
  });

  it('writes in the default tablespace and leaves nothing behind', async () => {
    expect(await probeWrites(db)).toEqual({ outcome: 'writable', tablespaces: ['pg_default'] });
    expect(await probeWrites(db)).toEqual({ outcome: 'writable', tablespaces: ['pg_default'] });
    const { rows } = await admin.query(
      `select count(*)::int as n from pg_class where relname like 'ddsync_write_probe%'`,
    );
    expect(rows[0].n).toBe(0);
  });

  it('says the warehouse is read-only, as a standby or default_transaction_read_only makes it', async () => {
    const database = new URL(url).pathname.slice(1);
    await admin.query(`alter database ${database} set default_transaction_read_only = on`);
    const readOnly = openWarehouse(url, 1, 'write-probe-read-only');
    try {
      expect(await probeWrites(readOnly)).toEqual({
        outcome: 'refused',
        kind: 'read_only',
        reason: 'it is read-only (default_transaction_read_only)',
      });
    } finally {
      await readOnly.destroy();
      await admin.query(`alter database ${database} reset default_transaction_read_only`);
    }
  });

  it("probes every tablespace of ddsync's tables, and says which one a role may not write in", async () => {
    await admin.query(`create tablespace ${tablespace} location '${tablespaceDir}'`);
    await admin.query(`alter table plots set tablespace ${tablespace}`);
    expect(await probeWrites(db)).toEqual({ outcome: 'writable', tablespaces: ['pg_default', tablespace].sort() });
    // A BI login (ddsync_reader) has no CREATE there: the probe cannot tell, and says what would let it.
    const login = `probe_bi_${Math.random().toString(36).slice(2, 8)}`;
    await createReaderLogin(db, login, 'probe-bi-pw');
    const asReader = new URL(url);
    asReader.username = login;
    asReader.password = 'probe-bi-pw';
    const reader = openWarehouse(asReader.toString(), 1, 'write-probe-reader');
    try {
      const probe = await probeWrites(reader);
      expect(probe).toEqual({
        outcome: 'unknown',
        reason: `this role may not create in tablespace ${tablespace} (${tablespaceDir}): grant it CREATE there to have writes probed`,
      });
    } finally {
      await reader.destroy();
    }
  });
});
