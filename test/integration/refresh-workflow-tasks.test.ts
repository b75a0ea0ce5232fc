import { describe, it, expect, afterAll } from 'vitest';
import { randomUUID } from 'node:crypto';
import { startWorkerHarness, type WorkerHarness } from '../support/worker-harness.ts';
import { supplierPlotsWorkflowId } from '../../workflows/sync-supplier-plots.ts';

/** Seconds of a proto duration, as `describe()` gives timeouts. */
const seconds = (d: { seconds?: unknown; nanos?: number | null } | null | undefined) =>
  Number(d?.seconds ?? 0) + (d?.nanos ?? 0) / 1e9;

describe('supplier workflows hand back their workflow task often', () => {
  let h: WorkerHarness | undefined;
  afterAll(() => h?.close());

  // Page loads are local activities: they keep a workflow task open until the task nears its timeout.
  // At 5 s a task ends within 4 s, under the SDK's 5 s warning (TMPRL1104), in every run of the chain.
  it('runs every supplier workflow with a 5 s workflow task, across continue-as-new', async () => {
    h = await startWorkerHarness({ seed: 21, layout: { ownPlots: 1, suppliers: [{ plots: 1200 }] } }, 'wftask');
    const runId = randomUUID();
    const summary = await h.refresh({ runId, pagesPerRun: 1 });
    expect(summary.status).toBe('succeeded');

    const workflowId = supplierPlotsWorkflowId(runId, h.sim.control.suppliers()[0]!.id);
    const last = await h.temporal.client.workflow.getHandle(workflowId).describe();
    const firstRunId = last.raw.workflowExecutionInfo!.firstRunId!;
    // Three pages of 500 and one per run: the supplier's workflow continued as new.
    expect(firstRunId).not.toBe(last.runId);
    const first = await h.temporal.client.workflow.getHandle(workflowId, firstRunId).describe();
    for (const run of [first, last]) expect(seconds(run.raw.executionConfig!.defaultWorkflowTaskTimeout)).toBe(5);
  });
});
