import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { readFileSync } from 'node:fs';
import { sql } from 'kysely';
import { startWorkerHarness, FAST_TIMING, type WorkerHarness } from '../support/worker-harness.ts';
import { shipmentRow, writeShipments } from '../support/shipments.ts';
import { takeInShipments } from '../../warehouse/submission/intake.ts';
import { openReadinessGate } from '../../warehouse/submission/readiness-gate.ts';
import type { ReadinessPolicy } from '../../domain/submission/readiness-rules.ts';
import { batchReport } from '../../warehouse/submission/batch-report.ts';
import { formatBatch } from '../../cli/submission-summary.ts';
import { submitBatch, submitBatchWorkflowId } from '../../workflows/submit-batch.ts';

const RUN = Math.random().toString(36).slice(2, 8);
const HOUR = 3_600_000;

/**
 * The readiness gate of `ddsync submit` on the simulator's odd records: a row whose component brings
 * the deforested plot is refused under block (counted, reported, nothing sent), sent with a warning
 * under warn, sent without a look under off, and the same file passes once the plot is fixed at the
 * source and the warehouse refreshed.
 */
describe('the readiness gate at ddsync submit', () => {
  let h: WorkerHarness;
  let deforested: string;
  let supplier: string;
  let readyPlot: string;
  beforeAll(async () => {
    h = await startWorkerHarness(
      { seed: 23, suppliers: 3, plots: 120, timeScale: 0.001, transactionErrorRatio: 0 },
      'gate',
    );
  });
  afterAll(() => h?.close());

  const submitWith = async (path: string, policy: ReadinessPolicy, maxDataAgeMs = 24 * HOUR) => {
    const gate = await openReadinessGate(h.db, { policy, maxDataAgeMs });
    const intake = await takeInShipments(h.db, path, `${path}.${policy}.report.ndjson`, gate);
    await h.startWorker();
    if (intake.accepted > 0)
      await h.temporal.client.workflow.execute(submitBatch, {
        taskQueue: h.temporal.taskQueue,
        workflowId: submitBatchWorkflowId(intake.batchId),
        args: [{ batchId: intake.batchId, concurrency: 10, timing: FAST_TIMING }],
      });
    return { intake, gate };
  };
  const sentCount = (key: string) => h.sim.control.transactionCountsByCustomId()[key] ?? 0;
  const rowOf = (key: string, plotIds: string[]) =>
    shipmentRow(key, supplier, {
      components: [{ hsn: '18010000', quantity: 5, unit: 'TNE', supplierBusinessId: supplier, plotIds }],
    });

  it('says plainly that a warehouse never refreshed cannot be vouched for, and refuses nothing on no evidence', async () => {
    const someSupplier = h.sim.control.suppliers()[0]!.id;
    const key = `gate-never-${RUN}`;
    const { intake, gate } = await submitWith(writeShipments([shipmentRow(key, someSupplier)]), 'block');
    expect(gate.note).toMatch(/never been refreshed.*cannot vouch/);
    expect(intake).toMatchObject({ accepted: 1, invalid: 0, readiness: { policy: 'block', refused: 0, warned: 1 } });
    const { rows } = await sql<{ codes: string[]; readiness_note: string }>`
      select codes, readiness_note from bi_transaction_readiness_warnings where key = ${key}`.execute(h.db);
    expect(rows).toEqual([{ codes: ['data_never_refreshed'], readiness_note: gate.note }]);
  });

  it('refuses under block a row bringing a plot not ready: counted, in the report, nothing sent', async () => {
    expect((await h.refresh()).status).toBe('succeeded');
    deforested = h.sim.control.oddRecords().deforested!;
    const links = await sql<{ supplier_id: string }>`
      select supplier_id from plot_suppliers where plot_id = ${deforested} and deleted_at is null order by 1`.execute(
      h.db,
    );
    supplier = links.rows[0]!.supplier_id;
    const ready = await sql<{ plot_id: string }>`
      select r.plot_id from bi_eudr_plot_readiness r join plot_suppliers ps on ps.plot_id = r.plot_id and ps.deleted_at is null
      where ps.supplier_id = ${supplier} and r.ready order by 1 limit 1`.execute(h.db);
    readyPlot = ready.rows[0]!.plot_id;
    const codes = await sql<{ blocking_codes: string[] }>`
      select blocking_codes from bi_eudr_plot_readiness where plot_id = ${deforested}`.execute(h.db);
    expect(codes.rows[0]!.blocking_codes).toContain('deforestation_detected');

    const bad = `gate-bad-${RUN}`;
    const good = `gate-good-${RUN}`;
    const path = writeShipments([rowOf(bad, [readyPlot, deforested]), rowOf(good, [readyPlot])]);
    const { intake, gate } = await submitWith(path, 'block');
    expect(gate.note).toBeNull();
    expect(intake).toMatchObject({ rows: 2, accepted: 1, invalid: 1, readiness: { refused: 1, warned: 0 } });
    const report = readFileSync(`${path}.block.report.ndjson`, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(report).toEqual([
      {
        line: 1,
        key: bad,
        status: 'invalid',
        errors: [
          {
            field: 'components[0].supplierBusinessId',
            rule: expect.stringMatching(
              new RegExp(
                `^readiness gate: supplier ${supplier} brings 1 plot of 2 not ready for a statement: ${deforested} \\(.*deforestation_detected.*\\)$`,
              ),
            ),
          },
        ],
      },
    ]);
    expect(sentCount(bad)).toBe(0);
    expect(sentCount(good)).toBe(1);
    const status = formatBatch((await batchReport(h.db, intake.batchId))!);
    expect(status).toContain('readiness gate (block): 1 row(s) refused (see the report file)');
  });

  it('sends it under warn and records the warning, shown by submissions status and the view; off does not look', async () => {
    const key = `gate-warn-${RUN}`;
    const { intake } = await submitWith(writeShipments([rowOf(key, [readyPlot, deforested])]), 'warn');
    expect(intake).toMatchObject({ accepted: 1, invalid: 0, readiness: { policy: 'warn', refused: 0, warned: 1 } });
    expect(sentCount(key)).toBe(1);
    const { rows } = await sql<{ codes: string[]; state: string; details: Array<{ field: string; rule: string }> }>`
      select codes, state, details from bi_transaction_readiness_warnings where key = ${key}`.execute(h.db);
    expect(rows[0]!.codes).toEqual(['plots_not_ready']);
    expect(rows[0]!.details[0]!.rule).toContain(deforested);
    const status = formatBatch((await batchReport(h.db, intake.batchId))!);
    expect(status).toContain('readiness gate (warn): 1 transaction(s) sent with warnings:');
    expect(status).toMatch(new RegExp(`plots_not_ready: 1 \\(e\\.g\\. ${key}\\): .*${deforested}`));

    const off = `gate-off-${RUN}`;
    const offRun = await submitWith(writeShipments([rowOf(off, [deforested])]), 'off');
    expect(offRun.intake).toMatchObject({ accepted: 1, readiness: { policy: 'off', refused: 0, warned: 0 } });
    expect(sentCount(off)).toBe(1);
    const none = await sql`select 1 from bi_transaction_readiness_warnings where key = ${off}`.execute(h.db);
    expect(none.rows).toEqual([]);
  });

  it('says plainly that data older than the threshold is stale, and records it with the row', async () => {
    const key = `gate-stale-${RUN}`;
    const { intake, gate } = await submitWith(writeShipments([rowOf(key, [readyPlot])]), 'block', 1);
    expect(gate.note).toMatch(/last refresh finished .* ago .*more than DDSYNC_SUBMIT_MAX_DATA_AGE/);
    expect(intake).toMatchObject({ accepted: 1, readiness: { warned: 1 } });
    const { rows } = await sql<{ codes: string[] }>`
      select codes from bi_transaction_readiness_warnings where key = ${key}`.execute(h.db);
    expect(rows).toEqual([{ codes: ['data_stale'] }]);
  });

  it('passes the same file once the plot is fixed at the source and the warehouse refreshed: a refused key is sent again', async () => {
    const bad = `gate-bad-${RUN}`;
    h.sim.control.addAnalysis(deforested, { type: 'EUFOROBS', status: 'succeeded', deforestedArea: 0 });
    expect((await h.refresh()).status).toBe('succeeded');
    const view = await sql<{ ready: boolean; blocking_codes: string[] }>`
      select ready, blocking_codes from bi_eudr_plot_readiness where plot_id = ${deforested}`.execute(h.db);
    expect(view.rows[0]).toEqual({ ready: true, blocking_codes: [] });
    const path = writeShipments([rowOf(bad, [readyPlot, deforested])]);
    const { intake } = await submitWith(path, 'block');
    expect(intake).toMatchObject({ accepted: 1, invalid: 0, duplicates: 0, readiness: { refused: 0, warned: 0 } });
    expect(sentCount(bad)).toBe(1);
  });
});
