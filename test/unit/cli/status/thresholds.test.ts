import { describe, it, expect } from 'vitest';
import {
  resolveThresholds,
  thresholdsShown,
  ThresholdOrderError,
  THRESHOLD_SECTIONS,
  thresholdSettingsOf,
  type ThresholdSettings,
} from '../../../../cli/status/thresholds.ts';
import { loadConfig } from '../../../../platform/config.ts';
import { readFileSync } from 'node:fs';

const H = 3_600_000;

/** The settings `ddsync status` reads, from an environment. */
function settings(env: Record<string, string> = {}): ThresholdSettings {
  return thresholdSettingsOf(loadConfig([...THRESHOLD_SECTIONS], env));
}

describe("ddsync status's thresholds", () => {
  it('derive from the schedule and the waits when nothing is set: those bi_sync_status judges with', () => {
    const t = resolveThresholds(settings());
    expect(thresholdsShown(t)).toEqual({
      refreshWarning: '9h',
      refreshCritical: '12h',
      failuresInARow: 3,
      txWarning: '3h',
      txCritical: '1d',
      pdfOverdue: '30m',
      webhooksStale: '2h',
    });
    expect(t.refreshWarning.from).toBe('1.5 × DDSYNC_REFRESH_INTERVAL (6h)');
    expect(t.refreshCritical.from).toBe('2 × DDSYNC_REFRESH_INTERVAL (6h)');
    expect(t.failuresInARow.from).toBe('DDSYNC_STATUS_FAILURES');
    expect(t.txWarning.from).toBe("the EU system's 90 min + DDSYNC_TX_EU_WAIT + DDSYNC_TX_MAX_POLL");
    expect(t.txCritical.from).toBe('a day');
    expect(t.deletionsWarning).toEqual(t.refreshCritical);
  });

  it("are, at every setting's default, the thresholds bi_sync_status judges with (sql/migrations/0020)", () => {
    const migration = readFileSync(new URL('../../../../sql/migrations/0020_sync_status.sql', import.meta.url), 'utf8');
    const cte = /thresholds as \(\s*select ([^)]*)\)/.exec(migration)?.[1];
    expect(cte, 'the thresholds CTE of bi_sync_status').toBeDefined();
    // `9 * 3600 as refresh_warning_s`: each a product of whole numbers, in seconds (or a count).
    const inSql = Object.fromEntries(
      [...cte!.matchAll(/([\d\s*]+) as (\w+)/g)].map(([, product, name]) => [
        name!,
        product!.split('*').reduce((a, b) => a * Number(b.trim()), 1),
      ]),
    );
    const t = resolveThresholds(settings());
    expect(inSql).toEqual({
      refresh_warning_s: t.refreshWarning.ms / 1000,
      refresh_critical_s: t.refreshCritical.ms / 1000,
      failures_in_a_row: t.failuresInARow.count,
      tx_warning_s: t.txWarning.ms / 1000,
      tx_critical_s: t.txCritical.ms / 1000,
      pdf_overdue_s: t.pdfOverdue.ms / 1000,
    });
  });

  it('move with DDSYNC_REFRESH_INTERVAL, DDSYNC_PDF_INTERVAL, the waits of a transaction and its deadline', () => {
    const t = resolveThresholds(
      settings({
        DDSYNC_REFRESH_INTERVAL: '1h',
        DDSYNC_PDF_INTERVAL: '5m',
        DDSYNC_WEBHOOKS_INTERVAL: '30m',
        DDSYNC_TX_MAX_POLL: '2h',
      }),
    );
    expect([t.refreshWarning.ms, t.refreshCritical.ms, t.pdfOverdue.ms, t.webhooksStale.ms]).toEqual([
      1.5 * H,
      2 * H,
      10 * 60_000,
      H,
    ]);
    // 90 min + 30 min + 2 h
    expect(t.txWarning.ms).toBe(4 * H);
    // A deadline shorter than two days: critical at half of it, the warning no later.
    const short = resolveThresholds(settings({ DDSYNC_TX_DEADLINE: '10m' }));
    expect(short.txCritical).toEqual({ ms: 5 * 60_000, from: '½ DDSYNC_TX_DEADLINE (10m)' });
    expect(short.txWarning.ms).toBe(5 * 60_000);
  });

  it('take DDSYNC_STATUS_* over the defaults and the flags over both, saying which', () => {
    const env = {
      DDSYNC_STATUS_REFRESH_WARNING: '2h',
      DDSYNC_STATUS_REFRESH_CRITICAL: '4h',
      DDSYNC_STATUS_FAILURES: '5',
      DDSYNC_STATUS_TX_WARNING: '1h',
      DDSYNC_STATUS_TX_CRITICAL: '6h',
      DDSYNC_STATUS_PDF_OVERDUE: '90m',
    };
    const set = resolveThresholds(settings(env));
    expect(thresholdsShown(set)).toMatchObject({
      refreshWarning: '2h',
      refreshCritical: '4h',
      failuresInARow: 5,
      txWarning: '1h',
      txCritical: '6h',
      pdfOverdue: '90m',
    });
    expect(set.txCritical.from).toBe('DDSYNC_STATUS_TX_CRITICAL');
    const flagged = resolveThresholds(settings(env), { refreshCritical: 5 * H, failures: 2, pdfOverdue: 60_000 });
    expect(flagged.refreshCritical).toEqual({ ms: 5 * H, from: '--refresh-critical' });
    expect(flagged.refreshWarning).toEqual({ ms: 2 * H, from: 'DDSYNC_STATUS_REFRESH_WARNING' });
    expect(flagged.failuresInARow).toEqual({ count: 2, from: '--failures' });
    expect(flagged.pdfOverdue).toEqual({ ms: 60_000, from: '--pdf-overdue' });
  });

  it('refuse a warning beyond its critical threshold, naming both and whether a flag is to blame', () => {
    const byFlag = () => resolveThresholds(settings(), { refreshWarning: 13 * H });
    expect(byFlag).toThrow(ThresholdOrderError);
    expect(byFlag).toThrow(
      '--refresh-warning (13h) must not be longer than 2 × DDSYNC_REFRESH_INTERVAL (6h) (12h): a warning comes before critical',
    );
    try {
      resolveThresholds(settings({ DDSYNC_STATUS_TX_WARNING: '2d' }));
      expect.unreachable();
    } catch (error) {
      expect(error).toMatchObject({
        byFlag: false,
        message: 'DDSYNC_STATUS_TX_WARNING (2d) must not be longer than a day (1d): a warning comes before critical',
      });
    }
  });

  it('are settings with a rule that names them', () => {
    for (const bad of ['0m', '1.5h', 'soon']) {
      expect(() => loadConfig(['monitoring'], { DDSYNC_STATUS_TX_WARNING: bad })).toThrow(
        'DDSYNC_STATUS_TX_WARNING is malformed: expected a duration above 0: a whole number followed by ms, s, m, h or d',
      );
    }
    expect(() => loadConfig(['monitoring'], { DDSYNC_STATUS_FAILURES: '0' })).toThrow(
      'DDSYNC_STATUS_FAILURES is malformed: expected an integer from 1 to 100',
    );
    expect(() => loadConfig(['monitoring'], { DDSYNC_READER_URL: 'mysql://x' })).toThrow(
      'DDSYNC_READER_URL is malformed: expected a postgres:// URL',
    );
  });
});
