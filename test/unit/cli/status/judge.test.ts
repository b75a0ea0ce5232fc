import { describe, it, expect } from 'vitest';
import {
  assess,
  exitCodeOf,
  judgeTemporal,
  judgeWarehouse,
  withWebhookDrift,
  type CheckResult,
  type TemporalSight,
  type WarehouseSight,
} from '../../../../cli/status/judge.ts';
import {
  resolveThresholds,
  THRESHOLD_SECTIONS,
  thresholdSettingsOf,
  type Thresholds,
} from '../../../../cli/status/thresholds.ts';
import { loadConfig } from '../../../../platform/config.ts';
import { describedAs, parseDesiredWebhooks } from '../../../../schema/desired-webhooks.ts';
import type { RecordedWebhook, SyncStatusRow } from '../../../../warehouse/status/read-status.ts';
import type { WriteProbe } from '../../../../warehouse/write-probe.ts';
import type { ScheduleFact, TemporalFacts } from '../../../../infra/temporal-status.ts';

const H = 3600;
const defaults: Thresholds = (() => {
  return resolveThresholds(thresholdSettingsOf(loadConfig([...THRESHOLD_SECTIONS], {})));
})();

function row(check: string, facts: Partial<SyncStatusRow> = {}): SyncStatusRow {
  const ageSeconds = facts.ageSeconds ?? null;
  return {
    check,
    viewLevel: 'ok',
    since: ageSeconds === null ? null : new Date(Date.UTC(2026, 4, 1) - ageSeconds * 1000),
    ageSeconds,
    items: 0,
    failing: 0,
    failuresInARow: null,
    oldest: null,
    message: `${check} facts`,
    ...facts,
  };
}

const level = (r: SyncStatusRow, t = defaults) => {
  const [judged] = judgeWarehouse([r], t);
  return [judged!.level, judged!.reason ?? null];
};

describe("ddsync status's rules", () => {
  it('refresh: critical with no success, from 12h or 3 failures in a row; a warning from 9h or one failure', () => {
    expect(level(row('refresh'))).toEqual(['critical', 'no refresh has succeeded']);
    expect(level(row('refresh', { ageSeconds: 9 * H - 1 }))).toEqual(['ok', null]);
    expect(level(row('refresh', { ageSeconds: 9 * H }))).toEqual([
      'warning',
      'the last success is older than 9h (1.5 × DDSYNC_REFRESH_INTERVAL (6h))',
    ]);
    expect(level(row('refresh', { ageSeconds: 12 * H }))).toEqual([
      'critical',
      'the last success is older than 12h (2 × DDSYNC_REFRESH_INTERVAL (6h))',
    ]);
    expect(level(row('refresh', { ageSeconds: H, failuresInARow: 1 }))).toEqual([
      'warning',
      'the latest refresh failed',
    ]);
    expect(level(row('refresh', { ageSeconds: H, failuresInARow: 3 }))).toEqual([
      'critical',
      '3 refreshes failed in a row (3: DDSYNC_STATUS_FAILURES)',
    ]);
    // Partial runs since the success are the scans check's business.
    expect(level(row('refresh', { ageSeconds: H, items: 2, failuresInARow: 0 }))).toEqual(['ok', null]);
  });

  it('scans: a warning for any last read that failed, critical at 3 in a row', () => {
    expect(level(row('scans'))).toEqual(['ok', null]);
    expect(level(row('scans', { items: 2, failing: 2, failuresInARow: 2, ageSeconds: 20 * H }))).toEqual([
      'warning',
      '2 last reads failed',
    ]);
    expect(level(row('scans', { items: 1, failuresInARow: 3 }))).toEqual([
      'critical',
      'a read failed 3 times in a row (3: DDSYNC_STATUS_FAILURES)',
    ]);
  });

  it('deletions: deferred is normal; one older than the critical refresh age is a warning', () => {
    expect(level(row('deletions', { items: 40, ageSeconds: 11 * H }))).toEqual(['ok', null]);
    expect(level(row('deletions', { items: 40, ageSeconds: 12 * H }))[0]).toBe('warning');
  });

  it('transactions: a warning from 3h or a step failing 3 times in a row, critical from a day', () => {
    expect(level(row('transactions', { items: 5, ageSeconds: 2 * H }))).toEqual(['ok', null]);
    expect(level(row('transactions', { items: 5, ageSeconds: 2 * H, failuresInARow: 2 }))).toEqual(['ok', null]);
    expect(level(row('transactions', { items: 5, ageSeconds: 2 * H, failuresInARow: 3 }))[0]).toBe('warning');
    expect(level(row('transactions', { items: 5, ageSeconds: 3 * H }))).toEqual([
      'warning',
      "a transaction has waited longer than 3h (the EU system's 90 min + DDSYNC_TX_EU_WAIT + DDSYNC_TX_MAX_POLL)",
    ]);
    expect(level(row('transactions', { items: 5, ageSeconds: 24 * H }))).toEqual([
      'critical',
      'a transaction has waited longer than 1d (a day)',
    ]);
  });

  it("webhooks and pdfs: warnings only; a check this ddsync does not know keeps the view's level", () => {
    expect(level(row('webhooks', { items: 1 }))).toEqual(['warning', 'a webhook is failing']);
    expect(level(row('pdfs', { items: 900, ageSeconds: 29 * 60 }))).toEqual(['ok', null]);
    expect(level(row('pdfs', { items: 1, ageSeconds: 30 * 60 }))[0]).toBe('warning');
    expect(level(row('later', { viewLevel: 'critical' }))).toEqual(['critical', 'as bi_sync_status judged it']);
  });

  it('apply the thresholds they are given', () => {
    const lenient = resolveThresholds(
      {
        refreshInterval: '1d',
        webhooksInterval: '1h',
        pdfInterval: '15m',
        tx: { euWaitMs: 1_800_000, maxPollMs: 3_600_000, deadlineMs: 7 * 86_400_000 },
        status: { failuresInARow: 5 },
      },
      { refreshWarning: 30 * H * 1000 },
    );
    expect(level(row('refresh', { ageSeconds: 13 * H }), lenient)).toEqual(['ok', null]);
    expect(level(row('refresh', { ageSeconds: 30 * H }), lenient)[1]).toBe(
      'the last success is older than 30h (--refresh-warning)',
    );
    expect(level(row('scans', { items: 1, failuresInARow: 4 }), lenient)[0]).toBe('warning');
  });
});

describe('webhook drift', () => {
  const desired = parseDesiredWebhooks(JSON.stringify([{ name: 'main', url: 'https://h.example.com/hooks/main' }]));
  const recorded = (w: Partial<RecordedWebhook> = {}): RecordedWebhook => ({
    id: 'w1',
    url: 'https://h.example.com/hooks/main',
    description: describedAs(desired[0]!),
    events: ['transaction.updated'],
    isActive: true,
    createdAt: '2026-01-01T00:00:00Z',
    ...w,
  });
  const [ok] = judgeWarehouse([row('webhooks', { message: "1 webhook of ddsync's recorded, none failing" })], defaults);

  it('is none when the record matches DDSYNC_WEBHOOKS and is recent', () => {
    expect(withWebhookDrift(ok!, { desired, recorded: [recorded()], pulledAgoSeconds: 600 }, defaults)).toBe(ok);
    expect(withWebhookDrift(ok!, { desired: [], recorded: [], pulledAgoSeconds: null }, defaults)).toBe(ok);
  });

  it('says what reconciling would change, as a warning', () => {
    const missing = withWebhookDrift(ok!, { desired, recorded: [], pulledAgoSeconds: null }, defaults);
    expect(missing).toMatchObject({ level: 'warning', items: 1 });
    expect(missing.message).toBe(
      "1 webhook of ddsync's recorded, none failing; as last pulled, DDSYNC_WEBHOOKS differs from the service: main is not registered",
    );
    expect(missing.reason).toContain('drift from DDSYNC_WEBHOOKS');
    const moved = withWebhookDrift(
      ok!,
      {
        desired,
        recorded: [recorded({ url: 'https://old.example.com/hooks/main', isActive: false })],
        pulledAgoSeconds: 60,
      },
      defaults,
    );
    expect(moved.message).toContain('main differs (url, reactivate)');
    const extra = withWebhookDrift(
      ok!,
      {
        desired,
        recorded: [recorded(), recorded({ id: 'w9', description: '[ddsync:old]', createdAt: '2026-02-01T00:00:00Z' })],
        pulledAgoSeconds: 60,
      },
      defaults,
    );
    expect(extra.message).toContain('w9 of old: no longer in DDSYNC_WEBHOOKS');
  });

  it("warns when ddsync's webhooks have not been pulled for two intervals", () => {
    const stale = withWebhookDrift(ok!, { desired, recorded: [recorded()], pulledAgoSeconds: 2 * H }, defaults);
    expect(stale).toMatchObject({ level: 'warning' });
    expect(stale.reason).toBe(
      'not pulled for longer than 2h (2 × DDSYNC_WEBHOOKS_INTERVAL (1h)): is the ddsync-webhooks schedule running?',
    );
    // A failing webhook stays at least a warning, with both reasons.
    const [failing] = judgeWarehouse([row('webhooks', { items: 1 })], defaults);
    expect(withWebhookDrift(failing!, { desired, recorded: [], pulledAgoSeconds: null }, defaults).reason).toMatch(
      /^a webhook is failing; drift from DDSYNC_WEBHOOKS/,
    );
  });
});

describe("Temporal's part", () => {
  const schedule = (s: Partial<ScheduleFact>): ScheduleFact => ({
    id: 'ddsync-refresh',
    wanted: true,
    found: true,
    paused: false,
    differences: [],
    intervals: ['6h'],
    nextActionAt: new Date('2026-05-01T12:00:00Z'),
    ...s,
  });
  const facts = (schedules: ScheduleFact[], pollers = 1): TemporalFacts => ({
    schedules,
    taskQueue: 'ddsync',
    pollers,
    ...(pollers > 0 ? { lastPollAt: new Date('2026-05-01T10:00:00Z') } : {}),
  });

  it('is ok with every schedule there and running and a worker polling', () => {
    const [schedules, workers] = judgeTemporal(
      facts([schedule({}), schedule({ id: 'ddsync-pdf-archive', intervals: ['15m'] })], 2),
    );
    expect(schedules).toMatchObject({
      check: 'schedules',
      level: 'ok',
      message:
        'ddsync-refresh every 6h, next 2026-05-01T12:00:00.000Z; ddsync-pdf-archive every 15m, next 2026-05-01T12:00:00.000Z',
    });
    expect(workers).toMatchObject({
      check: 'workers',
      level: 'ok',
      message: '2 workers poll task queue ddsync (last poll 2026-05-01T10:00:00.000Z)',
    });
  });

  it('warns of a schedule paused, missing, differing or left over; no worker is critical', () => {
    const [schedules, workers] = judgeTemporal(
      facts(
        [
          schedule({ paused: true, note: 'maintenance', changedAt: new Date('2026-05-01T08:00:00Z') }),
          schedule({ id: 'ddsync-pdf-archive', found: false, intervals: [] }),
          schedule({ id: 'ddsync-x', differences: ['intervals', 'taskQueue'] }),
          schedule({ id: 'ddsync-webhooks', wanted: false }),
        ],
        0,
      ),
    );
    expect(schedules).toMatchObject({ level: 'warning', failing: 4, since: new Date('2026-05-01T08:00:00Z') });
    expect(schedules!.reason).toBe(
      [
        'ddsync-refresh is paused (maintenance)',
        'ddsync-pdf-archive is missing (`ddsync schedule apply` creates it)',
        'ddsync-x differs from the configuration (intervals, taskQueue): `ddsync schedule apply`',
        'ddsync-webhooks is no longer configured but still there (`ddsync schedule apply` deletes it)',
      ].join('; '),
    );
    expect(workers).toMatchObject({ level: 'critical', message: 'no worker has polled task queue ddsync lately' });
  });
});

describe('the whole answer', () => {
  const seenWarehouse = (
    rows: SyncStatusRow[],
    writes: WriteProbe = { outcome: 'writable', tablespaces: ['pg_default'] },
  ): WarehouseSight => ({
    seen: true,
    where: '127.0.0.1:5432/ddsync',
    via: 'DDSYNC_READER_URL',
    status: { role: 'ddsync_bi', inReaderRole: true, rows, webhooks: [], webhooksPulledAgoSeconds: null },
    writes,
  });
  const seenTemporal: TemporalSight = {
    seen: true,
    where: '127.0.0.1:7233 (namespace default)',
    facts: { schedules: [], taskQueue: 'ddsync', pollers: 1 },
  };
  const at = new Date('2026-05-01T10:00:00Z');
  const fresh = [row('refresh', { ageSeconds: H }), row('scans'), row('pdfs')];

  it('is the worst check, with exit code 0, 1 or 2', () => {
    expect([exitCodeOf('ok'), exitCodeOf('warning'), exitCodeOf('critical')]).toEqual([0, 1, 2]);
    const ok = assess(seenWarehouse(fresh), seenTemporal, [], defaults, at);
    expect(ok).toMatchObject({ level: 'ok', exitCode: 0, checkedAt: at });
    expect(ok.checks.map((c) => c.check)).toEqual(['refresh', 'scans', 'pdfs', 'schedules', 'workers']);
    expect(ok.warehouse).toEqual({
      seen: true,
      where: '127.0.0.1:5432/ddsync',
      via: 'DDSYNC_READER_URL',
      role: 'ddsync_bi',
      inReaderRole: true,
      readOnly: true,
      writes: { outcome: 'writable', tablespaces: ['pg_default'] },
    });
    const warning = assess(seenWarehouse([...fresh, row('webhooks', { items: 1 })]), seenTemporal, [], defaults, at);
    expect(warning).toMatchObject({ level: 'warning', exitCode: 1 });
    const critical = assess(
      seenWarehouse([row('refresh'), row('webhooks', { items: 1 })]),
      seenTemporal,
      [],
      defaults,
      at,
    );
    expect(critical).toMatchObject({ level: 'critical', exitCode: 2 });
  });

  it('makes what could not be seen a check of its own: the warehouse critical, Temporal a warning', () => {
    const noTemporal = assess(
      seenWarehouse(fresh),
      {
        seen: false,
        where: '127.0.0.1:1 (namespace default)',
        problem: 'cannot reach Temporal at 127.0.0.1:1: connection refused',
      },
      [],
      defaults,
      at,
    );
    expect(noTemporal).toMatchObject({ level: 'warning', exitCode: 1 });
    expect(noTemporal.checks.at(-1)).toMatchObject<Partial<CheckResult>>({
      check: 'temporal',
      level: 'warning',
      message: 'cannot reach Temporal at 127.0.0.1:1: connection refused (schedules and workers not checked)',
    });
    const noWarehouse = assess(
      {
        seen: false,
        where: '127.0.0.1:1/ddsync',
        via: 'DATABASE_URL',
        problem: 'cannot reach the warehouse at 127.0.0.1:1/ddsync: connection refused; check DATABASE_URL',
      },
      seenTemporal,
      [],
      defaults,
      at,
    );
    expect(noWarehouse).toMatchObject({ level: 'critical', exitCode: 2 });
    expect(noWarehouse.checks.map((c) => [c.check, c.level])).toEqual([
      ['warehouse', 'critical'],
      ['schedules', 'ok'],
      ['workers', 'ok'],
    ]);
  });

  it('is critical while the warehouse cannot write, though every read answers: a full disk, read-only', () => {
    const full = assess(
      seenWarehouse(fresh, {
        outcome: 'refused',
        kind: 'disk_full',
        reason:
          'out of disk space in tablespace ddsync_data (/mnt/data) (53100: could not extend file "pg_tblspc/16385/PG_18_202506291/16386/t2_16402": No space left on device)',
      }),
      seenTemporal,
      [],
      defaults,
      at,
    );
    expect(full).toMatchObject({ level: 'critical', exitCode: 2 });
    expect(full.checks[0]).toMatchObject<Partial<CheckResult>>({
      check: 'warehouse',
      level: 'critical',
      message:
        'the warehouse cannot write: out of disk space in tablespace ddsync_data (/mnt/data) (53100: could not extend file "pg_tblspc/16385/PG_18_202506291/16386/t2_16402": No space left on device)',
    });
    expect(full.checks[0]!.reason).toMatch(
      /^refresh pages, submission steps and webhook deliveries wait until it can write/,
    );
    // The warehouse's own checks are still answered next to it.
    expect(full.checks.map((c) => c.check)).toEqual(['warehouse', 'refresh', 'scans', 'pdfs', 'schedules', 'workers']);
    const readOnly = assess(
      seenWarehouse(fresh, {
        outcome: 'refused',
        kind: 'read_only',
        reason: 'it is read-only (default_transaction_read_only)',
      }),
      seenTemporal,
      [],
      defaults,
      at,
    );
    expect(readOnly.checks[0]).toMatchObject({
      check: 'warehouse',
      level: 'critical',
      message: 'the warehouse cannot write: it is read-only (default_transaction_read_only)',
    });
    // A probe that could not run says nothing of writes: no check, and the rest decides.
    const unprobed = assess(
      seenWarehouse(fresh, { outcome: 'unknown', reason: 'this role may not create in tablespace x' }),
      seenTemporal,
      [],
      defaults,
      at,
    );
    expect(unprobed).toMatchObject({ level: 'ok', exitCode: 0 });
  });
});
