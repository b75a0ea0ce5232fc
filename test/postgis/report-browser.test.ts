import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { mkdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Browser } from 'playwright-core';
import { writeReport, type WrittenReport } from '../../report/write.ts';
import { startWorkerHarness, type WorkerHarness } from '../support/worker-harness.ts';
import {
  COUNTRY_RISK_COLOURS,
  COUNTRY_RISK_LEVELS,
  NOT_READY,
  READINESS_COLOURS,
  READY,
} from '../../report/page-data.ts';
import {
  canvasColourAt,
  canvasColours,
  canvasInk,
  drawn,
  focusPlot,
  launchChromium,
  openReport,
  type OpenedReport,
} from '../support/report-browser.ts';
import { remoteResources } from '../support/report-html.ts';

// The report as a person sees it: written from a warehouse the simulator's data was refreshed into
// (on PostGIS: the overlap check runs), opened from file:// in Debian's headless Chromium with every
// http(s) request refused. The screenshots stay in .ddsync/artifacts/ (gitignored) to be looked at.
const ARTIFACTS = resolve('.ddsync/artifacts');
const layout = { ownPlots: 4, suppliers: [{ plots: 70 }, { plots: 50 }, { plots: 40 }] };
// The deforested odd record (not ready) gets a name that would run script if it were ever HTML.
const HOSTILE = '</script><img src=x onerror="window.pwned=1">Plot <b>bold</b>';

interface PlotFinding {
  code: string;
  severity: string;
  message: string;
}

describe('the HTML report in a real browser', () => {
  let h: WorkerHarness;
  let browser: Browser;
  let written: WrittenReport;
  let opened: OpenedReport;
  /** A plot the service sends as a LineString (off the contract; the EU refuses it): stored, blocked, drawn as a line. */
  let linePlot: string;
  beforeAll(async () => {
    // Chromium first: when it is missing, the test says so before a refresh is spent.
    browser = await launchChromium();
    h = await startWorkerHarness({ seed: 14, layout }, 'report');
    h.sim.control.editPlot(h.sim.control.oddRecords().deforested!, { name: HOSTILE });
    const odd = new Set(Object.values(h.sim.control.oddRecords()));
    linePlot = h.sim.control.supplierPlotIds(h.sim.control.suppliers()[0]!.id).find((id) => !odd.has(id))!;
    const ring = (h.sim.control.getPlot(linePlot)!.geometry as { coordinates: number[][][] }).coordinates[0]!;
    h.sim.control.editPlot(linePlot, { geometry: { type: 'LineString', coordinates: ring.slice(0, 3) } });
    expect((await h.refresh()).status).toBe('succeeded');
    mkdirSync(ARTIFACTS, { recursive: true });
    written = await writeReport(h.db, { outDir: ARTIFACTS, fileName: 'report.html' });
    opened = await openReport(browser, written.path);
  });
  afterAll(async () => {
    await browser?.close();
    await h?.close();
  });

  it('opens offline and draws every current plot of the warehouse on the map, with the header, chart and supplier table', async () => {
    const { page } = opened;
    expect(opened.networkRequests).toEqual([]);
    expect(opened.pageErrors).toEqual([]);
    expect(remoteResources(readFileSync(written.path, 'utf8'))).toEqual([]);

    const plots = (
      await sql<{ plot_id: string }>`select plot_id from bi_eudr_plot_readiness order by plot_id`.execute(h.db)
    ).rows.map((r) => r.plot_id);
    expect(plots.length).toBe(h.sim.control.countPlots());
    // Zoomed out to all of them: gathered into discs, every plot counted, pixels painted.
    const first = await drawn(page);
    expect(first.mode).toBe('cells');
    expect(first.plots).toBe(written.model.totals.located);
    expect(written.model.totals.located).toBeGreaterThan(plots.length - 5);
    expect(await canvasInk(page)).toBeGreaterThan(0.0005);
    const pageIds = (await page.evaluate(
      "JSON.parse(document.getElementById('ddsync-data').textContent).plots.ids",
    )) as string[];
    expect([...pageIds].sort()).toEqual(plots);

    // The header: PostGIS ran the overlap check; the totals are the view's.
    const totals = (
      await sql<{ ready: number; not_ready: number }>`
        select count(*) filter (where ready)::int as ready, count(*) filter (where not ready)::int as not_ready
        from bi_eudr_plot_readiness`.execute(h.db)
    ).rows[0]!;
    expect(totals.not_ready).toBeGreaterThan(0);
    await expect.poll(() => page.locator('.mode-line').innerText()).toContain('overlap check run (PostGIS)');
    expect(await page.locator('#total-plots').innerText()).toBe(String(plots.length));
    expect(await page.locator('#total-ready').innerText()).toBe(String(totals.ready));
    expect(await page.locator('#total-not-ready').innerText()).toBe(String(totals.not_ready));

    // One table row per supplier of the view, one chart bar per supplier with plots; a click on a
    // row takes the map to that supplier's plots (drawn one by one there).
    const suppliers = (
      await sql<{
        supplier_business_id: string;
        plots: number;
        country_risk_level: string | null;
        simplified_due_diligence_eligible: boolean | null;
      }>`
        select supplier_business_id, plots, country_risk_level, simplified_due_diligence_eligible
        from bi_eudr_supplier_readiness`.execute(h.db)
    ).rows;
    expect(await page.locator('#suppliers tbody tr').count()).toBe(suppliers.length);
    // Each row shows the view's country risk and eligibility for simplified due diligence.
    for (const s of suppliers) {
      const row = page.locator(`#suppliers tbody tr[data-supplier="${s.supplier_business_id}"]`);
      expect(await row.locator('td.risk').innerText()).toBe(s.country_risk_level ?? '–');
      const sdd = await row.locator('td.sdd').innerText();
      if (s.simplified_due_diligence_eligible === null) expect(sdd).toBe('–');
      else expect(sdd.startsWith('eligible')).toBe(s.simplified_due_diligence_eligible);
    }
    expect(await page.locator('svg.chart g.bar').count()).toBe(suppliers.filter((s) => s.plots > 0).length);
    await page.screenshot({ path: resolve(ARTIFACTS, 'report-overview.png'), fullPage: true });
  });

  it("colours the plots by their country's risk level at the legend's switch, with each level's plots counted as the warehouse counts them", async () => {
    const { page } = opened;
    const risk = (level: string) => COUNTRY_RISK_COLOURS[COUNTRY_RISK_LEVELS.indexOf(level as never)]!;
    const [ready, notReady] = [READINESS_COLOURS[READY], READINESS_COLOURS[NOT_READY]];
    // The switch: readiness by default, the country risk legend hidden until chosen.
    const byRisk = page.locator('input[name="colour-by"][value="risk"]');
    expect(await page.locator('input[name="colour-by"][value="readiness"]').isChecked()).toBe(true);
    expect(await byRisk.isChecked()).toBe(false);
    expect(await page.locator('[data-legend="risk"]').isVisible()).toBe(false);
    expect(await page.locator('[data-legend="readiness"]').isVisible()).toBe(true);

    // A plot with no country (the views count it as unknown) and one of a standard-risk country, on the map.
    const { rows } = await sql<{ plot_id: string; ready: boolean; country_risk_level: string | null }>`
      select r.plot_id, r.ready, r.country_risk_level from bi_eudr_plot_readiness r join plots p on p.id = r.plot_id
      where p.geometry is not null order by r.plot_id`.execute(h.db);
    const located = new Set(written.model.plots.ids.filter((_, i) => written.model.plots.x[i] !== null));
    const noCountry = rows.find((r) => r.country_risk_level === null && located.has(r.plot_id));
    expect(noCountry, 'a located plot without a country (the simulator has one)').toBeDefined();
    expect(noCountry!.ready).toBe(false);

    // Dots (zoom 11) around it, by readiness: it is red (not ready), and no dot has a risk colour.
    const at = await focusPlot(page, noCountry!.plot_id, 11);
    expect(at.mode).toBe('points');
    expect(await canvasColourAt(page, at)).toBe(notReady);
    const before = await canvasColours(page, [ready, notReady, risk('standard'), risk('low'), risk('high')]);
    expect(before[ready]! + before[notReady]!).toBeGreaterThan(0);
    expect(before[risk('standard')]).toBe(0);

    // Switched to country risk: the same view redrawn in the risk colours, the plot grey (unknown).
    await byRisk.check();
    await expect.poll(() => page.evaluate('window.ddsyncReport.drawn.colourBy')).toBe('risk');
    expect(await page.locator('[data-legend="risk"]').isVisible()).toBe(true);
    expect(await page.locator('[data-legend="readiness"]').isVisible()).toBe(false);
    expect(await canvasColourAt(page, at)).toBe(risk('unknown'));
    const after = await canvasColours(page, [ready, notReady, risk('standard'), risk('low'), risk('high')]);
    expect(after[ready]).toBe(0);
    expect(after[notReady]).toBe(0);
    // The simulator's countries are standard (Brazil, Malaysia) or low: standard dots in view, none high.
    expect(after[risk('standard')]! + after[risk('low')]!).toBeGreaterThan(0);
    expect(after[risk('high')]).toBe(0);

    // The legend counts each level's plots as bi_eudr_supplier_readiness's columns do (no country: unknown).
    const counts = (
      await sql<{ level: string; plots: number }>`
        select case when country_risk_level in ('low', 'standard', 'high') then country_risk_level else 'unknown' end as level,
               count(*)::int as plots
        from bi_eudr_plot_readiness group by 1`.execute(h.db)
    ).rows;
    const shown = await page
      .locator('[data-legend="risk"] [data-level]')
      .evaluateAll((items) =>
        items.map((item) => [item.getAttribute('data-level'), item.querySelector('.count')?.textContent]),
      );
    expect(Object.fromEntries(shown)).toEqual(
      Object.fromEntries(
        COUNTRY_RISK_LEVELS.map((level) => [level, String(counts.find((c) => c.level === level)?.plots ?? 0)]),
      ),
    );
    expect(counts.find((c) => c.level === 'unknown')?.plots).toBeGreaterThan(0);
    await page.screenshot({ path: resolve(ARTIFACTS, 'report-country-risk.png'), fullPage: true });

    // Back to readiness: the plot red again.
    await page.locator('input[name="colour-by"][value="readiness"]').check();
    await expect.poll(() => page.evaluate('window.ddsyncReport.drawn.colourBy')).toBe('readiness');
    expect(await canvasColourAt(page, await focusPlot(page, noCountry!.plot_id, 11))).toBe(notReady);
  });

  it('draws a plot the service sent as a LineString as a line, not ready', async () => {
    const { page } = opened;
    const i = written.model.plots.ids.indexOf(linePlot);
    expect(i).toBeGreaterThanOrEqual(0);
    expect(written.model.plots.lines[i]).toHaveLength(1);
    expect(written.model.plots.rings[i]).toEqual([]);
    expect(written.model.plots.state[i]).toBe(NOT_READY);
    const at = await focusPlot(page, linePlot, 16);
    expect(at.mode).toBe('polygons');
    expect(await page.evaluate('window.ddsyncReport.drawnIds()')).toContain(linePlot);
    expect(opened.pageErrors).toEqual([]);
  });

  it('shows a not-ready plot as its polygon when zoomed in, its summary on hover and its findings on click', async () => {
    const { page } = opened;
    const {
      rows: [target],
    } = await sql<{ plot_id: string; plot_name: string | null; findings: PlotFinding[]; country_risk_level: string }>`
      select r.plot_id, r.plot_name, r.findings, r.country_risk_level
      from bi_eudr_plot_readiness r join plots p on p.id = r.plot_id
      where not r.ready and p.geometry->>'type' = 'Polygon' and p.geometry_valid
        and r.plot_id = ${h.sim.control.oddRecords().deforested!}`.execute(h.db);
    expect(target, 'the deforested plot: not ready, a valid polygon').toBeDefined();
    expect(target!.plot_name).toBe(HOSTILE);
    const at = await focusPlot(page, target!.plot_id, 16);
    expect(at.mode).toBe('polygons');
    const ids = (await page.evaluate('window.ddsyncReport.drawnIds()')) as string[];
    expect(ids).toContain(target!.plot_id);

    // Hover: the tooltip names it and its codes.
    await page.mouse.move(at.x, at.y);
    const tooltip = page.locator('#map .tooltip');
    await expect.poll(() => tooltip.isVisible()).toBe(true);
    const summary = await tooltip.innerText();
    expect(summary).toContain(target!.plot_name || target!.plot_id);
    expect(summary).toContain('not ready');
    for (const f of target!.findings) expect(summary).toContain(f.code);

    // Click: the side panel lists every current finding, code, severity and sentence, in order.
    await page.mouse.click(at.x, at.y);
    await expect.poll(() => page.locator('#details .finding').count()).toBe(target!.findings.length);
    const shown = await page
      .locator('#details .finding')
      .evaluateAll((items) =>
        items.map((li) => [
          li.getAttribute('data-code'),
          li.querySelector('.severity')?.textContent,
          li.querySelector('.message')?.textContent,
        ]),
      );
    expect(shown).toEqual(target!.findings.map((f) => [f.code, f.severity, f.message]));
    expect(await page.locator('#details').innerText()).toContain(target!.plot_id);
    // Its country's risk level, as the view gives it (the simulator's countries are low or standard).
    expect(['low', 'standard']).toContain(target!.country_risk_level);
    const facts = await page
      .locator('#details dt')
      .evaluateAll((dts) => dts.map((dt) => [dt.textContent, dt.nextElementSibling?.textContent]));
    expect(facts).toContainEqual(['Country risk', target!.country_risk_level]);
    expect(summary).toContain(`country risk ${target!.country_risk_level}`);
    expect(await page.evaluate('window.ddsyncReport.selected')).toBe(target!.plot_id);
    // Its hostile name is text everywhere: shown as written, no element made of it, no script run.
    expect(await page.locator('#details h3').innerText()).toBe(HOSTILE);
    expect(await page.locator('img').count()).toBe(0);
    expect(await page.locator('#details b, #map b').count()).toBe(0);
    expect(await page.evaluate('window.pwned')).toBeUndefined();

    // A little further out, its neighbours around it, for the screenshot a person looks at.
    await focusPlot(page, target!.plot_id, 13);
    const screenshot = resolve(ARTIFACTS, 'report.png');
    await page.screenshot({ path: screenshot, fullPage: true });
    process.stdout.write(`report screenshots: ${screenshot}, ${resolve(ARTIFACTS, 'report-overview.png')}\n`);
  });
});
