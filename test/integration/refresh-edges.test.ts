import { describe, it, expect, afterEach } from 'vitest';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { startWorkerHarness, type WorkerHarness } from '../support/worker-harness.ts';
import { simulatorPlotFacts, warehousePlotFacts } from '../support/warehouse-facts.ts';
import { waitUntil } from '../support/wait.ts';
import { refreshWarehouse, refreshWorkflowId } from '../../workflows/refresh-warehouse.ts';
import { plotGroups } from '../support/simulator-plots.ts';

describe('refresh edges', () => {
  let h: WorkerHarness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it('pages suppliers of exactly 500 and 1,000 plots and one with none', async () => {
    h = await startWorkerHarness(
      { seed: 11, layout: { ownPlots: 2, suppliers: [{ plots: 500 }, { plots: 1000 }, { plots: 0 }] } },
      'edges',
    );
    const summary = await h.refresh();
    expect(summary.status).toBe('succeeded');
    expect(await warehousePlotFacts(h.db)).toEqual(simulatorPlotFacts(h.sim));
    const [s500, s1000, none] = h.sim.control.suppliers();
    const scopes = await sql<{ scope: string; pages: number; plots_seen: number; status: string }>`
      select scope, pages, plots_seen::int, status from sync_run_scopes where run_id = ${summary.runId}::uuid and kind = 'supplier'`.execute(
      h.db,
    );
    const by = Object.fromEntries(scopes.rows.map((s) => [s.scope, s]));
    // A full page means "ask again": 500 plots take a second, empty page; 1,000 take three requests.
    expect(by[s500!.id]).toMatchObject({ pages: 2, plots_seen: 500, status: 'succeeded' });
    expect(by[s1000!.id]).toMatchObject({ pages: 3, plots_seen: 1000, status: 'succeeded' });
    expect(by[none!.id]).toMatchObject({ pages: 1, plots_seen: 0, status: 'succeeded' });
    expect(summary.counts['plots']!.inserted).toBe(1502);
  });

  it('stops reading soon after the refresh is cancelled mid-run of pages, and leaves no part running', async () => {
    // One supplier of 14 pages, every request 2 s late (the run reads two at once: 14 s for all): one run
    // of pages would read them all (its page budget is 100). Cancelled once two pages are in, the run's
    // requests are aborted: after the worker has settled everything it ran, far fewer of the supplier's
    // plots than 6,600 were written. (At 300 ms a request, a loaded machine took 1.5 s to deliver the
    // cancel: 12 pages were in by then.)
    h = await startWorkerHarness(
      {
        seed: 16,
        layout: { ownPlots: 1, suppliers: [{ plots: 6600 }] },
        faults: { latency: 1, latencyMs: [2_000, 2_000] },
      },
      'edges',
    );
    await h.startWorker();
    const runId = randomUUID();
    const handle = await h.temporal.client.workflow.start(refreshWarehouse, {
      taskQueue: h.temporal.taskQueue,
      workflowId: refreshWorkflowId(runId),
      args: [{ runId }],
    });
    const supplier = h.sim.control.suppliers()[0]!.id;
    const pages = async () =>
      (
        await sql<{ n: number }>`
          select count(*)::int as n from sync_pages where run_id = ${runId}::uuid and scope = ${supplier}`.execute(
          h!.db,
        )
      ).rows[0]!.n;
    await waitUntil('two pages of the supplier', async () => (await pages()) >= 2, 60_000);
    await handle.cancel();
    await expect(handle.result()).rejects.toThrow();
    // Shutdown waits for every activity the worker runs, the run of pages too.
    await h.stopWorker();
    // The pages' records go with the failed run; the plots they wrote stay: far fewer than 6,600.
    const linked = await sql<{ n: number }>`
      select count(*)::int as n from plot_suppliers where supplier_id = ${supplier}`.execute(h.db);
    expect(linked.rows[0]!.n).toBeLessThan(5_000);
    const parts = await sql<{ scope: string; status: string }>`
      select scope, status from sync_run_scopes where run_id = ${runId}::uuid order by scope`.execute(h.db);
    expect(parts.rows.filter((p) => p.status === 'running' || p.status === 'pending')).toEqual([]);
    expect(parts.rows.find((p) => p.scope === supplier)?.status).toBe('failed');
    const run = await sql<{ status: string }>`select status from sync_runs where id = ${runId}::uuid`.execute(h.db);
    expect(run.rows[0]!.status).toBe('failed');
  }, 120_000);

  it('reads every supplier even when told to read no page per run (a run never ends a supplier unread)', async () => {
    h = await startWorkerHarness(
      { seed: 14, layout: { ownPlots: 1, suppliers: [{ plots: 600 }, { plots: 30 }] } },
      'edges',
    );
    const summary = await h.refresh({ pagesPerRun: 0 });
    expect(summary.status).toBe('succeeded');
    expect(await warehousePlotFacts(h.db)).toEqual(simulatorPlotFacts(h.sim));
  });

  it('does not sweep a supplier whose read failed, and says so', async () => {
    const layout = { ownPlots: 1, suppliers: [{ plots: 3000 }, { plots: 40 }, { plots: 40 }] };
    h = await startWorkerHarness({ seed: 12, layout }, 'edges');
    expect((await h.refresh()).status).toBe('succeeded');
    const { control } = h.sim;
    const [, s1, s2] = control.suppliers();
    const plotsOf = (id: string) =>
      [...control.plots()].filter((p) => p.supplierIds.includes(id)).map((p) => p.plot['id'] as string);
    const goneFromS1 = plotsOf(s1!.id)[0]!;
    const goneFromS2 = plotsOf(s2!.id)[0]!;
    control.removePlot(goneFromS1);
    control.removePlot(goneFromS2);

    // Supplier 2 is disconnected after the run listed it and before its first page: its pages answer 403.
    control.setFaults({ latency: 1, latencyMs: [60, 60] });
    const runId = randomUUID();
    const run = h.temporal.client.workflow.execute(refreshWarehouse, {
      taskQueue: h.temporal.taskQueue,
      workflowId: refreshWorkflowId(runId),
      args: [{ runId, supplierConcurrency: 1 }],
    });
    await waitUntil('the run to list its suppliers', async () => {
      const r = await sql<{
        n: number;
      }>`select count(*)::int as n from sync_pages where run_id = ${runId}::uuid and entity = 'plots'`.execute(h!.db);
      return r.rows[0]!.n > 0;
    });
    control.disconnectSupplier(s2!.id);
    const summary = await run;

    expect(summary.status).toBe('partial');
    expect(summary.suppliersFailed).toBe(1);
    expect(summary.error).toContain(s2!.id);
    const scope = await sql<{
      status: string;
      error: string;
    }>`select status, error from sync_run_scopes where run_id = ${runId}::uuid and scope = ${s2!.id}`.execute(h.db);
    expect(scope.rows[0]).toMatchObject({ status: 'failed', error: expect.stringContaining('403') });
    const state = await sql<{
      id: string;
      deleted: boolean;
    }>`select id, deleted_at is not null as deleted from plots where id = any(${[goneFromS1, goneFromS2]}::text[])`.execute(
      h.db,
    );
    const deleted = Object.fromEntries(state.rows.map((r) => [r.id, r.deleted]));
    expect(deleted[goneFromS1]).toBe(true);
    // Not swept: the failed supplier's plots stay as they were, the removed one included.
    expect(deleted[goneFromS2]).toBe(false);
    const links = await sql<{
      n: number;
    }>`select count(*)::int as n from plot_suppliers where supplier_id = ${s2!.id} and deleted_at is null`.execute(
      h.db,
    );
    expect(links.rows[0]!.n).toBe(40);
    // Its pages are forgotten, so its next read is complete (never short-cut) and swept.
    const remembered = await sql<{ scope: string }>`select distinct scope from source_pages`.execute(h.db);
    expect(remembered.rows.map((r) => r.scope)).not.toContain(s2!.id);
    expect(remembered.rows.map((r) => r.scope)).toContain(control.suppliers()[0]!.id);
  });

  it('leaves what a refresh running at the same time wrote after this one began', async () => {
    h = await startWorkerHarness(
      { seed: 13, layout: { ownPlots: 1, suppliers: [{ plots: 30 }, { plots: 30 }] } },
      'edges',
    );
    expect((await h.refresh()).status).toBe('succeeded');
    const { control } = h.sim;
    const [s1, s2] = control.suppliers();
    const { onlyOf } = plotGroups(control);
    const onlyVia = (supplier: string) => onlyOf(supplier)[0]!;
    const keptByOther = onlyVia(s1!.id);
    const removed = onlyVia(s2!.id);
    control.removePlot(keptByOther);
    control.removePlot(removed);
    // A refresh started by hand still saw keptByOther and wrote its link after this run began
    // (emulated by a write time later than this run's start).
    await sql`update plot_suppliers set changed_at = now() + interval '1 hour' where plot_id = ${keptByOther}`.execute(
      h.db,
    );
    expect((await h.refresh()).status).toBe('succeeded');
    const deletedOf = async () =>
      Object.fromEntries(
        (
          await sql<{ id: string; deleted: boolean }>`
      select id, deleted_at is not null as deleted from plots where id = any(${[keptByOther, removed]}::text[])`.execute(
            h!.db,
          )
        ).rows.map((r) => [r.id, r.deleted]),
      );
    expect(await deletedOf()).toEqual({ [keptByOther]: false, [removed]: true });
    // The next refresh, with no other one around, reads that supplier in full (its pages are the
    // same text as last time, which would otherwise short-cut the read) and sweeps the plot.
    await sql`update plot_suppliers set changed_at = now() - interval '1 minute' where plot_id = ${keptByOther}`.execute(
      h.db,
    );
    expect((await h.refresh()).status).toBe('succeeded');
    expect(await deletedOf()).toEqual({ [keptByOther]: true, [removed]: true });
  });
});
