import { describe, it, expect } from 'vitest';
import { formatRunSummary } from '../../../cli/refresh-summary.ts';
import type { RunSummary } from '../../../warehouse/refresh/sweep.ts';

const summary = (over: Partial<RunSummary>): RunSummary => ({
  runId: 'r-1',
  status: 'succeeded',
  startedAt: '2026-01-01T00:00:00.000Z',
  finishedAt: '2026-01-01T00:00:10.000Z',
  seconds: 10,
  suppliers: 1,
  suppliersFailed: 0,
  pages: 1,
  plotsSeen: 5,
  requests: 3,
  retries: 0,
  rateLimited: 0,
  counts: {},
  rowsWritten: 5,
  deletionsConfirmed: 0,
  deletionsDeferred: 0,
  verifyPages: 0,
  issues: 0,
  valuesReplaced: 0,
  error: null,
  ...over,
});

describe('the refresh summary', () => {
  it('says how many values were stored with U+FFFD among the record issues', () => {
    expect(formatRunSummary(summary({ issues: 3, valuesReplaced: 2 }))).toContain(
      "3 record issue(s) (2 value(s) stored with U+FFFD for text Postgres cannot hold): see sync_issues where run_id = 'r-1'",
    );
    expect(formatRunSummary(summary({ issues: 1 }))).toContain(
      "1 record issue(s): see sync_issues where run_id = 'r-1'",
    );
    expect(formatRunSummary(summary({}))).not.toContain('record issue');
  });
});
