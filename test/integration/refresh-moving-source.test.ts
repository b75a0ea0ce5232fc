import { describe, it, expect, afterEach } from 'vitest';
import { sql } from 'kysely';
import { startWorkerHarness, type WorkerHarness } from '../support/worker-harness.ts';
import { simulatorPlotFacts, warehousePlotFacts } from '../support/warehouse-facts.ts';
import type { PlotPageRequest } from '../../simulator/state.ts';
import { plotGroups } from '../support/simulator-plots.ts';

/**
 * Offset pages are not a snapshot: the source deletes and inserts plots while a supplier's pages are
 * read, driven deterministically by a hook that runs before chosen page requests. After every
 * refresh, nothing alive at the source may be soft-deleted or have its history closed; what was
 * really deleted is soft-deleted by the end of the next refresh at the latest.
 */

// Supplier lists of 4 and 3 pages (500 plots a page), a plot list shared by both, a few own plots.
const LAYOUT = {
  ownPlots: 3,
  suppliers: [{ plots: 1_400 }, { plots: 1_100 }],
  shared: [{ plots: 200, suppliers: [0, 1] }],
};

describe('a refresh while the source moves', () => {
  let h: WorkerHarness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  /** Every plot alive at the source that the warehouse holds is live, linked as at the source, with its history open. */
  async function expectNothingFalse(): Promise<void> {
    const alive = new Map([...h!.sim.control.plots()].map((p) => [p.plot['id'] as string, p.supplierIds]));
    const { rows } = await sql<{ id: string; deleted: boolean; current: boolean; closed: number }>`
      select p.id, p.deleted_at is not null as deleted,
             exists (select 1 from plot_history c where c.plot_id = p.id and c.is_current) as current,
             (select count(*)::int from plot_history c where c.plot_id = p.id and c.valid_to is not null) as closed
      from plots p`.execute(h!.db);
    const wrong = rows.filter((r) => alive.has(r.id) && (r.deleted || !r.current || r.closed > 0));
    expect(wrong, 'plots alive at the source but deleted or with history closed').toEqual([]);
    const links = await sql<{
      plot_id: string;
      supplier_id: string;
    }>`select plot_id, supplier_id from plot_suppliers where deleted_at is not null`.execute(h!.db);
    const wrongLinks = links.rows.filter((l) => alive.get(l.plot_id)?.includes(l.supplier_id));
    expect(wrongLinks, 'links alive at the source but soft-deleted').toEqual([]);
    const changes = await sql<{
      plot_id: string;
      change: string;
    }>`select plot_id, change from bi_plot_changes where change in ('removed', 'reappeared')`.execute(h!.db);
    expect(changes.rows.filter((c) => alive.has(c.plot_id))).toEqual([]);
  }

  /** The warehouse holds exactly the source's current plots (and links), nothing else live. */
  async function expectMirror(): Promise<void> {
    expect(await warehousePlotFacts(h!.db)).toEqual(simulatorPlotFacts(h!.sim));
  }

  async function deletedState(ids: string[]): Promise<Record<string, boolean>> {
    const { rows } = await sql<{
      id: string;
      deleted: boolean;
    }>`select id, deleted_at is not null as deleted from plots where id = any(${ids}::text[])`.execute(h!.db);
    return Object.fromEntries(rows.map((r) => [r.id, r.deleted]));
  }

  /** Runs `change` once, before the first request of `page` of `supplierId` (the verification read's requests come later). */
  function changeBefore(supplierId: string, page: number, change: () => void): () => void {
    let done = false;
    return h!.sim.control.onPlotPage((r: PlotPageRequest) => {
      if (done || r.supplierId !== supplierId || r.page !== page) return;
      done = true;
      change();
    });
  }

  for (const pageWindow of [1, 2]) {
    it(`never deletes a plot that slid onto a page already read (read-ahead ${pageWindow}), and deletes the removed one by the next refresh`, async () => {
      h = await startWorkerHarness({ seed: 31, layout: LAYOUT }, 'moving');
      expect((await h.refresh({ pageWindow })).status).toBe('succeeded');
      const { control } = h.sim;
      const [a, b] = control.suppliers();
      const listA = control.supplierPlotIds(a!.id);
      const listB = control.supplierPlotIds(b!.id);
      // In front of the read position: at the front, in the middle of page 1, at the last slot of page 2.
      const removed = [listA[0]!, listA[250]!, listB[999]!];
      const slid = [listA[500]!, listA[501]!, listB[1000]!];
      changeBefore(a!.id, 2, () => {
        control.removePlot(listA[0]!);
        control.removePlot(listA[250]!);
      });
      changeBefore(b!.id, 3, () => control.removePlot(listB[999]!));
      const second = await h.refresh({ pageWindow });
      expect(second.status).toBe('succeeded');
      await expectNothingFalse();
      expect(Object.values(await deletedState(slid))).toEqual([false, false, false]);
      // The slid plots looked missing: their suppliers' pages were read a second time.
      expect(second.verifyPages).toBeGreaterThan(0);

      const third = await h.refresh({ pageWindow });
      await expectNothingFalse();
      expect(await deletedState(removed)).toEqual(Object.fromEntries(removed.map((id) => [id, true])));
      expect(third.deletionsDeferred).toBe(0);
      await expectMirror();
    });
  }

  it('defers, never deletes, a plot that both the scan and the verification read missed; the next refresh settles it', async () => {
    h = await startWorkerHarness({ seed: 37, layout: LAYOUT }, 'moving');
    const { control } = h.sim;
    const [a] = control.suppliers();
    const hidden = control.supplierPlotIds(a!.id)[3]!;
    control.removePlot(hidden);
    expect((await h.refresh()).status).toBe('succeeded');
    const list = control.supplierPlotIds(a!.id);
    const slid = list[500]!;
    // Scan: a deletion in front moves `slid` onto page 1, already read. Verification read: an insertion
    // in front before its page 1 moves it back to page 2, a deletion before its page 2 onto page 1 again.
    const requests = new Map<number, number>();
    control.onPlotPage((r) => {
      if (r.supplierId !== a!.id) return;
      const n = (requests.get(r.page) ?? 0) + 1;
      requests.set(r.page, n);
      if (r.page === 2 && n === 1) control.removePlot(list[0]!);
      if (r.page === 1 && n === 2) control.restorePlot(hidden);
      if (r.page === 2 && n === 2) control.removePlot(list[1]!);
    });
    const second = await h.refresh({ pageWindow: 1 });
    expect(second.status).toBe('succeeded');
    await expectNothingFalse();
    const mark = async () =>
      (
        await sql<{ marked: boolean }>`
      select missing_since is not null as marked from plot_suppliers where plot_id = ${slid} and supplier_id = ${a!.id} and deleted_at is null`.execute(
          h!.db,
        )
      ).rows[0]?.marked;
    expect(await mark()).toBe(true);
    expect(second.deletionsDeferred).toBeGreaterThanOrEqual(1);
    const scope = await sql<{
      verify_status: string;
    }>`select verify_status from sync_run_scopes where run_id = ${second.runId}::uuid and scope = ${a!.id}`.execute(
      h.db,
    );
    expect(scope.rows[0]!.verify_status).toBe('unstable');

    const third = await h.refresh();
    await expectNothingFalse();
    expect(await mark()).toBe(false);
    expect(third.deletionsDeferred).toBe(0);
    await expectMirror();
  });

  it('deletes at once what was removed before the refresh (the verification read proves it), reading each page once more at most', async () => {
    h = await startWorkerHarness({ seed: 32, layout: LAYOUT }, 'moving');
    expect((await h.refresh()).status).toBe('succeeded');
    const { control } = h.sim;
    const [a] = control.suppliers();
    const onlyA = new Set(plotGroups(control).onlyOf(a!.id));
    const listA = control.supplierPlotIds(a!.id).filter((id) => onlyA.has(id));
    const gone = [listA[10]!, listA[1200]!];
    for (const id of gone) control.removePlot(id);
    const summary = await h.refresh();
    expect(summary.status).toBe('succeeded');
    expect(await deletedState(gone)).toEqual({ [gone[0]!]: true, [gone[1]!]: true });
    // Two plots and their two links confirmed; nothing deferred; supplier A's 4 pages read again once.
    expect(summary.deletionsConfirmed).toBe(4);
    expect(summary.deletionsDeferred).toBe(0);
    expect(summary.verifyPages).toBe(4);
    const scope = await sql<{ missing: number; verify_status: string }>`
      select missing, verify_status from sync_run_scopes where run_id = ${summary.runId}::uuid and scope = ${a!.id}`.execute(
      h.db,
    );
    expect(scope.rows[0]).toEqual({ missing: 2, verify_status: 'stable' });
    await expectMirror();
    // A refresh that finds nothing gone reads nothing twice.
    expect((await h.refresh()).verifyPages).toBe(0);
  });

  it('counts a plot served twice (an insertion in front during the scan) once, and deletes nothing', async () => {
    h = await startWorkerHarness({ seed: 33, layout: LAYOUT }, 'moving');
    const { control } = h.sim;
    const [a] = control.suppliers();
    const inserted = control.supplierPlotIds(a!.id)[3]!;
    control.removePlot(inserted);
    expect((await h.refresh()).status).toBe('succeeded');
    // Brought back in front of page 1's end after page 1 was read: page 2 serves page 1's last plot again.
    changeBefore(a!.id, 2, () => control.restorePlot(inserted));
    const summary = await h.refresh({ pageWindow: 1 });
    expect(summary.status).toBe('succeeded');
    await expectNothingFalse();
    expect(summary.counts['plots']!.deleted).toBe(0);
    const live = await sql<{ plots: number; links: number }>`
      select (select count(*)::int from plots where deleted_at is null) as plots,
             (select count(*)::int from plot_suppliers where deleted_at is null) as links`.execute(h.db);
    const c = summary.counts;
    expect(c['plots']!.inserted + c['plots']!.updated + c['plots']!.unchanged).toBe(live.rows[0]!.plots);
    expect(c['plot_suppliers']!.inserted + c['plot_suppliers']!.updated + c['plot_suppliers']!.unchanged).toBe(
      live.rows[0]!.links,
    );
    await h.refresh();
    await expectMirror();
  });

  it('loads an empty warehouse under churn without a false row, then mirrors the source exactly', async () => {
    h = await startWorkerHarness({ seed: 34, layout: LAYOUT }, 'moving');
    const { control } = h.sim;
    const [a, b] = control.suppliers();
    const listA = control.supplierPlotIds(a!.id);
    const listB = control.supplierPlotIds(b!.id);
    changeBefore(a!.id, 3, () => control.removePlot(listA[0]!));
    changeBefore(b!.id, 2, () => {
      control.removePlot(listB[5]!);
      control.restorePlot(listB[5]!);
      control.removePlot(listB[6]!);
    });
    const first = await h.refresh();
    expect(first.status).toBe('succeeded');
    const deletedRows = await sql<{
      n: number;
    }>`select count(*)::int as n from plots where deleted_at is not null`.execute(h.db);
    expect(deletedRows.rows[0]!.n).toBe(0);
    await expectNothingFalse();
    // Every plot counted once, as inserted: the first load's counts equal what is in the warehouse.
    const live = await sql<{ n: number }>`select count(*)::int as n from plots where deleted_at is null`.execute(h.db);
    expect(first.counts['plots']).toMatchObject({ inserted: live.rows[0]!.n, updated: 0, unchanged: 0, deleted: 0 });
    await h.refresh();
    await expectMirror();
  });

  it('keeps the truth when every page request of every supplier deletes one plot in front, refresh after refresh', async () => {
    h = await startWorkerHarness({ seed: 35, layout: LAYOUT }, 'moving');
    expect((await h.refresh()).status).toBe('succeeded');
    const { control } = h.sim;
    // Each request of page 2 or later removes the plot now at the front of that supplier's list.
    let churn = true;
    const removed: string[] = [];
    control.onPlotPage((r) => {
      if (!churn || r.page < 2) return;
      const first = control.supplierPlotIds(r.supplierId)[0];
      if (first) {
        control.removePlot(first);
        removed.push(first);
      }
    });
    for (let i = 0; i < 3; i++) {
      expect((await h.refresh()).status).toBe('succeeded');
      await expectNothingFalse();
    }
    churn = false;
    await h.refresh();
    await expectNothingFalse();
    expect(Object.values(await deletedState(removed)).every(Boolean)).toBe(true);
    await expectMirror();
  });

  it('does not take a plot that no longer validates for gone', async () => {
    h = await startWorkerHarness({ seed: 36, layout: LAYOUT }, 'moving');
    expect((await h.refresh()).status).toBe('succeeded');
    const { control } = h.sim;
    const [a] = control.suppliers();
    const broken = control.supplierPlotIds(a!.id)[700]!;
    control.editPlot(broken, { geometry: { type: 'Polygon', coordinates: 'not rings' } as never, surfaceArea: 1 });
    const summary = await h.refresh();
    expect(summary.status).toBe('succeeded');
    expect(await deletedState([broken])).toEqual({ [broken]: false });
    const issue = await sql<{
      action: string;
    }>`select action from sync_issues where run_id = ${summary.runId}::uuid and record_id = ${broken}`.execute(h.db);
    expect(issue.rows.map((r) => r.action)).toEqual(['skipped']);
  });
});
