import { describe, it, expect } from 'vitest';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { openWarehouse } from '../../warehouse/database.ts';
import { migrateToLatest } from '../../warehouse/migrate.ts';
import { beginRun, markScopeRunning, openScopes } from '../../warehouse/refresh/run-ledger.ts';
import { closeAbandonedRuns } from '../../infra/abandoned-runs.ts';
import { createLogger } from '../../platform/logger.ts';
import { refreshWarehouse, refreshWorkflowId } from '../../workflows/refresh-warehouse.ts';
import { createTestDatabase } from '../support/databases.ts';
import { connectTemporal } from '../support/temporal.ts';

/** Nothing stays `running` for ever: a worker's start ends the runs whose workflow has ended. */
describe('closeAbandonedRuns', () => {
  it('ends as failed a run whose workflow was terminated or is unknown to Temporal, and leaves a running one alone', async () => {
    const db = openWarehouse(await createTestDatabase('abandoned'), 2);
    const temporal = await connectTemporal();
    try {
      await migrateToLatest(db);
      // Workflows on a task queue no worker polls: they stay open until terminated.
      const start = async () => {
        const runId = randomUUID();
        const workflowId = refreshWorkflowId(runId);
        await temporal.client.workflow.start(refreshWarehouse, {
          taskQueue: temporal.taskQueue,
          workflowId,
          args: [{ runId }],
        });
        await beginRun(db, runId, workflowId);
        return { runId, workflowId };
      };
      const terminated = await start();
      const open = await start();
      await openScopes(db, terminated.runId, [{ scope: 'own-plots', kind: 'own_plots' }]);
      await markScopeRunning(db, terminated.runId, 'own-plots');
      await temporal.client.workflow.getHandle(terminated.workflowId).terminate('an operator ended it');
      // Unknown to this namespace: a week-old run is ended, a recent one (maybe another namespace's) is not.
      const unknown = randomUUID();
      await beginRun(db, unknown, refreshWorkflowId(unknown));
      await sql`update sync_runs set started_at = now() - interval '8 days' where id = ${unknown}::uuid`.execute(db);
      const recentUnknown = randomUUID();
      await beginRun(db, recentUnknown, refreshWorkflowId(recentUnknown));
      const unrecorded = randomUUID();
      await beginRun(db, unrecorded, null);

      const closed = await closeAbandonedRuns(db, temporal.client, createLogger({ level: 'silent' }));
      expect(closed.sort()).toEqual([terminated.runId, unknown].sort());
      const { rows } = await sql<{ id: string; status: string; error: string | null; finished: boolean }>`
        select id::text, status, error, finished_at is not null as finished from sync_runs`.execute(db);
      const byId = Object.fromEntries(rows.map((r) => [r.id, r]));
      expect(byId[terminated.runId]).toMatchObject({
        status: 'failed',
        finished: true,
        error: expect.stringMatching(
          /ended \(terminated\) without recording how the run ended: .*an operator ended it/,
        ),
      });
      // Nothing of the run stays running: its open parts end with it.
      const scopes = await sql<{ status: string; error: string }>`
        select status, error from sync_run_scopes where run_id = ${terminated.runId}::uuid`.execute(db);
      expect(scopes.rows).toEqual([{ status: 'failed', error: expect.stringMatching(/ended \(terminated\)/) }]);
      expect(byId[unknown]).toMatchObject({
        status: 'failed',
        error: expect.stringMatching(/is not in Temporal and the run started over 7 days ago/),
      });
      expect(byId[open.runId]).toMatchObject({ status: 'running', error: null });
      expect(byId[unrecorded]).toMatchObject({ status: 'running' });
      expect(byId[recentUnknown]).toMatchObject({ status: 'running' });
      // Again: nothing more to close.
      expect(await closeAbandonedRuns(db, temporal.client, createLogger({ level: 'silent' }))).toEqual([]);
      await temporal.client.workflow.getHandle(open.workflowId).terminate('test over');
    } finally {
      await temporal.close();
      await db.destroy();
    }
  });
});
