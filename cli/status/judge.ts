import type {
  RecordedWebhook,
  SyncStatusLevel,
  SyncStatusRow,
  WarehouseStatus,
} from '../../warehouse/status/read-status.ts';
import type { WriteProbe, WriteRefusal } from '../../warehouse/write-probe.ts';
import type { TemporalFacts } from '../../infra/temporal-status.ts';
import type { DesiredWebhook } from '../../schema/desired-webhooks.ts';
import { planWebhooks, type WebhookAction } from '../../activities/webhooks/reconcile-plan.ts';
import { formatMs } from '../../infra/schedules.ts';
import type { Threshold, Thresholds } from './thresholds.ts';

/**
 * What is ok, a warning or critical, given the facts the warehouse and Temporal gave and the
 * thresholds: `ddsync status`'s rules, in one place. Pure: no clock (ages come with the facts),
 * no I/O. bi_sync_status applies the same rules with the default thresholds (test/integration/
 * sync-status-view.test.ts keeps them in step).
 */

export type Level = SyncStatusLevel;

export interface CheckResult {
  /** refresh, scans, deletions, transactions, webhooks, pdfs (the warehouse's); schedules, workers (Temporal's); warehouse, temporal (what could not be seen, or a warehouse that cannot write). */
  check: string;
  level: Level;
  source: 'warehouse' | 'temporal';
  /** The facts, in one sentence. */
  message: string;
  /** Why the level is not ok, naming the threshold and where it came from; absent when ok. */
  reason?: string;
  since: Date | null;
  ageSeconds: number | null;
  items: number | null;
  failing: number | null;
  failuresInARow: number | null;
  oldest: string | null;
}

const RANK: Record<Level, number> = { ok: 0, warning: 1, critical: 2 };

/** The exit code a monitoring system reads: 0 ok, 1 warning, 2 critical. */
export function exitCodeOf(level: Level): 0 | 1 | 2 {
  return RANK[level] as 0 | 1 | 2;
}

export function worstOf(levels: readonly Level[]): Level {
  return levels.reduce<Level>((worst, l) => (RANK[l] > RANK[worst] ? l : worst), 'ok');
}

const over = (ageSeconds: number | null, t: Threshold) => ageSeconds !== null && ageSeconds * 1000 >= t.ms;
const beyond = (t: Threshold) => `${formatMs(t.ms)} (${t.from})`;

/** One rule's outcome: the level and, when not ok, why. */
type Verdict = [Level, string?];

function judgeRow(row: SyncStatusRow, t: Thresholds): Verdict {
  const n = t.failuresInARow;
  const inARow = row.failuresInARow ?? 0;
  switch (row.check) {
    case 'refresh':
      if (row.since === null) return ['critical', 'no refresh has succeeded'];
      if (over(row.ageSeconds, t.refreshCritical))
        return ['critical', `the last success is older than ${beyond(t.refreshCritical)}`];
      if (inARow >= n.count) return ['critical', `${inARow} refreshes failed in a row (${n.count}: ${n.from})`];
      if (over(row.ageSeconds, t.refreshWarning))
        return ['warning', `the last success is older than ${beyond(t.refreshWarning)}`];
      if (inARow >= 1) return ['warning', 'the latest refresh failed'];
      return ['ok'];
    case 'scans':
      if (inARow >= n.count) return ['critical', `a read failed ${inARow} times in a row (${n.count}: ${n.from})`];
      if (row.items > 0) return ['warning', `${row.items === 1 ? 'a last read' : `${row.items} last reads`} failed`];
      return ['ok'];
    case 'deletions':
      if (row.items > 0 && over(row.ageSeconds, t.deletionsWarning))
        return ['warning', `a deferred deletion has waited longer than ${beyond(t.deletionsWarning)}`];
      return ['ok'];
    case 'transactions':
      if (over(row.ageSeconds, t.txCritical))
        return ['critical', `a transaction has waited longer than ${beyond(t.txCritical)}`];
      if (over(row.ageSeconds, t.txWarning))
        return ['warning', `a transaction has waited longer than ${beyond(t.txWarning)}`];
      if (inARow >= n.count) return ['warning', `a step failed ${inARow} times in a row (${n.count}: ${n.from})`];
      return ['ok'];
    case 'webhooks':
      if (row.items > 0)
        return ['warning', `${row.items === 1 ? 'a webhook is' : `${row.items} webhooks are`} failing`];
      return ['ok'];
    case 'pdfs':
      if (over(row.ageSeconds, t.pdfOverdue))
        return ['warning', `a PDF has been due longer than ${beyond(t.pdfOverdue)} without an archive run taking it`];
      return ['ok'];
    default:
      // A check of a newer warehouse than this ddsync: as the view judged it.
      return row.viewLevel === 'ok' ? ['ok'] : [row.viewLevel, 'as bi_sync_status judged it'];
  }
}

function result(row: SyncStatusRow, [level, reason]: Verdict): CheckResult {
  return {
    check: row.check,
    level,
    source: 'warehouse',
    message: row.message,
    ...(reason ? { reason } : {}),
    since: row.since,
    ageSeconds: row.ageSeconds,
    items: row.items,
    failing: row.failing,
    failuresInARow: row.failuresInARow,
    oldest: row.oldest,
  };
}

/** The checks of bi_sync_status, judged with `t`. */
export function judgeWarehouse(rows: readonly SyncStatusRow[], t: Thresholds): CheckResult[] {
  return rows.map((row) => result(row, judgeRow(row, t)));
}

/** What reconciling would change, in words: `create main`, `patch main (url)`. */
function describeAction(a: WebhookAction): string {
  switch (a.kind) {
    case 'create':
      return `${a.name} is not registered`;
    case 'patch':
      return `${a.name} differs (${a.changes.join(', ')})`;
    case 'recreate':
      return `${a.name} differs (${a.changes.join(', ')})`;
    case 'delete':
      return `${a.id} of ${a.name}: ${a.reason}`;
  }
}

export interface WebhookRecord {
  desired: readonly DesiredWebhook[];
  recorded: readonly RecordedWebhook[];
  pulledAgoSeconds: number | null;
}

/**
 * The webhooks check with what only the configuration knows: drift between DDSYNC_WEBHOOKS and ddsync's
 * webhooks as last pulled (what reconciling would change), and a record too old to trust.
 */
export function withWebhookDrift(check: CheckResult, record: WebhookRecord, t: Thresholds): CheckResult {
  const drift = planWebhooks(record.desired, record.recorded).map(describeAction);
  const problems: string[] = [];
  const facts: string[] = [check.message];
  if (drift.length > 0) {
    facts.push(`as last pulled, DDSYNC_WEBHOOKS differs from the service: ${drift.join('; ')}`);
    problems.push('drift from DDSYNC_WEBHOOKS (the webhooks schedule reconciles it; `ddsync webhooks reconcile` now)');
  }
  if (
    record.desired.length > 0 &&
    record.pulledAgoSeconds !== null &&
    record.pulledAgoSeconds * 1000 >= t.webhooksStale.ms
  )
    problems.push(`not pulled for longer than ${beyond(t.webhooksStale)}: is the ddsync-webhooks schedule running?`);
  if (problems.length === 0) return check;
  return {
    ...check,
    level: worstOf([check.level, 'warning']),
    message: facts.join('; '),
    reason: [check.reason, ...problems].filter(Boolean).join('; '),
    items: (check.items ?? 0) + drift.length,
  };
}

/** ddsync's schedules (paused, missing, differing from the configuration) and the workers polling. */
export function judgeTemporal(facts: TemporalFacts): CheckResult[] {
  const problems: string[] = [];
  const shown: string[] = [];
  for (const s of facts.schedules) {
    if (!s.wanted) {
      problems.push(`${s.id} is no longer configured but still there (\`ddsync schedule apply\` deletes it)`);
      continue;
    }
    if (!s.found) {
      problems.push(`${s.id} is missing (\`ddsync schedule apply\` creates it)`);
      continue;
    }
    if (s.paused) problems.push(`${s.id} is paused${s.note ? ` (${s.note})` : ''}`);
    if (s.differences.length > 0)
      problems.push(`${s.id} differs from the configuration (${s.differences.join(', ')}): \`ddsync schedule apply\``);
    shown.push(
      `${s.id} every ${s.intervals.join(', ') || '(no interval)'}, ${s.paused ? 'paused' : `next ${s.nextActionAt?.toISOString() ?? 'none'}`}`,
    );
  }
  const pausedSince = facts.schedules
    .filter((s) => s.paused && s.changedAt)
    .map((s) => s.changedAt!)
    .sort((a, b) => a.getTime() - b.getTime())[0];
  const schedules: CheckResult = {
    check: 'schedules',
    level: problems.length > 0 ? 'warning' : 'ok',
    source: 'temporal',
    message: [...shown, ...problems].join('; ') || 'none configured',
    ...(problems.length > 0 ? { reason: problems.join('; ') } : {}),
    since: pausedSince ?? null,
    ageSeconds: null,
    items: facts.schedules.length,
    failing: problems.length,
    failuresInARow: null,
    oldest: null,
  };
  const workers: CheckResult = {
    check: 'workers',
    level: facts.pollers > 0 ? 'ok' : 'critical',
    source: 'temporal',
    message:
      facts.pollers > 0
        ? `${facts.pollers} ${facts.pollers === 1 ? 'worker polls' : 'workers poll'} task queue ${facts.taskQueue} (last poll ${facts.lastPollAt?.toISOString() ?? 'unknown'})`
        : `no worker has polled task queue ${facts.taskQueue} lately`,
    ...(facts.pollers > 0
      ? {}
      : { reason: 'nothing runs: no refresh, no submission, no upkeep (start `ddsync worker`)' }),
    since: facts.lastPollAt ?? null,
    ageSeconds: null,
    items: facts.pollers,
    failing: null,
    failuresInARow: null,
    oldest: null,
  };
  return [schedules, workers];
}

/** The figures of a check that has none (what could not be seen, a refused write). */
const NO_FIGURES = {
  since: null,
  ageSeconds: null,
  items: null,
  failing: null,
  failuresInARow: null,
  oldest: null,
} as const;

/**
 * A part that could not be seen: the warehouse unreadable is critical (freshness unknown is not
 * fresh); Temporal unreachable is a warning (the warehouse still says whether the data is fresh).
 */
export function unseen(part: 'warehouse' | 'temporal', problem: string): CheckResult {
  const missed =
    part === 'warehouse'
      ? 'refresh, scans, deletions, transactions, webhooks and pdfs not checked'
      : 'schedules and workers not checked';
  return {
    check: part,
    level: part === 'warehouse' ? 'critical' : 'warning',
    source: part,
    message: `${problem.replace(/\.$/, '')} (${missed})`,
    reason: `could not see ${part === 'warehouse' ? 'the warehouse' : 'Temporal'}`,
    ...NO_FIGURES,
  };
}

/** What an operator does about each kind of refused write: the work itself waits and ends as it would have. */
const WHILE_REFUSED: Record<WriteRefusal, string> = {
  disk_full:
    'refresh pages, submission steps and webhook deliveries wait until it can write, then run again: free or grow that disk (a refresh cut short left dead rows: VACUUM reclaims them)',
  read_only:
    "ddsync's work waits until it is writable again: promote the primary or reset default_transaction_read_only",
  io_error: "ddsync's work waits and runs again: look at the server's log and its disk",
  other: "ddsync's work waits and runs again: look at the server's log",
};

/** The warehouse refusing writes (the write probe), as a critical check; nothing when it writes or could not be probed. */
export function judgeWrites(writes: WriteProbe): CheckResult | undefined {
  if (writes.outcome !== 'refused') return undefined;
  return {
    check: 'warehouse',
    level: 'critical',
    source: 'warehouse',
    message: `the warehouse cannot write: ${writes.reason}`,
    reason: WHILE_REFUSED[writes.kind],
    ...NO_FIGURES,
  };
}

/** Which setting the warehouse was read with. */
export type ReaderSetting = 'DDSYNC_READER_URL' | 'DATABASE_URL';

export type WarehouseSight =
  | { seen: true; where: string; via: ReaderSetting; status: WarehouseStatus; writes: WriteProbe }
  | { seen: false; where: string; via: ReaderSetting; problem: string };

export type TemporalSight =
  | { seen: true; where: string; facts: TemporalFacts }
  | { seen: false; where: string; problem: string };

export interface StatusReport {
  level: Level;
  exitCode: 0 | 1 | 2;
  checkedAt: Date;
  checks: CheckResult[];
  warehouse:
    | {
        seen: true;
        where: string;
        via: ReaderSetting;
        role: string;
        inReaderRole: boolean;
        readOnly: true;
        writes: WriteProbe;
      }
    | { seen: false; where: string; via: ReaderSetting; problem: string };
  temporal: { seen: true; where: string; taskQueue: string } | { seen: false; where: string; problem: string };
  thresholds: Thresholds;
}

/** The whole answer: every check judged, what could not be seen as checks of its own, the worst level. */
export function assess(
  warehouse: WarehouseSight,
  temporal: TemporalSight,
  desiredWebhooks: readonly DesiredWebhook[],
  t: Thresholds,
  checkedAt: Date,
): StatusReport {
  const checks: CheckResult[] = [];
  if (warehouse.seen) {
    const s = warehouse.status;
    const refused = judgeWrites(warehouse.writes);
    if (refused) checks.push(refused);
    for (const check of judgeWarehouse(s.rows, t))
      checks.push(
        check.check === 'webhooks'
          ? withWebhookDrift(
              check,
              { desired: desiredWebhooks, recorded: s.webhooks, pulledAgoSeconds: s.webhooksPulledAgoSeconds },
              t,
            )
          : check,
      );
  } else checks.push(unseen('warehouse', warehouse.problem));
  if (temporal.seen) checks.push(...judgeTemporal(temporal.facts));
  else checks.push(unseen('temporal', temporal.problem));
  const level = worstOf(checks.map((c) => c.level));
  return {
    level,
    exitCode: exitCodeOf(level),
    checkedAt,
    checks,
    warehouse: warehouse.seen
      ? {
          seen: true,
          where: warehouse.where,
          via: warehouse.via,
          role: warehouse.status.role,
          inReaderRole: warehouse.status.inReaderRole,
          readOnly: true,
          writes: warehouse.writes,
        }
      : { seen: false, where: warehouse.where, via: warehouse.via, problem: warehouse.problem },
    temporal: temporal.seen
      ? { seen: true, where: temporal.where, taskQueue: temporal.facts.taskQueue }
      : { seen: false, where: temporal.where, problem: temporal.problem },
    thresholds: t,
  };
}
