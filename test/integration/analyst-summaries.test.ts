import { describe, it, expect, afterEach } from 'vitest';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';
import { startWorkerHarness, type WorkerHarness } from '../support/worker-harness.ts';
import { simulatorPlotFacts, warehousePlotFacts } from '../support/warehouse-facts.ts';
import { expectSummariesAgree, SUMMARY_ORDER as ORDER, rowsOf } from '../support/summary-oracles.ts';
import { refreshSummaries, refreshSummariesAfterRun } from '../../warehouse/analyst-summaries.ts';
import { waitUntil } from '../support/wait.ts';
import { refreshWarehouse, refreshWorkflowId } from '../../workflows/refresh-warehouse.ts';
import type { Warehouse } from '../../warehouse/database.ts';
import { plotGroups } from '../support/simulator-plots.ts';

// The summary views read the summary tables the end of each refresh keeps (migration 0028,
// warehouse/analyst-summaries.ts). After every refresh, whatever it changed and however it ended,
// each must say exactly what the same view said when it aggregated the per-plot views at each read
// (test/support/summary-oracles.ts: their definitions before 0028).

// Supplier 0: 30 plots + 8 shared with supplier 2; supplier 1: 20 + an upstream business of 10;
// supplier 2: 15 + the 8 shared; 5 own plots of the caller.
const layout = {
  ownPlots: 5,
  suppliers: [{ plots: 30 }, { plots: 20, upstream: [10] }, { plots: 15 }],
  shared: [{ plots: 8, suppliers: [0, 2] }],
};

const SUMMARY_TABLES = [
  'summary_suppliers',
  'summary_supplier_countries',
  'summary_risk_cells',
  'summary_totals',
  'summary_refreshes',
  'summary_plot_facts',
  'summary_changes',
];

/** Where every row version of the summary tables is (ctid, xmin): any write moves it. */
async function summaryRowVersions(db: Warehouse): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const table of SUMMARY_TABLES) {
    const { rows } = await sql<{ v: string | null; n: number }>`
      select string_agg(ctid::text || ':' || xmin::text, ',' order by ctid) as v, count(*)::int as n from ${sql.table(table)}`.execute(
      db,
    );
    out[table] = `${rows[0]!.n}:${rows[0]!.v ?? ''}`;
  }
  return out;
}

/** Where each supplier's summary rows are (ctid, xmin of summary_suppliers and its countries): a rewrite moves them. */
async function supplierRowVersions(db: Warehouse): Promise<Record<string, string>> {
  const { rows } = await sql<{ supplier_id: string; v: string }>`
    select s.supplier_id, s.ctid::text || ':' || s.xmin::text || '/' ||
           (select string_agg(c.ctid::text || ':' || c.xmin::text, ',' order by c.ctid)
            from summary_supplier_countries c where c.supplier_id = s.supplier_id) as v
    from summary_suppliers s`.execute(db);
  return Object.fromEntries(rows.map((r) => [r.supplier_id, r.v]));
}

/** The suppliers whose summary rows moved between two readings of supplierRowVersions. */
function rewritten(before: Record<string, string>, after: Record<string, string>): string[] {
  const ids = new Set([...Object.keys(before), ...Object.keys(after)]);
  return [...ids].filter((id) => before[id] !== after[id]).sort();
}

/** What the last making of the summaries read: every plot (whole) or the touched ones, and how many. */
async function lastMaking(db: Warehouse): Promise<{ facts: number; noted: number }> {
  const { rows } = await sql<{ facts: number; noted: number }>`
    select (select count(*)::int from summary_plot_facts) as facts,
           (select count(*)::int from summary_changes) as noted`.execute(db);
  return rows[0]!;
}

describe('analyst summaries (the summary views read tables kept by the refresh)', () => {
  let h: WorkerHarness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it('agree with the per-plot views after a first load, edits, removals, new analyses, risk changes and a disconnected supplier; a no-change refresh writes none of them', async () => {
    h = await startWorkerHarness({ seed: 41, layout }, 'summaries');
    // Empty until the first refresh: every summary view as the per-plot views say (no plots).
    await expectSummariesAgree(h.db, 'before any refresh');
    expect((await h.refresh()).status).toBe('succeeded');
    const { rows: first } = await sql<{ plots: number }>`select plots from bi_warehouse_totals`.execute(h.db);
    expect(first[0]!.plots).toBe(5 + 30 + 20 + 10 + 15 + 8);
    await expectSummariesAgree(h.db, 'after the first load');

    const { control } = h.sim;
    const [s0, s1, s2] = control.suppliers();
    const { onlyOf: ofOnly, own, shared } = plotGroups(control);
    const [edited, removed, analysed, risky, pointed] = ofOnly(s0!.id).slice(10, 15) as string[];
    const geometry = control.getPlot(edited!)!['geometry'] as { coordinates: number[][][] };
    control.editPlot(edited!, {
      name: 'Renamed plot',
      geometry: { type: 'Polygon', coordinates: [geometry.coordinates[0]!.map(([lon, lat]) => [lon! + 0.01, lat!])] },
    });
    // A line: blocking finding geometry_type_refused, no area; two commodities, another risk level.
    control.editPlot(pointed!, {
      geometry: {
        type: 'LineString',
        coordinates: [
          [-5.5, 6.8],
          [-5.4, 6.9],
        ],
      },
    });
    control.editPlot(ofOnly(s1!.id)[3]!, { commodities: ['cocoa', 'coffee'], riskLevel: 'low' });
    control.removePlot(removed!);
    control.removePlot(own[0]!);
    control.removePlot(shared[0]!);
    control.addAnalysis(analysed!, { type: 'PRECISION', status: 'succeeded', riskOfDeforestation: 0.4 });
    control.setRiskStatus(risky!, 'EUDR_NON_COMPLIANT', 'high');
    control.setRiskStatus(ofOnly(s1!.id)[5]!, 'IN_RISK_MITIGATION', 'medium');
    control.disconnectSupplier(s2!.id);
    const second = await h.refresh();
    expect(second.status).toBe('succeeded');
    expect(await warehousePlotFacts(h.db)).toEqual(simulatorPlotFacts(h.sim));
    await expectSummariesAgree(h.db, 'after changes, removals and a disconnected supplier');
    // The changes are in them: one plot and supplier 2's 15 gone (its 7 remaining shared ones stay with supplier 0).
    const { rows: totals } = await sql<{ plots: number; suppliers: number }>`
      select plots, suppliers from bi_warehouse_totals`.execute(h.db);
    expect(totals[0]).toEqual({ plots: 88 - 3 - 15, suppliers: 2 });

    // Nothing changed: nothing in the summary tables is written, not even their refresh record.
    const before = await summaryRowVersions(h.db);
    const third = await h.refresh();
    expect(third.rowsWritten).toBe(0);
    expect(await summaryRowVersions(h.db)).toEqual(before);
    await expectSummariesAgree(h.db, 'after a no-change refresh');
  });

  it('agree after a partial run (a supplier cut off mid-run, not swept) and after a run under drift, and a reader mid-run sees the last run’s summaries whole', async () => {
    h = await startWorkerHarness(
      { seed: 43, layout: { ownPlots: 2, suppliers: [{ plots: 1200 }, { plots: 40 }, { plots: 40 }] } },
      'summaries',
    );
    expect((await h.refresh()).status).toBe('succeeded');
    await expectSummariesAgree(h.db, 'after the first load');
    const { control } = h.sim;
    const [s0, s1, s2] = control.suppliers();
    const plotsOf = (id: string) =>
      [...control.plots()].filter((p) => p.supplierIds.includes(id)).map((p) => p.plot['id'] as string);
    control.removePlot(plotsOf(s1!.id)[0]!);
    // A plot not flagged, on a later page of supplier 0 than the first.
    const { rows: unflagged } = await sql<{ plot_id: string }>`
      select plot_id from bi_current_plots where not flagged and plot_id = any(${plotsOf(s0!.id).slice(600)}::text[])
      order by plot_id limit 1`.execute(h.db);
    const turned = unflagged[0]!.plot_id;
    control.setRiskStatus(turned, 'EUDR_NON_COMPLIANT', 'high');
    control.removePlot(plotsOf(s2!.id)[0]!);
    const summariesBefore = await rowsOf(h.db, 'select * from bi_suppliers', ORDER.bi_suppliers);

    // Supplier 2 is disconnected once the run has written a page: its pages answer 403, the run ends partial.
    let pagesSeen = 0;
    const remove = control.onPlotPage((r) => {
      if (r.supplierId === s0!.id && ++pagesSeen === 2) control.disconnectSupplier(s2!.id);
    });
    control.setFaults({ latency: 1, latencyMs: [60, 60] });
    const runId = randomUUID();
    const run = h.temporal.client.workflow.execute(refreshWarehouse, {
      taskQueue: h.temporal.taskQueue,
      workflowId: refreshWorkflowId(runId),
      args: [{ runId, supplierConcurrency: 1 }],
    });
    // Mid-run, once the plot turned high risk is written: the per-plot view has it, the summaries are
    // still those of the last run's end, whole (not half a run's).
    const db = h.db;
    await waitUntil('the run to write the changed plot', async () => {
      const { rows } = await sql<{ flagged: boolean }>`
        select flagged from bi_current_plots where plot_id = ${turned}`.execute(db);
      return rows[0]?.flagged === true;
    });
    const readMidRun = await rowsOf(db, 'select * from bi_suppliers', ORDER.bi_suppliers);
    const { rows: running } = await sql<{
      status: string;
    }>`select status from sync_runs where id = ${runId}::uuid`.execute(db);
    expect(running[0]!.status).toBe('running');
    const summary = await run;
    remove();
    control.setFaults('none');
    expect(summary.status).toBe('partial');
    // What the connections say is read live (the run re-read the listing: plots_announced moved); the
    // plots' figures are those of the last run's end.
    const plotFigures = (rows: unknown[]) =>
      rows.map((r) => {
        const { plots_announced, plots_difference, commodities_announced, last_seen_at, ...figures } = r as Record<
          string,
          unknown
        >;
        return figures;
      });
    expect(plotFigures(readMidRun)).toEqual(plotFigures(summariesBefore));
    await expectSummariesAgree(h.db, 'after a partial run');
    const { rows: recorded } = await sql<{ run_id: string }>`select run_id from summary_refreshes`.execute(h.db);
    expect(recorded).toEqual([{ run_id: runId }]);

    // Drift: plots removed and brought back while supplier 0's pages are read (records slide across pages).
    const list = control.supplierPlotIds(s0!.id);
    let page = 0;
    const undo = control.onPlotPage((r) => {
      if (r.supplierId !== s0!.id) return;
      page++;
      if (page === 1) control.removePlot(list[0]!);
      if (page === 2) control.removePlot(list[600]!);
      if (page === 3) control.restorePlot(list[0]!);
    });
    const drift = await h.refresh({ pageWindow: 1 });
    undo();
    expect(drift.status).not.toBe('failed');
    await expectSummariesAgree(h.db, 'after a run under drift');
    // And once the source is still, the next refresh settles what the drift deferred; they still agree.
    expect((await h.refresh()).status).toBe('succeeded');
    await expectSummariesAgree(h.db, 'after the refresh after the drift');
  });

  it('are made again only for the suppliers a run touched (one supplier, a shared plot, an own plot, a plot moved to another country by hand), and still agree', async () => {
    h = await startWorkerHarness({ seed: 47, layout }, 'summaries');
    const db = h.db;
    expect((await h.refresh()).status).toBe('succeeded');
    // The first load filled the facts (nothing is noted while they are empty: the end reads every plot).
    expect(await lastMaking(db)).toEqual({ facts: 88, noted: 0 });
    await expectSummariesAgree(db, 'after the first load');

    const { control } = h.sim;
    const [s0, s1, s2] = control.suppliers();
    const ids = [s0!.id, s1!.id, s2!.id];
    const { onlyOf: ofOnly, own, shared } = plotGroups(control);
    const touchedBy = async (when: string, change: () => Promise<unknown>) => {
      const before = await supplierRowVersions(db);
      await change();
      await expectSummariesAgree(db, when);
      expect(await lastMaking(db), `${when}: every note consumed, a fact per current plot`).toEqual({
        facts: (await sql<{ n: number }>`select count(*)::int as n from plots where deleted_at is null`.execute(db))
          .rows[0]!.n,
        noted: 0,
      });
      return rewritten(before, await supplierRowVersions(db));
    };

    // A plot of supplier 1 alone turns high risk: supplier 1's rows are made again, no other's.
    const risky = ofOnly(s1!.id)[2]!;
    control.setRiskStatus(risky, 'EUDR_NON_COMPLIANT', 'high');
    expect(
      await touchedBy('after a change in one supplier', async () =>
        expect((await h!.refresh()).status).toBe('succeeded'),
      ),
    ).toEqual([s1!.id]);

    // A plot shared by suppliers 0 and 2 is removed: both are made again (their shared counts move), not supplier 1.
    control.removePlot(shared[1]!);
    expect(
      await touchedBy('after a shared plot removed', async () => expect((await h!.refresh()).status).toBe('succeeded')),
    ).toEqual([s0!.id, s2!.id].sort());

    // An own plot (reached through no supplier) turns high risk: only the rows without a supplier move.
    const cellsBefore = await rowsOf(
      db,
      'select * from summary_risk_cells where supplier_business_id is null',
      '1, 2, 3',
    );
    control.setRiskStatus(own[1]!, 'IN_RISK_MITIGATION', 'medium');
    expect(
      await touchedBy('after an own plot changed', async () => expect((await h!.refresh()).status).toBe('succeeded')),
    ).toEqual([]);
    expect(
      await rowsOf(db, 'select * from summary_risk_cells where supplier_business_id is null', '1, 2, 3'),
    ).not.toEqual(cellsBefore);

    // A plot of supplier 0 moved to another country by SQL (a repair): the triggers note any write, not
    // only a refresh's; the end of the next run counts it in its new country, and only supplier 0 moves.
    const moved = ofOnly(s0!.id)[4]!;
    const { rows: country } = await sql<{ country_code: string }>`
      select country_code from plots where id = ${moved}`.execute(db);
    const elsewhere = country[0]!.country_code === 'PE' ? 'GH' : 'PE';
    expect(
      await touchedBy('after a plot moved country', async () => {
        await sql`update plots set country_code = ${elsewhere} where id = ${moved}`.execute(db);
        expect(await lastMaking(db)).toMatchObject({ noted: 1 });
        expect(await refreshSummariesAfterRun(db, randomUUID())).toMatchObject({
          refreshed: true,
          whole: false,
          plotsTouched: 1,
        });
      }),
    ).toEqual([s0!.id]);
    const { rows: countries } = await sql<{ plots: number }>`
      select plots::int from summary_supplier_countries where supplier_id = ${s0!.id} and country_key = ${elsewhere}`.execute(
      db,
    );
    expect(countries[0]?.plots ?? 0).toBeGreaterThan(0);

    // Nothing touched since: nothing to do, nothing written.
    const versions = await summaryRowVersions(db);
    expect(await refreshSummariesAfterRun(db, randomUUID())).toEqual({ refreshed: false, rowsWritten: 0, seconds: 0 });
    expect(await summaryRowVersions(db)).toEqual(versions);
    // Every supplier's rows exist still (none lost by being out of a making's scope).
    expect(Object.keys(await supplierRowVersions(db)).sort()).toEqual([...ids].sort());

    // A truncate fires no row trigger: it empties the facts instead, and the next making reads every plot.
    await sql`truncate eudr_findings`.execute(db);
    expect(await lastMaking(db)).toEqual({ facts: 0, noted: 0 });
    expect(await refreshSummariesAfterRun(db, randomUUID())).toMatchObject({ refreshed: true, whole: true });
    await expectSummariesAgree(db, 'after the findings were truncated');
  });
  it('count a commodity listed twice, a null one and none as before, made again for touched plots and from every plot; after the facts are lost (unlogged: a crash empties them) the next making reads every plot and agrees', async () => {
    h = await startWorkerHarness({ seed: 53, layout }, 'summaries');
    const db = h.db;
    expect((await h.refresh()).status).toBe('succeeded');
    await expectSummariesAgree(db, 'after the first load');
    const { control } = h.sim;
    const [s0, , s2] = control.suppliers();
    const { onlyOf: ofOnly, own, shared } = plotGroups(control);
    // By SQL (a repair): the risk cells count each plot once per distinct commodity, a duplicate's
    // hectares and weight twice; a null commodity is a cell of its own, an empty list the cell without.
    const set = async (id: string, commodities: (string | null)[]) =>
      sql`update plots set commodities = ${commodities}::text[] where id = ${id}`.execute(db);
    await set(ofOnly(s0!.id)[1]!, ['cocoa', 'cocoa', 'coffee']);
    await set(ofOnly(s0!.id)[2]!, ['rubber', null, 'rubber', null]);
    await set(ofOnly(s2!.id)[1]!, []);
    await set(shared[0]!, ['coffee', 'cocoa', 'coffee']);
    await set(own[0]!, ['soya', 'soya']);
    await set(own[1]!, []);
    expect(await refreshSummariesAfterRun(db, randomUUID())).toMatchObject({
      refreshed: true,
      whole: false,
      plotsTouched: 6,
    });
    await expectSummariesAgree(db, 'after commodities listed twice, null and none (touched plots)');
    expect(await refreshSummaries(db)).toMatchObject({ refreshed: true, whole: true });
    await expectSummariesAgree(db, 'after commodities listed twice, null and none (every plot)');

    // The facts are unlogged: a crash (or a standby promoted) leaves them empty, as a truncate of them does.
    const { rows: kind } = await sql<{ persistence: string }>`
      select relpersistence as persistence from pg_class where oid = 'summary_plot_facts'::regclass`.execute(db);
    expect(kind[0]!.persistence).toBe('u');
    await sql`truncate summary_plot_facts`.execute(db);
    // While they are empty nothing is noted; the next making reads every plot, this one's change with them.
    await sql`update plots set risk_level = 'high', commodities = array['wood'] where id = ${ofOnly(s0!.id)[3]!}`.execute(
      db,
    );
    expect(await lastMaking(db)).toEqual({ facts: 0, noted: 0 });
    expect(await refreshSummariesAfterRun(db, randomUUID())).toMatchObject({
      refreshed: true,
      whole: true,
      plotsTouched: 88,
    });
    await expectSummariesAgree(db, 'after the facts were lost');
    expect((await h.refresh()).status).toBe('succeeded');
    await expectSummariesAgree(db, 'after the refresh after that');
  });

  it('move by exact deltas (0037): a touched plot counts its own facts, not its supplier’s plots; a maximum whose plot went is counted again; many deltas later a making from every plot writes nothing', async () => {
    h = await startWorkerHarness({ seed: 59, layout }, 'summaries');
    const db = h.db;
    expect((await h.refresh()).status).toBe('succeeded');
    const { control } = h.sim;
    const [s0, , s2] = control.suppliers();
    const { onlyOf: ofOnly, shared } = plotGroups(control);
    const make = () => refreshSummariesAfterRun(db, randomUUID());

    // One plot of supplier 0 (38 plots): its facts before and now, and nothing else of supplier 0's.
    const plot = ofOnly(s0!.id)[4]!;
    await sql`update plots set risk_level = 'high', area_ha = 1.0 / 3 where id = ${plot}`.execute(db);
    expect(await make()).toMatchObject({ refreshed: true, whole: false, plotsTouched: 1, plotsCounted: 2 });
    await expectSummariesAgree(db, 'after one plot changed by SQL');

    // Float sums moved back and forth many times: kept exact, no drift.
    for (const area of [0.1, 0.7, 1e-9, 12345.678901, 0.3, 1.0 / 7]) {
      await sql`update plots set area_ha = ${area} where id = ${plot}`.execute(db);
      await sql`update plots set area_ha = ${area * 3} where id = ${shared[2]!}`.execute(db);
      expect(await make()).toMatchObject({ whole: false, plotsTouched: 2, plotsCounted: 4 });
    }
    await expectSummariesAgree(db, 'after areas moved back and forth');

    // The plot holding supplier 2's highest risk of deforestation is lowered: counted again for supplier 2.
    const { rows: top } = await sql<{ analysis: string }>`
      select a.id as analysis from summary_plot_facts f join analyses a on a.id = f.most_recent_analysis_id
      where ${s2!.id} = any(f.supplier_ids) and a.risk_of_deforestation is not null
      order by a.risk_of_deforestation desc limit 1`.execute(db);
    expect(top).toHaveLength(1);
    await sql`update analyses set risk_of_deforestation = -1 where id = ${top[0]!.analysis}`.execute(db);
    const lowered = await make();
    expect(lowered).toMatchObject({ whole: false });
    expect(lowered.maximaRecounted).toBeGreaterThanOrEqual(1);
    await expectSummariesAgree(db, 'after the highest risk lowered');

    // A shared plot removed, a link of supplier 2 dropped, an own plot's area nulled: rows fall, values go.
    await sql`update plots set deleted_at = now() where id = ${shared[3]!}`.execute(db);
    await sql`update plot_suppliers set deleted_at = now() where plot_id = ${ofOnly(s2!.id)[0]!}`.execute(db);
    await sql`update plots set commodities = array['wood'], country_code = null where id = ${ofOnly(s2!.id)[1]!}`.execute(
      db,
    );
    expect(await make()).toMatchObject({ whole: false, plotsTouched: 3 });
    await expectSummariesAgree(db, 'after a removal, a dropped link and a plot moved to no country');
    // Back again: the same rows as before them, made by deltas.
    await sql`update plots set deleted_at = null where id = ${shared[3]!}`.execute(db);
    await sql`update plot_suppliers set deleted_at = null where plot_id = ${ofOnly(s2!.id)[0]!}`.execute(db);
    expect(await make()).toMatchObject({ whole: false, plotsTouched: 2 });
    await expectSummariesAgree(db, 'after they came back');

    // Every delta was exact: a making from every plot finds every summary row as it is, to the last bit.
    const versions = await summaryRowVersions(db);
    expect(await refreshSummaries(db)).toMatchObject({ refreshed: true, whole: true, rowsWritten: 0 });
    const after = await summaryRowVersions(db);
    for (const table of ['summary_suppliers', 'summary_supplier_countries', 'summary_risk_cells', 'summary_totals'])
      expect(after[table], table).toEqual(versions[table]);
    const { rows: values } = await sql<{ n: number }>`
      select count(*)::int as n from summary_supplier_values where plots <= 0`.execute(db);
    expect(values[0]!.n).toBe(0);
  });

  it('agree after the end of a run lost its making mid-way, the checks running beside it: the end is done again once every step settled, and makes them', async () => {
    h = await startWorkerHarness({ seed: 61, layout }, 'summaries');
    const db = h.db;
    // This session holds the summaries' lock (warehouse/analyst-summaries.ts, SUMMARY_LOCK_ID), so the
    // first load's making waits on it beside the duplicate check; its session is then terminated.
    const holder = new pg.Client({ connectionString: h.databaseUrl });
    await holder.connect();
    try {
      await holder.query('select pg_advisory_lock(7250028)');
      const run = h.refresh();
      const waiting = await waitUntil("the making waiting for the summaries' lock", async () => {
        const { rows } = await sql<{ pid: number }>`
          select pid from pg_stat_activity
          where wait_event_type = 'Lock' and wait_event = 'advisory' and query like '%pg_advisory_lock%'
            and pid <> ${(await holder.query('select pg_backend_pid() as pid')).rows[0].pid}`.execute(db);
        return rows[0]?.pid;
      });
      const terminated = await sql<{ done: boolean }>`select pg_terminate_backend(${waiting}) as done`.execute(db);
      expect(terminated.rows[0]!.done).toBe(true);
      await holder.query('select pg_advisory_unlock(7250028)');
      // The warehouse's trouble is waited out and the end of the run done again (activities/warehouse-outages.ts).
      expect((await run).status).toBe('succeeded');
      await expectSummariesAgree(db, 'after a making lost mid-way and made again');
    } finally {
      await holder.end();
    }
  });
});
