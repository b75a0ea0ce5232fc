import { formatMs } from '../../infra/schedules.ts';
import type { StatusReport } from './judge.ts';
import type { WriteProbe } from '../../warehouse/write-probe.ts';
import { thresholdsShown } from './thresholds.ts';

/** `ddsync status` as a screen: the overall level, one line per check (and why, when not ok), what was read how. Pure. */
export function formatStatus(r: StatusReport): string {
  const counts = (['critical', 'warning', 'ok'] as const)
    .map((level) => [level, r.checks.filter((c) => c.level === level).length] as const)
    .filter(([, n]) => n > 0)
    .map(([level, n]) => `${n} ${level}`);
  const width = Math.max(...r.checks.map((c) => c.check.length));
  const lines = [`ddsync status: ${r.level.toUpperCase()} (${counts.join(', ')}) at ${r.checkedAt.toISOString()}`];
  for (const c of r.checks) {
    lines.push(`  ${c.level.padEnd(8)}  ${c.check.padEnd(width)}  ${c.message}`);
    if (c.reason) lines.push(`  ${''.padEnd(8)}  ${''.padEnd(width)}  why ${c.level}: ${c.reason}`);
  }
  const w = r.warehouse;
  const t = r.thresholds;
  lines.push(
    w.seen
      ? `read the warehouse ${w.where} as ${w.role}${w.inReaderRole ? ' (in ddsync_reader)' : ''} with ${w.via}, in a read-only transaction`
      : `the warehouse ${w.where} (${w.via}) could not be read`,
    ...(w.seen ? [writesLine(w.writes)] : []),
    r.temporal.seen
      ? `asked Temporal ${r.temporal.where} about task queue ${r.temporal.taskQueue}`
      : `Temporal ${r.temporal.where} could not be asked`,
    `thresholds: refresh ${formatMs(t.refreshWarning.ms)} / ${formatMs(t.refreshCritical.ms)}, ${t.failuresInARow.count} failures in a row, transactions ${formatMs(t.txWarning.ms)} / ${formatMs(t.txCritical.ms)}, PDFs due ${formatMs(t.pdfOverdue.ms)} (warning / critical)`,
  );
  return `${lines.join('\n')}\n`;
}

/** How writes were probed (warehouse/write-probe.ts): a temporary table, always rolled back. */
function writesLine(writes: WriteProbe): string {
  switch (writes.outcome) {
    case 'writable':
      return `probed writes: a temporary table in tablespace ${writes.tablespaces.join(', ') || '(none found)'} took a row, rolled back`;
    case 'refused':
      return `probed writes: refused (${writes.kind})`;
    case 'unknown':
      return `writes not probed: ${writes.reason}`;
  }
}

/** `ddsync status --json`: one object, times as ISO strings. */
export function statusJson(r: StatusReport): Record<string, unknown> {
  return {
    level: r.level,
    exitCode: r.exitCode,
    checkedAt: r.checkedAt.toISOString(),
    checks: r.checks.map((c) => ({
      check: c.check,
      level: c.level,
      source: c.source,
      message: c.message,
      reason: c.reason ?? null,
      since: c.since?.toISOString() ?? null,
      ageSeconds: c.ageSeconds,
      items: c.items,
      failing: c.failing,
      failuresInARow: c.failuresInARow,
      oldest: c.oldest,
    })),
    warehouse: r.warehouse,
    temporal: r.temporal,
    thresholds: thresholdsShown(r.thresholds),
  };
}
