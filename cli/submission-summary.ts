import type { BatchReport } from '../warehouse/submission/batch-report.ts';
import { ENDED_STATES } from '../warehouse/submission/batch-report.ts';
import type { IntakeSummary } from '../warehouse/submission/intake.ts';
import { printable } from '../domain/submission/printable.ts';
import { fmt, type Progress } from './progress.ts';

/**
 * What people read about a submission: the file's rows, then where its transactions stand. Text that
 * came from a file (keys, fields, the file's name) is printed through `printable`: the intake already
 * escaped what it kept of refused rows, and an accepted key may still hold bidirectional controls.
 */

export function formatIntake(s: IntakeSummary): string {
  const lines = [
    `${fmt(s.rows)} rows read: ${fmt(s.accepted)} accepted, ${fmt(s.invalid)} invalid, ${fmt(s.duplicates)} already submitted earlier (not sent again)`,
  ];
  for (const r of s.samples) {
    lines.push(
      printable(
        `  line ${r.line}${r.key ? ` (${r.key})` : ''}: ${r.errors.map((e) => `${e.field}: ${e.rule}`).join('; ')}`,
      ),
    );
  }
  if (s.reportPath) lines.push(`  every row not sent, with its errors: ${printable(s.reportPath)}`);
  return lines.join('\n');
}

export function endedCount(r: BatchReport): number {
  return ENDED_STATES.reduce((n, state) => n + (r.states[state] ?? 0), 0);
}

/** Where a batch's transactions stand: ended of accepted, then per state. */
export function batchProgress(r: BatchReport): Progress {
  const done = endedCount(r);
  const n = (state: string) => fmt(r.states[state] ?? 0);
  const inFlight = (r.states['created'] ?? 0) + (r.states['submitted'] ?? 0);
  const retrying = retryingCount(r);
  const text =
    `${fmt(done)}/${fmt(r.accepted)} ended  ` +
    `pending ${n('pending')}  in progress ${fmt(inFlight)}  available ${n('available')}  error ${n('error')}  failed ${n('failed')}` +
    `${r.states['timed_out'] ? `  timed out ${n('timed_out')}` : ''}${r.states['cancelled'] ? `  cancelled ${n('cancelled')}` : ''}` +
    `${retrying > 0 ? `  retrying ${fmt(retrying)}` : ''}${r.batchRetrying ? '  (the batch is retrying a step)' : ''}`;
  return { fraction: r.accepted > 0 ? done / r.accepted : 1, text };
}

/** Transactions whose current step keeps failing. */
export function retryingCount(r: BatchReport): number {
  return r.retrying.reduce((n, p) => n + p.transactions, 0);
}

/** Why a batch without an accepted row sends nothing: `nothing to send: 2 rows already submitted in batch …`. */
export function nothingToSend(r: BatchReport): string {
  const rows = (n: number) => `${fmt(n)} row${n === 1 ? '' : 's'}`;
  const why = r.duplicateOf.map(
    (d, i) => `${i === 0 ? rows(d.rows) : fmt(d.rows)} already submitted in batch ${d.batchId}`,
  );
  if (r.invalid > 0) why.unshift(`${rows(r.invalid)} invalid`);
  return `nothing to send: ${why.length > 0 ? why.join(', ') : 'the file has no rows'}`;
}

/** What is being retried, one line per error, and what to do about it. */
export function retryingLines(r: BatchReport): string[] {
  const at = (d: Date) => d.toISOString().replace(/\.\d+Z$/, 'Z');
  const lines = r.retrying.map(
    (p) =>
      `retrying: ${fmt(p.transactions)} × ${printable(p.reason)} (e.g. ${printable(p.keys.join(', '))}; ${fmt(p.attempts)} failed attempt${p.attempts === 1 ? '' : 's'} in a row, the last at ${at(p.lastFailedAt)})`,
  );
  if (r.batchRetrying)
    lines.push(
      `retrying the batch's own step: ${r.batchRetrying.reason} (${fmt(r.batchRetrying.attempts)} failed attempts in a row, the last at ${at(r.batchRetrying.lastFailedAt)})`,
    );
  if (lines.length > 0)
    lines.push(
      'retried until it succeeds (the worker logs the error in full at attempts 1, 2, 4, 8, …); once its cause is fixed, the batch goes on by itself',
    );
  return lines;
}

export function formatBatch(r: BatchReport): string {
  const lines = [
    `batch ${r.batchId} (${printable(r.source)}) ${r.status}${r.finishedAt ? ` at ${r.finishedAt.toISOString()}` : ''}`,
    `  rows ${fmt(r.rows)}: ${fmt(r.accepted)} accepted, ${fmt(r.invalid)} invalid, ${fmt(r.duplicates)} already submitted earlier`,
    r.accepted === 0 ? `  ${nothingToSend(r)}` : `  ${batchProgress(r).text}`,
  ];
  for (const p of r.problems)
    lines.push(`  ${p.state}: ${fmt(p.transactions)} × ${printable(p.reason)} (e.g. ${printable(p.keys.join(', '))})`);
  for (const line of retryingLines(r)) lines.push(`  ${line}`);
  for (const line of readinessLines(r)) lines.push(`  ${line}`);
  return lines.join('\n');
}

/** The readiness gate's part: what it said of its data, what it refused, what went out with warnings. */
function readinessLines(r: BatchReport): string[] {
  const g = r.readiness;
  if (!g.policy || g.policy === 'off') return [];
  const lines: string[] = [];
  if (g.note) lines.push(`readiness gate: ${printable(g.note)}`);
  if (g.refused > 0) lines.push(`readiness gate (${g.policy}): ${fmt(g.refused)} row(s) refused (see the report file)`);
  if (g.warned > 0) lines.push(`readiness gate (${g.policy}): ${fmt(g.warned)} transaction(s) sent with warnings:`);
  for (const w of g.warnings)
    lines.push(`  ${w.code}: ${fmt(w.transactions)} (e.g. ${printable(w.keys.join(', '))}): ${printable(w.example)}`);
  return lines;
}

/** Non-zero when any row was refused or any transaction ended without a DDS reference. */
export function batchExitCode(r: BatchReport): number {
  const bad =
    (r.states['error'] ?? 0) + (r.states['failed'] ?? 0) + (r.states['timed_out'] ?? 0) + (r.states['withdrawn'] ?? 0);
  return r.invalid > 0 || bad > 0 ? 1 : 0;
}

/** What the readiness gate did, in a line (nothing when it was off or found nothing). */
export function readinessLine(intake: IntakeSummary): string | null {
  const r = intake.readiness;
  if (!r || r.policy === 'off' || (r.refused === 0 && r.warned === 0)) return null;
  const parts = [
    r.refused > 0
      ? `${r.refused} row(s) refused (plots not ready or an EU limit passed; in the report, resubmittable once fixed)`
      : '',
    r.warned > 0 ? `${r.warned} row(s) sent with warnings (ddsync submissions status ${intake.batchId})` : '',
  ].filter(Boolean);
  return `readiness gate (${r.policy}): ${parts.join('; ')}`;
}
