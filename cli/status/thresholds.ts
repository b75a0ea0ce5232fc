import type { Config } from '../../platform/config.ts';
import { durationMs } from '../../platform/config.ts';
import { EU_VALIDATION_LONGEST_MS } from '../../schema/upstream/service-facts.ts';
import { formatMs } from '../../infra/schedules.ts';

/**
 * The thresholds `ddsync status` judges by, each with where it came from: a flag, a setting
 * (DDSYNC_STATUS_*), or a default derived from the schedule and the submission's waits, so that
 * changing DDSYNC_REFRESH_INTERVAL moves the freshness thresholds with it. Pure.
 *
 * bi_sync_status (sql/migrations/0020) judges with these defaults at every setting's default:
 * refresh 9h / 12h, 3 failures in a row, transactions 3h / 1d, PDFs 30 min.
 */

export interface Threshold {
  ms: number;
  /** Where it came from, as the output names it: `--refresh-warning`, `DDSYNC_STATUS_TX_WARNING`, `2 × DDSYNC_REFRESH_INTERVAL (6h)`. */
  from: string;
}

export interface Thresholds {
  refreshWarning: Threshold;
  refreshCritical: Threshold;
  failuresInARow: { count: number; from: string };
  txWarning: Threshold;
  txCritical: Threshold;
  pdfOverdue: Threshold;
  /** A deferred deletion older than this was not settled by the refreshes since: refreshCritical. */
  deletionsWarning: Threshold;
  /** ddsync's webhooks not pulled for this long: 2 × DDSYNC_WEBHOOKS_INTERVAL. */
  webhooksStale: Threshold;
}

/** The thresholds given on the command line, in ms (already checked by the flag parsers). */
export interface ThresholdFlags {
  refreshWarning?: number;
  refreshCritical?: number;
  failures?: number;
  txWarning?: number;
  txCritical?: number;
  pdfOverdue?: number;
}

export interface ThresholdSettings {
  refreshInterval: string;
  webhooksInterval: string;
  pdfInterval: string;
  tx: { euWaitMs: number; maxPollMs: number; deadlineMs: number };
  status: NonNullable<Config['monitoring']>['status'];
}

/** The sections of the configuration the thresholds derive from. */
export const THRESHOLD_SECTIONS = ['refresh', 'submission', 'webhooks', 'pdfs', 'monitoring'] as const;

/** The settings the thresholds derive from, out of a configuration loaded with THRESHOLD_SECTIONS. */
export function thresholdSettingsOf(config: Config): ThresholdSettings {
  const timing = config.submission!.timing;
  return {
    refreshInterval: config.refresh!.interval,
    webhooksInterval: config.webhooks!.interval,
    pdfInterval: config.pdfs!.interval,
    tx: { euWaitMs: timing.euWaitMs, maxPollMs: timing.maxPollMs, deadlineMs: timing.deadlineMs },
    status: config.monitoring!.status,
  };
}

const DAY_MS = 86_400_000;

/** A ddsync status flag or setting whose warning threshold lies beyond its critical one. */
export class ThresholdOrderError extends Error {
  override name = 'ThresholdOrderError';
  constructor(
    message: string,
    /** A flag is one of the two (else both are settings or defaults). */
    readonly byFlag: boolean,
  ) {
    super(message);
  }
}

export function resolveThresholds(settings: ThresholdSettings, flags: ThresholdFlags = {}): Thresholds {
  const set = settings.status;
  const pick = (
    flag: string,
    flagMs: number | undefined,
    setting: string,
    settingMs: number | undefined,
    fallback: Threshold,
  ): Threshold =>
    flagMs !== undefined
      ? { ms: flagMs, from: flag }
      : settingMs !== undefined
        ? { ms: settingMs, from: setting }
        : fallback;
  const interval = durationMs(settings.refreshInterval);
  const refreshCritical = pick(
    '--refresh-critical',
    flags.refreshCritical,
    'DDSYNC_STATUS_REFRESH_CRITICAL',
    set.refreshCriticalMs,
    {
      ms: 2 * interval,
      from: `2 × DDSYNC_REFRESH_INTERVAL (${settings.refreshInterval})`,
    },
  );
  // One interval and a half: the next refresh has had half an interval to run before anyone is told.
  const refreshWarning = pick(
    '--refresh-warning',
    flags.refreshWarning,
    'DDSYNC_STATUS_REFRESH_WARNING',
    set.refreshWarningMs,
    {
      ms: Math.min(1.5 * interval, refreshCritical.ms),
      from: `1.5 × DDSYNC_REFRESH_INTERVAL (${settings.refreshInterval})`,
    },
  );
  // A day is time to act before DDSYNC_TX_DEADLINE (7d) ends a transaction as timed out; a shorter deadline, half of it.
  const txCritical = pick('--tx-critical', flags.txCritical, 'DDSYNC_STATUS_TX_CRITICAL', set.txCriticalMs, {
    ms: Math.min(DAY_MS, settings.tx.deadlineMs / 2),
    from: settings.tx.deadlineMs / 2 < DAY_MS ? `½ DDSYNC_TX_DEADLINE (${formatMs(settings.tx.deadlineMs)})` : 'a day',
  });
  // The EU system answers within 90 minutes; ddsync reads no sooner than DDSYNC_TX_EU_WAIT after the
  // submission and then at least every DDSYNC_TX_MAX_POLL: later than all three together is late.
  const txWarning = pick('--tx-warning', flags.txWarning, 'DDSYNC_STATUS_TX_WARNING', set.txWarningMs, {
    ms: Math.min(EU_VALIDATION_LONGEST_MS + settings.tx.euWaitMs + settings.tx.maxPollMs, txCritical.ms),
    from: "the EU system's 90 min + DDSYNC_TX_EU_WAIT + DDSYNC_TX_MAX_POLL",
  });
  const pdfOverdue = pick('--pdf-overdue', flags.pdfOverdue, 'DDSYNC_STATUS_PDF_OVERDUE', set.pdfOverdueMs, {
    ms: 2 * durationMs(settings.pdfInterval),
    from: `2 × DDSYNC_PDF_INTERVAL (${settings.pdfInterval})`,
  });
  for (const [warning, critical] of [
    [refreshWarning, refreshCritical],
    [txWarning, txCritical],
  ] as const) {
    if (warning.ms > critical.ms)
      throw new ThresholdOrderError(
        `${warning.from} (${formatMs(warning.ms)}) must not be longer than ${critical.from} (${formatMs(critical.ms)}): a warning comes before critical`,
        warning.from.startsWith('--') || critical.from.startsWith('--'),
      );
  }
  return {
    refreshWarning,
    refreshCritical,
    failuresInARow:
      flags.failures !== undefined
        ? { count: flags.failures, from: '--failures' }
        : { count: set.failuresInARow, from: 'DDSYNC_STATUS_FAILURES' },
    txWarning,
    txCritical,
    pdfOverdue,
    deletionsWarning: refreshCritical,
    webhooksStale: {
      ms: 2 * durationMs(settings.webhooksInterval),
      from: `2 × DDSYNC_WEBHOOKS_INTERVAL (${settings.webhooksInterval})`,
    },
  };
}

/** As the output shows them: `{"refreshWarning": "9h", ...}`. */
export function thresholdsShown(t: Thresholds): Record<string, string | number> {
  return {
    refreshWarning: formatMs(t.refreshWarning.ms),
    refreshCritical: formatMs(t.refreshCritical.ms),
    failuresInARow: t.failuresInARow.count,
    txWarning: formatMs(t.txWarning.ms),
    txCritical: formatMs(t.txCritical.ms),
    pdfOverdue: formatMs(t.pdfOverdue.ms),
    webhooksStale: formatMs(t.webhooksStale.ms),
  };
}
