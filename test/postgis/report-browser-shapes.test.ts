import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { readReportAssets } from '../../report/assets.ts';
import { buildReportModel } from '../../report/model.ts';
import { NOT_READY, READINESS_COLOURS } from '../../report/page-data.ts';
import { renderReport } from '../../report/render.ts';
import type { ReportPlotRow } from '../../warehouse/report/read-report.ts';
import { canvasColourAt, drawn, focusPlot, launchChromium, openReport } from '../support/report-browser.ts';
import { scratchDir } from '../support/scratch.ts';

// Geometry types the EU refuses, as the page meets them: a LineString and a MultiLineString are drawn
// as lines (hover and click find them), a MultiPoint and a type no GeoJSON has stay off the map, and
// the page runs without an error. Hand-made rows (the simulator sends polygons and points), rendered
// with the real libraries and the bundled page script, opened in headless Chromium.
const square = (lon: number, lat: number) => ({
  type: 'Polygon',
  coordinates: [
    [
      [lon, lat],
      [lon + 0.002, lat],
      [lon + 0.002, lat + 0.002],
      [lon, lat + 0.002],
      [lon, lat],
    ],
  ],
});

function row(plotId: string, geometry: unknown, ready: boolean): ReportPlotRow {
  return {
    plotId,
    plotName: `Plot ${plotId}`,
    supplierIds: ['S1'],
    countryCode: 'CI',
    commodities: ['cocoa'],
    areaHa: 4,
    ready,
    findings: ready ? [] : [{ code: 'geometry_type_refused', severity: 'blocking', message: 'The EU refuses lines.' }],
    countryRiskLevel: 'standard',
    geometry,
  };
}

describe('the report page and the geometry types the EU refuses', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('draws a LineString and a MultiLineString as lines, finds them under the mouse, and leaves a MultiPoint and an unknown type off the map', async () => {
    const rows = [
      row('polygon', square(-4.994, 7), true),
      row(
        'line',
        {
          type: 'LineString',
          coordinates: [
            [-4.99, 7.001],
            [-4.985, 7.001],
          ],
        },
        false,
      ),
      row(
        'lines',
        {
          type: 'MultiLineString',
          coordinates: [
            [
              [-4.984, 7],
              [-4.981, 7],
            ],
            [
              [-4.984, 7.003],
              [-4.981, 7.003],
            ],
          ],
        },
        false,
      ),
      row(
        'multipoint',
        {
          type: 'MultiPoint',
          coordinates: [
            [-4.97, 7],
            [-4.96, 7],
          ],
        },
        false,
      ),
      row('hexagon', { type: 'Hexagon', coordinates: [-4.95, 7] }, false),
    ];
    const model = buildReportModel(rows, {
      generatedAt: new Date('2026-11-26T04:00:00Z'),
      header: { overlapChecked: false, lastRefreshAt: null, lastRefreshStatus: null },
      supplierRows: [],
      supplier: null,
    });
    expect(model.totals.located).toBe(3);
    const file = join(scratchDir('report-shapes'), 'report.html');
    writeFileSync(file, renderReport(model, await readReportAssets()));
    const opened = await openReport(browser, file);
    const { page } = opened;
    try {
      expect(opened.pageErrors).toEqual([]);
      expect(await page.evaluate('window.ddsyncReport.plots')).toBe(5);

      // Zoomed in on the line: drawn one by one with the polygon and the other lines, not the others.
      const line = await focusPlot(page, 'line', 16);
      expect(line.mode).toBe('polygons');
      expect(((await page.evaluate('window.ddsyncReport.drawnIds()')) as string[]).sort()).toEqual([
        'line',
        'lines',
        'polygon',
      ]);
      expect(await page.evaluate('window.ddsyncReport.focusPlot("multipoint", 16)')).toBeNull();
      expect(await page.evaluate('window.ddsyncReport.focusPlot("hexagon", 16)')).toBeNull();

      // The line (horizontal, 2.5 px) is stroked in its readiness colour through its middle, and not
      // filled: 20 px above its middle nothing is drawn. The polygon's inside is filled.
      expect(await canvasColourAt(page, line)).toBe(READINESS_COLOURS[NOT_READY]);
      expect(await canvasColourAt(page, { x: line.x, y: line.y - 20 })).toBe('#00000000');
      const polygon = await focusPlot(page, 'polygon', 16);
      // (translucent: premultiplied, so its channels come back rounded, #1b995073 for ready's #1a9850)
      const fill = await canvasColourAt(page, polygon);
      expect(fill).toMatch(/^#[0-9a-f]{8}$/);
      expect(fill).not.toBe('#00000000');

      // Hover and click find the line (within a few pixels of it); the panel shows its finding.
      await focusPlot(page, 'line', 16);
      await page.mouse.move(line.x, line.y + 3);
      await expect.poll(() => page.locator('#map .tooltip').innerText()).toContain('Plot line — not ready');
      await page.mouse.click(line.x, line.y);
      await expect.poll(() => page.evaluate('window.ddsyncReport.selected')).toBe('line');
      expect(await page.locator('#details .finding code').innerText()).toBe('geometry_type_refused');

      // Zoomed out, the three plots with a place are counted; nothing went wrong in the page.
      await page.evaluate('window.ddsyncReport.focusPlot("polygon", 3)');
      expect(await drawn(page)).toMatchObject({ mode: 'cells', plots: 3 });
      expect(opened.pageErrors).toEqual([]);
    } finally {
      await page.context().close();
    }
  });
});
