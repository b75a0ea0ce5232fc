import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { ScheduleNotFoundError } from '@temporalio/client';
import { startWorkerHarness, type WorkerHarness } from '../support/worker-harness.ts';
import { ddsyncEnv, lastJsonLine, runDdsync } from '../support/processes.ts';
import { PDF_ARCHIVE_SCHEDULE_ID, REFRESH_SCHEDULE_ID } from '../../infra/schedules.ts';

// ddsync status on the extra suite's warehouse: PostgreSQL 15 with PostGIS (the embedded default is
// PostgreSQL 18 without it), read as a login of the read-only role, as a BI tool would.

describe('ddsync status on a PostGIS warehouse', () => {
  let h: WorkerHarness;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    h = await startWorkerHarness({ seed: 5, suppliers: 2, plots: 200 }, 'pgstatus');
    expect((await h.refresh()).status).toBe('succeeded');
    const login = `bi_${randomBytes(3).toString('hex')}`;
    await sql.raw(`create role ${login} login password 'bi-status-pw' in role ddsync_reader`).execute(h.db);
    env = ddsyncEnv(
      { upstreamUrl: h.sim.url, databaseUrl: h.databaseUrl, taskQueue: h.temporal.taskQueue },
      {
        DATABASE_URL: undefined,
        DDSYNC_READER_URL: h.databaseUrl.replace(/\/\/[^@]+@/, `//${login}:bi-status-pw@`),
        // Weekly, so that no scheduled run starts while the suite runs; removed afterwards.
        DDSYNC_REFRESH_INTERVAL: '7d',
        DDSYNC_PDF_INTERVAL: '7d',
      },
    );
    const applied = runDdsync(['schedule', 'apply'], { ...env, DATABASE_URL: h.databaseUrl });
    expect(await applied.exited, applied.output()).toBe(0);
  });
  afterAll(async () => {
    for (const id of [REFRESH_SCHEDULE_ID, PDF_ARCHIVE_SCHEDULE_ID])
      await h?.temporal.client.schedule
        .getHandle(id)
        .delete()
        .catch((error: unknown) => {
          if (!(error instanceof ScheduleNotFoundError)) throw error;
        });
    await h?.close();
  });

  it('is ok after a refresh, every check answered, read as a login of ddsync_reader', async () => {
    const run = runDdsync(['status', '--json'], env);
    const code = await run.exited;
    const status = lastJsonLine<{
      level: string;
      checks: Array<{ check: string; level: string; message: string }>;
      warehouse: Record<string, unknown>;
    }>(run.output());
    expect(code, run.output()).toBe(0);
    expect(status.level).toBe('ok');
    expect(status.checks.map((c) => [c.check, c.level])).toEqual(
      ['refresh', 'scans', 'deletions', 'transactions', 'webhooks', 'pdfs', 'schedules', 'workers'].map((c) => [
        c,
        'ok',
      ]),
    );
    expect(status.checks[1]!.message).toBe(
      'the last read of every part succeeded: 2 suppliers, invitations, network listing, own plots',
    );
    expect(status.warehouse).toMatchObject({
      seen: true,
      via: 'DDSYNC_READER_URL',
      inReaderRole: true,
      readOnly: true,
    });
    expect(run.output()).not.toContain('bi-status-pw');
  });
});
