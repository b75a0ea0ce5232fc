import { describe, it, expect } from 'vitest';
import { assess, type WarehouseSight } from '../../../../cli/status/judge.ts';
import { formatStatus, statusJson } from '../../../../cli/status/render.ts';
import { temporalProblem, warehouseProblem } from '../../../../cli/status/gather.ts';
import { resolveThresholds } from '../../../../cli/status/thresholds.ts';
import type { SyncStatusRow } from '../../../../warehouse/status/read-status.ts';

const thresholds = resolveThresholds({
  refreshInterval: '6h',
  webhooksInterval: '1h',
  pdfInterval: '15m',
  tx: { euWaitMs: 1_800_000, maxPollMs: 3_600_000, deadlineMs: 7 * 86_400_000 },
  status: { failuresInARow: 3 },
});
const at = new Date('2026-05-01T10:00:00Z');

function row(check: string, facts: Partial<SyncStatusRow>): SyncStatusRow {
  return {
    check,
    viewLevel: 'ok',
    since: null,
    ageSeconds: null,
    items: 0,
    failing: 0,
    failuresInARow: null,
    oldest: null,
    message: '',
    ...facts,
  };
}

const warehouse: WarehouseSight = {
  seen: true,
  where: '127.0.0.1:5432/ddsync',
  via: 'DATABASE_URL',
  status: {
    role: 'ddsync',
    inReaderRole: false,
    rows: [
      row('refresh', {
        since: new Date('2026-05-01T08:00:00Z'),
        ageSeconds: 7200,
        oldest: 'r1',
        message: 'last successful refresh finished 2026-05-01 08:00 UTC (2 h ago)',
      }),
      row('scans', {
        since: new Date('2026-04-30T14:00:00Z'),
        ageSeconds: 20 * 3600,
        items: 1,
        failing: 1,
        failuresInARow: 2,
        oldest: 'S2',
        message: '1 part whose last read failed: Beta Farms (S2), 2 in a row since 2026-04-30 14:00 UTC (20 h ago)',
      }),
    ],
    webhooks: [],
    webhooksPulledAgoSeconds: null,
  },
  writes: { outcome: 'writable', tablespaces: ['pg_default'] },
};

describe("ddsync status's output", () => {
  const report = assess(
    warehouse,
    {
      seen: false,
      where: '127.0.0.1:1 (namespace default)',
      problem: 'cannot reach Temporal at 127.0.0.1:1 (namespace default): connection refused',
    },
    [],
    thresholds,
    at,
  );

  it('answers in a screen: the level, a line per check, why, and what was read how', () => {
    expect(formatStatus(report)).toBe(
      [
        'ddsync status: WARNING (2 warning, 1 ok) at 2026-05-01T10:00:00.000Z',
        '  ok        refresh   last successful refresh finished 2026-05-01 08:00 UTC (2 h ago)',
        '  warning   scans     1 part whose last read failed: Beta Farms (S2), 2 in a row since 2026-04-30 14:00 UTC (20 h ago)',
        '                      why warning: a last read failed',
        '  warning   temporal  cannot reach Temporal at 127.0.0.1:1 (namespace default): connection refused (schedules and workers not checked)',
        '                      why warning: could not see Temporal',
        'read the warehouse 127.0.0.1:5432/ddsync as ddsync with DATABASE_URL, in a read-only transaction',
        'probed writes: a temporary table in tablespace pg_default took a row, rolled back',
        'Temporal 127.0.0.1:1 (namespace default) could not be asked',
        'thresholds: refresh 9h / 12h, 3 failures in a row, transactions 3h / 1d, PDFs due 30m (warning / critical)',
        '',
      ].join('\n'),
    );
  });

  it('--json: one object with every check, where it was read and the thresholds', () => {
    const json = statusJson(report);
    expect(JSON.parse(JSON.stringify(json))).toEqual({
      level: 'warning',
      exitCode: 1,
      checkedAt: '2026-05-01T10:00:00.000Z',
      checks: [
        {
          check: 'refresh',
          level: 'ok',
          source: 'warehouse',
          message: 'last successful refresh finished 2026-05-01 08:00 UTC (2 h ago)',
          reason: null,
          since: '2026-05-01T08:00:00.000Z',
          ageSeconds: 7200,
          items: 0,
          failing: 0,
          failuresInARow: null,
          oldest: 'r1',
        },
        expect.objectContaining({ check: 'scans', level: 'warning', reason: 'a last read failed', failuresInARow: 2 }),
        expect.objectContaining({ check: 'temporal', level: 'warning', source: 'temporal', since: null }),
      ],
      warehouse: {
        seen: true,
        where: '127.0.0.1:5432/ddsync',
        via: 'DATABASE_URL',
        role: 'ddsync',
        inReaderRole: false,
        readOnly: true,
        writes: { outcome: 'writable', tablespaces: ['pg_default'] },
      },
      temporal: {
        seen: false,
        where: '127.0.0.1:1 (namespace default)',
        problem: 'cannot reach Temporal at 127.0.0.1:1 (namespace default): connection refused',
      },
      thresholds: {
        refreshWarning: '9h',
        refreshCritical: '12h',
        failuresInARow: 3,
        txWarning: '3h',
        txCritical: '1d',
        pdfOverdue: '30m',
        webhooksStale: '2h',
      },
    });
  });
});

describe('what could not be read, in one sentence', () => {
  const where = 'db.example.com:5432/warehouse';
  const pgError = (code: string, message: string) => Object.assign(new Error(message), { code, severity: 'FATAL' });

  it('names the setting and what to do for each refusal of the warehouse', () => {
    expect(warehouseProblem(pgError('28P01', 'password authentication failed'), where, 'DDSYNC_READER_URL')).toBe(
      'the warehouse at db.example.com:5432/warehouse refused the password of DDSYNC_READER_URL',
    );
    expect(warehouseProblem(pgError('3D000', 'database "x" does not exist'), where, 'DATABASE_URL')).toBe(
      'the database of DATABASE_URL does not exist at db.example.com:5432/warehouse',
    );
    expect(warehouseProblem(pgError('42P01', 'relation "bi_sync_status" does not exist'), where, 'DATABASE_URL')).toBe(
      'the warehouse at db.example.com:5432/warehouse lacks bi_sync_status (relation "bi_sync_status" does not exist): a ddsync older than this one migrated it; `ddsync migrate` or a worker\'s start brings it up to date',
    );
    expect(
      warehouseProblem(pgError('42501', 'permission denied for view bi_sync_status'), where, 'DDSYNC_READER_URL'),
    ).toBe(
      "the role of DDSYNC_READER_URL may not read the warehouse's status (permission denied for view bi_sync_status): make it a member of ddsync_reader",
    );
    expect(
      warehouseProblem(pgError('57014', 'canceling statement due to statement timeout'), where, 'DATABASE_URL'),
    ).toBe('the warehouse at db.example.com:5432/warehouse did not answer within 30 s (statement_timeout)');
  });

  it("says when nothing answered, with the operating system's reason", () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    expect(warehouseProblem(refused, '127.0.0.1:1/ddsync', 'DATABASE_URL')).toMatch(
      /^cannot reach the warehouse at 127\.0\.0\.1:1\/ddsync: .+; check DATABASE_URL$/,
    );
    // Refused, so no server runs there: one that stopped itself on a full WAL disk is named as a cause to look for.
    const refusedTwice = new AggregateError([refused, refused], 'connect failed');
    expect(warehouseProblem(refusedTwice, '127.0.0.1:1/ddsync', 'DATABASE_URL')).toContain(
      'is its server running? (a PostgreSQL whose WAL disk filled stops itself, its log saying `PANIC: could not write to file "pg_wal/…": No space left on device`: free or grow that disk and start it); check DATABASE_URL',
    );
    expect(warehouseProblem(pgError('57P03', 'the database system is in recovery mode'), where, 'DATABASE_URL')).toBe(
      'the warehouse at db.example.com:5432/warehouse takes no connections now: it is starting, recovering or shutting down (the database system is in recovery mode)',
    );
    expect(
      warehouseProblem(new Error('timeout exceeded when trying to connect'), '10.0.0.9:5432/ddsync', 'DATABASE_URL'),
    ).toBe(
      'cannot reach the warehouse at 10.0.0.9:5432/ddsync: no connection within 10 s (the server does not answer: stopped, frozen or unreachable); check DATABASE_URL',
    );
    // pg's own words for the same timeout, when a frozen server never finishes the startup.
    expect(
      warehouseProblem(
        new Error('Connection terminated due to connection timeout'),
        '10.0.0.9:5432/ddsync',
        'DATABASE_URL',
      ),
    ).toMatch(/: no connection within 10 s \(the server does not answer/);
    expect(temporalProblem(Object.assign(new Error('deadline'), { code: 4 }), 'x:7233 (namespace default)')).toBe(
      'Temporal at x:7233 (namespace default) did not answer within 20 s',
    );
  });
});
