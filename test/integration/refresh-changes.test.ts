import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { sql } from 'kysely';
import { startWorkerHarness, type WorkerHarness } from '../support/worker-harness.ts';
import { simulatorPlotFacts, warehousePlotFacts } from '../support/warehouse-facts.ts';
import { plotGroups } from '../support/simulator-plots.ts';

// Supplier 0: 30 own plots + 8 shared with supplier 2; supplier 1: 20 + an upstream business of 10;
// supplier 2: 15 of its own + the 8 shared; 5 own plots of the caller.
const layout = {
  ownPlots: 5,
  suppliers: [{ plots: 30 }, { plots: 20, upstream: [10] }, { plots: 15 }],
  shared: [{ plots: 8, suppliers: [0, 2] }],
};

describe('refresh after the service changed', () => {
  let h: WorkerHarness;
  beforeAll(async () => {
    h = await startWorkerHarness({ seed: 3, layout });
    expect((await h.refresh()).status).toBe('succeeded');
  });
  afterAll(() => h?.close());

  it('reflects edits, removals, a disconnected supplier, a new analysis and a risk change, with history and soft deletes', async () => {
    const { control } = h.sim;
    const [s0, , s2] = control.suppliers();
    const { onlyOf: ofOnly, shared, own } = plotGroups(control);
    const [edited, removed, analysed, risky] = ofOnly(s0!.id).slice(10, 14) as [string, string, string, string];
    const onlyS2 = ofOnly(s2!.id);
    expect(onlyS2).toHaveLength(15);
    expect(shared).toHaveLength(8);

    const geometry = control.getPlot(edited)!['geometry'] as { coordinates: number[][][] };
    const moved = {
      type: 'Polygon' as const,
      coordinates: [geometry.coordinates[0]!.map(([lon, lat]) => [lon! + 0.01, lat!])],
    };
    control.editPlot(edited, { name: 'Renamed plot', geometry: moved });
    control.removePlot(removed);
    const before = control.getPlot(analysed)!['mostRecentAnalysis'] as { id: string };
    control.addAnalysis(analysed, { type: 'PRECISION', status: 'succeeded', riskOfDeforestation: 0.4 });
    control.setRiskStatus(risky, 'EUDR_NON_COMPLIANT', 'high');
    control.removePlot(own[0]!);
    control.disconnectSupplier(s2!.id);

    const summary = await h.refresh();
    expect(summary.status).toBe('succeeded');
    // The warehouse equals the service again.
    expect(await warehousePlotFacts(h.db)).toEqual(simulatorPlotFacts(h.sim));

    // Soft deletes: the removed plots, supplier 2's own plots, its connection and business; shared plots stay.
    const deleted = await sql<{ id: string }>`select id from plots where deleted_at is not null order by id`.execute(
      h.db,
    );
    expect(deleted.rows.map((r) => r.id).sort()).toEqual([removed, own[0]!, ...onlyS2].sort());
    const links = await sql<{
      n: number;
    }>`select count(*)::int as n from plot_suppliers where supplier_id = ${s2!.id} and deleted_at is null`.execute(
      h.db,
    );
    expect(links.rows[0]!.n).toBe(0);
    const sharedLive = await sql<{
      n: number;
    }>`select count(*)::int as n from plots where id = any(${shared}::text[]) and deleted_at is null`.execute(h.db);
    expect(sharedLive.rows[0]!.n).toBe(8);
    const connection = await sql<{
      deleted: boolean;
    }>`select deleted_at is not null as deleted from business_connections where partner_business_id = ${s2!.id}`.execute(
      h.db,
    );
    expect(connection.rows).toEqual([{ deleted: true }]);
    const business = await sql<{
      deleted: boolean;
    }>`select deleted_at is not null as deleted from businesses where id = ${s2!.id}`.execute(h.db);
    expect(business.rows).toEqual([{ deleted: true }]);

    // History: a closed row and a current one for each tracked change; closed rows for removed plots.
    const history = await sql<{ plot_id: string; rows: number; current: number }>`
      select plot_id, count(*)::int as rows, count(*) filter (where is_current)::int as current
      from plot_history where plot_id = any(${[edited, analysed, risky, removed]}::text[]) group by plot_id`.execute(
      h.db,
    );
    const byPlot = Object.fromEntries(history.rows.map((r) => [r.plot_id, [r.rows, r.current]]));
    expect(byPlot[edited]).toEqual([2, 1]);
    expect(byPlot[analysed]).toEqual([2, 1]);
    expect(byPlot[risky]).toEqual([2, 1]);
    expect(byPlot[removed]).toEqual([1, 0]);
    const risk = await sql<{
      risk_assessment_status_before: string;
      risk_assessment_status: string;
      risk_assessment_status_raw: string;
      risk_level: string;
    }>`
      select risk_assessment_status_before, risk_assessment_status, risk_assessment_status_raw, risk_level from bi_plot_changes where plot_id = ${risky} and change = 'changed'`.execute(
      h.db,
    );
    expect(risk.rows).toEqual([
      {
        risk_assessment_status_before: expect.any(String),
        risk_assessment_status: 'eudr_non_compliant',
        risk_assessment_status_raw: 'EUDR_NON_COMPLIANT',
        risk_level: 'high',
      },
    ]);
    const geometryChange = await sql<{
      geometry_changed: boolean;
    }>`select geometry_changed from bi_plot_changes where plot_id = ${edited} and change = 'changed'`.execute(h.db);
    expect(geometryChange.rows).toEqual([{ geometry_changed: true }]);
    const removals = await sql<{
      plot_id: string;
    }>`select plot_id from bi_plot_changes where change = 'removed' and plot_id = ${removed}`.execute(h.db);
    expect(removals.rows).toHaveLength(1);

    // The new analysis is the most recent; the one it replaced stays, unmarked.
    const analyses = await sql<{ id: string; is_most_recent: boolean; type: string }>`
      select id, is_most_recent, type from analyses where plot_id = ${analysed} order by is_most_recent desc, id`.execute(
      h.db,
    );
    const latest = analyses.rows.filter((a) => a.is_most_recent);
    expect(latest).toHaveLength(1);
    expect(latest[0]!.type).toBe('PRECISION');
    expect(analyses.rows.find((a) => a.id === before.id)?.is_most_recent).toBe(false);

    // Unchanged pages are recognised by their text next time, except for suppliers that lost links:
    // a disconnected one, and supplier 0 (a plot removed), whose pages must be read in full again.
    const remembered = await sql<{ scope: string }>`select distinct scope from source_pages`.execute(h.db);
    expect(remembered.rows.map((r) => r.scope).sort()).toEqual([control.suppliers()[1]!.id]);
    const again = await h.refresh();
    expect(again.rowsWritten).toBe(0);
    expect(await warehousePlotFacts(h.db)).toEqual(simulatorPlotFacts(h.sim));
    const rememberedAgain = await sql<{ scope: string }>`select distinct scope from source_pages`.execute(h.db);
    expect(rememberedAgain.rows.map((r) => r.scope).sort()).toEqual([s0!.id, control.suppliers()[1]!.id].sort());

    // What the run counted matches what happened.
    expect(summary.counts['plots']).toMatchObject({ updated: 3, deleted: 2 + onlyS2.length });
    expect(summary.counts['business_connections']).toMatchObject({ deleted: 1 });
    expect(summary.counts['plot_suppliers']!.deleted).toBe(onlyS2.length + shared.length + 1);
  });
});
