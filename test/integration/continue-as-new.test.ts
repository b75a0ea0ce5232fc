import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { randomUUID } from 'node:crypto';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { startWorkerHarness, type WorkerHarness } from '../support/worker-harness.ts';
import { simulatorPlotFacts, warehousePlotFacts } from '../support/warehouse-facts.ts';
import { shipmentRow, writeShipments } from '../support/shipments.ts';
import { refreshProgressQuery, refreshWorkflowId } from '../../workflows/refresh-warehouse.ts';
import { supplierPlotsWorkflowId } from '../../workflows/sync-supplier-plots.ts';
import { bulkSubmitWorkflowId } from '../../workflows/bulk-submit.ts';

type HistoryEvent = NonNullable<Awaited<ReturnType<WorkflowHandle['fetchHistory']>>['events']>[number];

/** Keys unique to this run: the Temporal server is shared by the run's files. */
const RUN = randomUUID().slice(0, 8);

/** Every run of a workflow id, first to last: how each ended and the children it started. */
async function runsOf(
  client: Client,
  workflowId: string,
): Promise<Array<{ ended: string; childrenStarted: string[]; events: number; activities: string[] }>> {
  const last = await client.workflow.getHandle(workflowId).describe();
  const runs: Array<{ ended: string; childrenStarted: string[]; events: number; activities: string[] }> = [];
  let runId: string | undefined = last.raw.workflowExecutionInfo!.firstRunId!;
  while (runId) {
    const events: HistoryEvent[] = (await client.workflow.getHandle(workflowId, runId).fetchHistory()).events ?? [];
    const end: HistoryEvent = events.at(-1)!;
    runs.push({
      ended: end.workflowExecutionContinuedAsNewEventAttributes
        ? 'continued as new'
        : end.workflowExecutionCompletedEventAttributes
          ? 'completed'
          : `event ${String(end.eventType)}`,
      childrenStarted: events.flatMap((e) => e.startChildWorkflowExecutionInitiatedEventAttributes?.workflowId ?? []),
      events: events.length,
      activities: events.flatMap((e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? []),
    });
    runId = end.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
  }
  return runs;
}

describe('long-running workflows continue as new and carry on where they were', () => {
  let h: WorkerHarness;
  beforeAll(async () => {
    h = await startWorkerHarness(
      {
        seed: 81,
        timeScale: 0.001,
        transactionErrorRatio: 0,
        layout: { ownPlots: 2, suppliers: [{ plots: 30 }, { plots: 20 }, { plots: 0 }, { plots: 40 }, { plots: 10 }] },
      },
      'can',
    );
  });
  afterAll(() => h?.close());

  it('a refresh starts `childrenPerRun` supplier children per run, then continues as new with the rest', async () => {
    const runId = randomUUID();
    const summary = await h.refresh({ runId, childrenPerRun: 2, supplierConcurrency: 2 });
    expect(summary.status).toBe('succeeded');
    expect(await warehousePlotFacts(h.db)).toEqual(simulatorPlotFacts(h.sim));

    const runs = await runsOf(h.temporal.client, refreshWorkflowId(runId));
    expect(runs.map((r) => [r.ended, r.childrenStarted.length])).toEqual([
      ['continued as new', 2],
      ['continued as new', 2],
      ['completed', 1],
    ]);
    // Each supplier once across the three runs.
    const suppliers = h.sim.control.suppliers().map((s) => supplierPlotsWorkflowId(runId, s.id));
    expect(runs.flatMap((r) => r.childrenStarted).sort()).toEqual([...suppliers].sort());
    const progress = await h.temporal.client.workflow.getHandle(refreshWorkflowId(runId)).query(refreshProgressQuery);
    expect(progress).toMatchObject({ phase: 'done', suppliersTotal: 5, suppliersDone: 5, suppliersFailed: 0 });
  });

  it('a batch of many keys continues as new past its history limit, sending each key once and following all to the end', async () => {
    const supplier = h.sim.control.suppliers()[0]!.id;
    const keys = Array.from({ length: 60 }, (_, i) => `can-${RUN}-${i}`);
    const historyLimit = 40;
    const { intake, progress } = await h.submit(writeShipments(keys.map((k) => shipmentRow(k, supplier))), {
      concurrency: 4,
      chunkLines: 5,
      chunksInFlight: 2,
      historyLimit,
    });
    expect(progress).toMatchObject({ started: 60, available: 60, pending: 0, failed: 0, allStarted: true });

    const runs = await runsOf(h.temporal.client, bulkSubmitWorkflowId(intake.batchId));
    expect(runs.length).toBeGreaterThan(2);
    expect(runs.slice(0, -1).every((r) => r.ended === 'continued as new')).toBe(true);
    expect(runs.at(-1)!.ended).toBe('completed');
    // A run stops starting chunks at its limit and ends once those running are done: its history stays near it.
    for (const r of runs) expect(r.events).toBeLessThan(historyLimit + 40);
    // Twelve chunks of five lines over the runs (a run after the last chunk only follows), no child workflows.
    expect(runs.flatMap((r) => r.activities.filter((a) => a === 'sendTransactions')).length).toBe(12);
    expect(runs.filter((r) => r.activities.includes('sendTransactions')).length).toBeGreaterThan(1);
    expect(runs.flatMap((r) => r.childrenStarted)).toEqual([]);
    const counts = h.sim.control.transactionCountsByCustomId();
    expect(keys.map((k) => counts[k])).toEqual(keys.map(() => 1));
  });
});
