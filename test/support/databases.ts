import { embeddedStack } from './stack.ts';
import pg from 'pg';
import { randomBytes } from 'node:crypto';

/** A fresh database on the run's cluster, so test files never see each other's rows. */
export async function createTestDatabase(prefix = 'test'): Promise<string> {
  const template = embeddedStack().postgresUrlTemplate;
  const name = `${prefix}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: template.replace('{database}', 'postgres') });
  await admin.connect();
  try {
    await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
  return template.replace('{database}', name);
}
