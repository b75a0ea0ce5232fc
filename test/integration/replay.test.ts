import { describe, it, expect, beforeAll } from 'vitest';
import { readFileSync, readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { Worker } from '@temporalio/worker';
import { installTemporalRuntime } from '../../infra/temporal-connection.ts';
import { createLogger } from '../../platform/logger.ts';
import { workflowBundle } from '../support/temporal.ts';
import { historyFromPlain } from '../replay/history-json.ts';
import type { RecordedHistory } from '../replay/record-histories.ts';

/**
 * Histories recorded from running workflows (test/replay/record-histories.ts) replay on today's
 * workflow code: a change to what a workflow commands, or in which order, would break workflows that
 * are running when a new worker takes them over (patched() is how such a change is made). Temporal's
 * check does not notice a command made one workflow task earlier or later (a window one wider
 * replays): the unit tests of workflows/scheduling/ and domain/paging/ pin down those decisions.
 */
const DIR = resolve(import.meta.dirname, '../replay/histories');
const recorded = (file: string): RecordedHistory[] =>
  JSON.parse(readFileSync(resolve(DIR, file), 'utf8')) as RecordedHistory[];
/** Every recorded file: histories kept from before a re-recording replay too. */
const FILES = readdirSync(DIR)
  .filter((f) => f.endsWith('.json'))
  .sort();

async function replay(histories: RecordedHistory[]): Promise<string[]> {
  const failures: string[] = [];
  const results = Worker.runReplayHistories(
    { workflowBundle: await workflowBundle() },
    histories.map((h) => ({ workflowId: h.workflowId, history: historyFromPlain(h.history) })),
  );
  let replayed = 0;
  for await (const result of results) {
    replayed++;
    if (result.error) failures.push(`${result.workflowId}: ${result.error.message}`);
  }
  expect(replayed).toBe(histories.length);
  return failures;
}

/** The payloads of the markers of a recorded file's histories, decoded, by marker name. */
function markerData(file: string, marker: string, detail: string): unknown[] {
  return recorded(file).flatMap((h) =>
    h.history.events.flatMap((e) => {
      const m = (e as { markerRecordedEventAttributes?: { markerName?: string; details?: Record<string, unknown> } })
        .markerRecordedEventAttributes;
      if (m?.markerName !== marker) return [];
      const data = (m.details?.[detail] as { payloads?: Array<{ data?: { $bytes?: string } }> } | undefined)
        ?.payloads?.[0]?.data?.$bytes;
      return data ? [JSON.parse(Buffer.from(data, 'base64').toString('utf8'))] : [];
    }),
  );
}

/** The activity type of every local activity the histories of a recorded file ran. */
function localActivities(file: string): string[] {
  return markerData(file, 'core_local_activity', 'data').map((d) => (d as { activity_type: string }).activity_type);
}

/** The patch ids a recorded file's histories mark (patched() calls that took the new branch). */
function patches(file: string): string[] {
  return markerData(file, 'core_patch', 'patch-data').map((d) => (d as { id: string }).id);
}

describe('recorded workflow histories replay on the current workflow code', () => {
  beforeAll(() => installTemporalRuntime(createLogger({ level: 'warn', format: 'json' })));

  it('has the scenarios of record-histories.ts', () => {
    // refresh: supplier children in a window of two, pages read ahead, a child continuing as new (8 runs);
    // refresh-page-runs: the same with runs of pages (patched 'supplier-page-runs') (8);
    // bulk-submit: transactions started two at a time, each followed on the poll backoff (6);
    // archive-pdfs: PDFs claimed three at a time, downloaded two at once (1);
    // submit-batch: chunks of three lines two at a time, due transactions read together, continuing as new (3);
    // submit-batch-default: the default settings (10 chunks in flight, patched 'submit-batch-lanes', and
    // the recount of 'submit-batch-recount'), 100 shipments (1).
    expect(
      Object.fromEntries(
        [
          'refresh.json',
          'refresh-page-runs.json',
          'bulk-submit.json',
          'archive-pdfs.json',
          'submit-batch.json',
          'submit-batch-default.json',
        ].map((f) => [f, FILES.includes(f) ? recorded(f).length : 0]),
      ),
    ).toEqual({
      'refresh.json': 8,
      'refresh-page-runs.json': 8,
      'bulk-submit.json': 6,
      'archive-pdfs.json': 1,
      'submit-batch.json': 3,
      'submit-batch-default.json': 1,
    });
  });

  it.each(FILES)('%s', async (file) => {
    expect(await replay(recorded(file))).toEqual([]);
  });

  it('covers both branches of the supplier workflow: runs of pages (patched) and one activity per page before', () => {
    expect(patches('refresh.json')).not.toContain('supplier-page-runs');
    expect(patches('refresh-page-runs.json')).toContain('supplier-page-runs');
    // Five suppliers' pages in runs: fewer page activities than pages (the old history has one per page).
    const pageLoads = (file: string, type: string) => localActivities(file).filter((t) => t === type).length;
    expect(pageLoads('refresh.json', 'loadPlotPage')).toBeGreaterThan(0);
    expect(pageLoads('refresh-page-runs.json', 'loadPlotPage')).toBe(0);
    expect(pageLoads('refresh-page-runs.json', 'loadPlotPages')).toBeGreaterThan(0);
  });

  it('covers both branches of the batch workflow: chunks in lanes (patched) and the 4 chunks of runs started before', () => {
    expect(patches('submit-batch.json')).toEqual([]);
    expect(new Set(patches('submit-batch-default.json'))).toEqual(
      new Set(['submit-batch-lanes', 'submit-batch-recount']),
    );
    // Ten chunks in flight at once (the default: 20 requests as 10 chunks of 2) before the first one ends.
    const events = recorded('submit-batch-default.json')[0]!.history.events as Array<Record<string, unknown>>;
    // The first completion is openSubmissionBatch's: count the chunks scheduled before the next one.
    const completed = events.flatMap((e, i) => (e['activityTaskCompletedEventAttributes'] ? [i] : []));
    const chunksBefore = events
      .slice(0, completed[1])
      .filter(
        (e) =>
          (e['activityTaskScheduledEventAttributes'] as { activityType?: { name?: string } } | undefined)?.activityType
            ?.name === 'sendTransactions',
      );
    expect(chunksBefore).toHaveLength(10);
  });

  it('notices a history whose commands the code no longer makes', async () => {
    const [parent] = recorded('refresh.json');
    // The refresh's first command, the beginRefresh activity, recorded under another name.
    const scheduled = parent!.history.events.find(
      (e) => (e as { activityTaskScheduledEventAttributes?: unknown }).activityTaskScheduledEventAttributes,
    ) as { activityTaskScheduledEventAttributes: { activityType: { name: string } } };
    expect(scheduled.activityTaskScheduledEventAttributes.activityType.name).toBe('beginRefresh');
    scheduled.activityTaskScheduledEventAttributes.activityType.name = 'somethingElse';
    const failures = await replay([parent!]);
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatch(/nondetermin/i);
  });
});
