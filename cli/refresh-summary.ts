import type { RunSummary } from '../warehouse/refresh/sweep.ts';
import { fmt } from './progress.ts';

/** The end-of-refresh report for people: outcome, volume, requests, and rows per table. */
export function formatRunSummary(s: RunSummary): string {
  const lines = [
    `refresh ${s.runId} ${s.status} in ${s.seconds} s`,
    `  suppliers ${fmt(s.suppliers)}${s.suppliersFailed ? ` (${s.suppliersFailed} failed)` : ''}, pages ${fmt(s.pages)}, plots read ${fmt(s.plotsSeen)}`,
    `  requests ${fmt(s.requests)}, retried ${fmt(s.retries)}, rate-limited (429) ${fmt(s.rateLimited)}`,
    `  rows written ${fmt(s.rowsWritten)}${s.rowsWritten === 0 ? ' (nothing changed)' : ''}`,
  ];
  if (s.deletionsConfirmed > 0 || s.deletionsDeferred > 0 || s.verifyPages > 0) {
    lines.push(
      `  deletions: ${fmt(s.deletionsConfirmed)} confirmed gone, ${fmt(s.deletionsDeferred)} deferred (missed but not proven gone: kept until the next refresh); ${fmt(s.verifyPages)} page(s) read twice to check`,
    );
  }
  const tables = Object.entries(s.counts);
  if (tables.length > 0) {
    lines.push(
      `  ${'table'.padEnd(22)}${'inserted'.padStart(10)}${'updated'.padStart(10)}${'unchanged'.padStart(11)}${'deleted'.padStart(9)}`,
    );
    for (const [table, c] of tables) {
      lines.push(
        `  ${table.padEnd(22)}${fmt(c.inserted).padStart(10)}${fmt(c.updated).padStart(10)}${fmt(c.unchanged).padStart(11)}${fmt(c.deleted).padStart(9)}`,
      );
    }
  }
  if (s.issues > 0) {
    // Older workers' summaries have no valuesReplaced.
    const replaced =
      s.valuesReplaced > 0
        ? ` (${fmt(s.valuesReplaced)} value(s) stored with U+FFFD for text Postgres cannot hold)`
        : '';
    lines.push(`  ${fmt(s.issues)} record issue(s)${replaced}: see sync_issues where run_id = '${s.runId}'`);
  }
  if (s.error) lines.push(`  ${s.status === 'failed' ? 'error' : 'note'}: ${s.error}`);
  return lines.join('\n');
}
