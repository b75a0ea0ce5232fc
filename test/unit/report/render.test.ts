import { describe, it, expect } from 'vitest';
import { buildReportModel, NOT_READY, READY, UNKNOWN } from '../../../report/model.ts';
import { renderReport, type ReportAssets } from '../../../report/render.ts';
import { jsonForScript } from '../../../report/html.ts';
import { COUNTRY_RISK_COLOURS, READINESS_COLOURS } from '../../../report/page-data.ts';
import { reportFileName } from '../../../report/write.ts';
import { readReportAssets } from '../../../report/assets.ts';
import type { ReportPlotRow, ReportSupplierRow } from '../../../warehouse/report/read-report.ts';
import { remoteResources, reportData } from '../../support/report-html.ts';

// The renderer is pure: hand-made rows in, HTML out. Assets are stand-ins: what is checked is where
// they land, not Leaflet itself (test/postgis/report-browser.test.ts opens the real thing).
const ASSETS: ReportAssets = {
  leafletJs: 'window.L = {}; /* LEAFLET */',
  leafletCss: '/* https://bugs.example/1 */ .leaflet-container { color: red; }',
  topojsonClientJs: 'window.topojson = {}; /* TOPOJSON */',
  worldTopoJson: '{"type":"Topology","objects":{"countries":{"type":"GeometryCollection","geometries":[]}},"arcs":[]}',
  pageJs: 'window.ddsyncReport = {}; /* PAGE */',
};
const HOSTILE = '</script><img src=x onerror=alert(1)>';
const NOW = new Date('2026-11-23T20:45:00Z');

function plot(id: string, over: Partial<ReportPlotRow> = {}): ReportPlotRow {
  return {
    plotId: id,
    plotName: `Plot ${id}`,
    supplierIds: ['S1'],
    countryCode: 'CI',
    commodities: ['cocoa'],
    areaHa: 2.5,
    ready: true,
    findings: [],
    countryRiskLevel: 'standard',
    geometry: {
      type: 'Polygon',
      coordinates: [
        [
          [-5, 7],
          [-4.99, 7],
          [-4.99, 7.01],
          [-5, 7],
        ],
      ],
    },
    ...over,
  };
}
const SUPPLIER: ReportSupplierRow = {
  supplierId: 'S1',
  supplierName: 'Alpha Cocoa',
  plots: 2,
  plotsReady: 1,
  plotsNotReady: 1,
  hectares: 5,
  hectaresReady: 2.5,
  shareReady: 0.5,
  topReasons: [{ code: 'polygon_self_intersection', plots: 1 }],
  countryRiskLevel: 'standard',
  plotsCountryRiskLow: 0,
  simplifiedDueDiligenceEligible: false,
};
const header = { overlapChecked: false, lastRefreshAt: '2026-11-23T20:40:00.000Z', lastRefreshStatus: 'succeeded' };

function render(rows: ReportPlotRow[], options: { supplierRows?: ReportSupplierRow[]; supplier?: boolean } = {}) {
  const supplierRows = options.supplierRows ?? [SUPPLIER];
  const model = buildReportModel(rows, {
    generatedAt: NOW,
    header,
    supplierRows,
    supplier: options.supplier ? { id: 'S1', name: 'Alpha Cocoa' } : null,
  });
  return { model, html: renderReport(model, ASSETS) };
}

describe('the report renderer', () => {
  it("shows each supplier's country risk and eligibility for simplified due diligence, and each plot's country risk to the page", () => {
    const { html, model } = render(
      [
        plot('P1', { countryCode: 'GH', countryRiskLevel: 'low' }),
        plot('P2', { countryCode: 'BY', countryRiskLevel: 'high' }),
        plot('P3', { countryCode: null, countryRiskLevel: null }),
        plot('P4', { countryCode: 'GF', countryRiskLevel: 'unknown' }),
      ],
      {
        supplierRows: [
          { ...SUPPLIER, countryRiskLevel: 'low', plotsCountryRiskLow: 2, simplifiedDueDiligenceEligible: true },
          { ...SUPPLIER, supplierId: 'S2', countryRiskLevel: 'high', plots: 5, plotsCountryRiskLow: 3 },
          { ...SUPPLIER, supplierId: 'S3', plots: 0, countryRiskLevel: null, simplifiedDueDiligenceEligible: null },
        ],
      },
    );
    const cells = [...html.matchAll(/<td class="risk ([a-z]+)">([^<]*)<\/td>\s*<td class="sdd">([^<]*)<\/td>/g)].map(
      (m) => m.slice(1),
    );
    expect(cells).toEqual([
      ['low', 'low', 'eligible*'],
      ['high', 'high', 'no (3 of 5 plots low-risk)'],
      ['none', '–', '–'],
    ]);
    expect(html).toContain('<th>Country risk</th><th>Simplified due diligence (Art. 13)</th>');
    expect(html).toContain("subject to the operator's own assessment");
    // The page gets an index per plot into the levels it is told, -1 without a country.
    const data = reportData<{ plots: { countryRisk: number[] }; countryRiskLevels: string[] }>(html);
    expect(data.plots.countryRisk.map((i) => (i < 0 ? null : data.countryRiskLevels[i]))).toEqual([
      'low',
      'high',
      null,
      'unknown',
    ]);
    expect(model.plots.countryRisk).toEqual(data.plots.countryRisk);
  });

  it("offers a switch to colour the map by country risk, with a legend counting each level's plots (no country counts as unknown)", () => {
    const { html, model } = render([
      plot('P1', { countryCode: 'GH', countryRiskLevel: 'low' }),
      plot('P2', { countryCode: 'BY', countryRiskLevel: 'high' }),
      plot('P3', { countryCode: null, countryRiskLevel: null }),
      plot('P4', { countryCode: 'GF', countryRiskLevel: 'unknown' }),
      plot('P5', { countryCode: 'BR', countryRiskLevel: 'standard', geometry: null }),
    ]);
    expect(model.countryRisk).toEqual({ low: 1, standard: 1, high: 1, unknown: 2 });
    expect(html).toMatch(/<input type="radio" name="colour-by" value="readiness" checked>/);
    expect(html).toMatch(/<input type="radio" name="colour-by" value="risk">/);
    expect(html).toContain('<div data-legend="risk" hidden>');
    const legend = [
      ...html.matchAll(
        /<div data-level="([a-z]+)"><span class="swatch" style="background:(#[0-9a-f]{6})"><\/span>[^<]*<span class="count">(\d+)<\/span> (plots?)</g,
      ),
    ].map((m) => m.slice(1));
    // Most worrying first, each in the colour the page draws it with.
    expect(legend).toEqual([
      ['high', COUNTRY_RISK_COLOURS[2], '1', 'plot'],
      ['unknown', COUNTRY_RISK_COLOURS[3], '2', 'plots'],
      ['standard', COUNTRY_RISK_COLOURS[1], '1', 'plot'],
      ['low', COUNTRY_RISK_COLOURS[0], '1', 'plot'],
    ]);
    expect(html).toContain(`<span class="swatch" style="background:${READINESS_COLOURS[READY]}"></span>ready`);
  });

  it('keeps a hostile plot name, supplier name and finding message as text: nothing breaks out of the data or the page', () => {
    const { html } = render(
      [
        plot('P1', {
          plotName: HOSTILE,
          ready: false,
          findings: [{ code: 'polygon_self_intersection', severity: 'blocking', message: `crosses ${HOSTILE}` }],
        }),
      ],
      { supplierRows: [{ ...SUPPLIER, supplierName: HOSTILE, supplierId: `S1"><b>` }] },
    );
    // Exactly the script elements the renderer writes (data, world, leaflet, topojson, the page's own).
    expect(html.match(/<script\b/g)).toHaveLength(5);
    expect(html.match(/<\/script>/g)).toHaveLength(5);
    expect(html).not.toContain('<img');
    expect(html).not.toMatch(/<b>/);
    expect(html).toContain('&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;');
    // The embedded JSON reads back as the very text.
    const data = reportData<{ plots: { names: string[] }; findings: string[][] }>(html);
    expect(data.plots.names).toEqual([HOSTILE]);
    expect(data.findings[0]).toEqual(['polygon_self_intersection', 'blocking', `crosses ${HOSTILE}`]);
    expect(jsonForScript({ a: '</script><!-- \u2028' })).not.toMatch(/[<>\u2028]/);
  });

  it('inlines every library, style and the outlines and references no http(s) resource; a CSP forbids fetching', () => {
    const { html } = render([plot('P1')]);
    for (const marker of ['LEAFLET', 'TOPOJSON', '.leaflet-container', '"Topology"']) expect(html).toContain(marker);
    expect(html).toContain(`content="default-src 'none';`);
    expect(remoteResources(html)).toEqual([]);
    // CSS comments (leaflet's cite bug trackers) are dropped.
    expect(html).not.toContain('bugs.example');
    // The check itself catches what it is for.
    expect(remoteResources('<script src="https://cdn.example/leaflet.js"></script>')).toHaveLength(1);
    expect(remoteResources('<link rel="stylesheet" href="//cdn.example/x.css">')).toHaveLength(1);
    expect(remoteResources('<img srcset="https://x/y.png 2x">')).toHaveLength(1);
    expect(remoteResources('a { background: url("http://x/y.png") }')).toHaveLength(1);
  });

  it('with the real libraries and outlines from node_modules, still references no http(s) resource', async () => {
    const model = buildReportModel([plot('P1')], {
      generatedAt: NOW,
      header,
      supplierRows: [SUPPLIER],
      supplier: null,
    });
    const html = renderReport(model, await readReportAssets());
    expect(html).toContain('Leaflet 1.9.4');
    // The page's own script, bundled from report/page/: its switch and its window.ddsyncReport.
    expect(html).toContain('input[name="colour-by"]');
    expect(html).toContain('window.ddsyncReport = report');
    expect(remoteResources(html)).toEqual([]);
    // Leaflet's own source must not end its script element early.
    expect(html.match(/<\/script>/g)).toHaveLength(5);
  });

  it('says when, which warehouse mode, how many plots, and tabulates the suppliers with share ready and top reasons', () => {
    const { html, model } = render([
      plot('P1'),
      plot('P2', {
        ready: false,
        findings: [{ code: 'polygon_self_intersection', severity: 'blocking', message: 'The polygon crosses itself.' }],
      }),
      plot('P3', { ready: null, geometry: null }),
    ]);
    expect(model.totals).toMatchObject({ plots: 3, ready: 1, notReady: 1, unknown: 1, located: 2, hectares: 7.5 });
    expect(model.plots.state).toEqual([READY, NOT_READY, UNKNOWN]);
    expect(html).toContain('generated 2026-11-23 20:45 UTC');
    expect(html).toContain('refresh that ended 2026-11-23 20:40 UTC');
    expect(html).toContain('overlap check not run (no PostGIS in this warehouse)');
    expect(html).toMatch(/<strong id="total-plots">3<\/strong> plots/);
    expect(html).toMatch(/<strong id="total-not-ready">1<\/strong> not ready/);
    expect(html).toContain('without a position to map');
    expect(html).toMatch(
      /<tr data-supplier="S1">[\s\S]*Alpha Cocoa[\s\S]*50%[\s\S]*polygon_self_intersection<\/code> 1/,
    );
    expect(html).toContain('<svg class="chart"');
    const checked = renderReport({ ...model, overlapChecked: true }, ASSETS);
    expect(checked).toContain('overlap check run (PostGIS)');
  });

  it('says so for one supplier: its name in the header, its row only', () => {
    const { html } = render([plot('P1')], { supplier: true });
    expect(html).toContain('plots reached through <strong>Alpha Cocoa</strong> (<code>S1</code>)');
    expect(html).toContain('<title>EUDR readiness — Alpha Cocoa</title>');
    expect(reportFileName('S1')).toBe('ddsync-report-S1.html');
    expect(reportFileName('../we ird/id')).toBe('ddsync-report-.._we_ird_id.html');
    expect(reportFileName()).toBe('ddsync-report.html');
  });

  it('gives an empty warehouse a report that says there are no plots yet, without a map or its libraries', () => {
    const { html, model } = render([], { supplierRows: [] });
    expect(model.totals.plots).toBe(0);
    expect(html).toContain('<h2>No plots yet</h2>');
    expect(html).toContain('ddsync refresh --wait');
    expect(html).not.toContain('id="map"');
    expect(html).not.toContain('LEAFLET');
    expect(html).toContain('No supplier in the warehouse yet.');
  });

  it('embeds the lines of a LineString plot by its index, for those plots only, and leaves an unknown type off the map', () => {
    const { model, html } = render([
      plot('P1'),
      plot('P2', {
        geometry: {
          type: 'LineString',
          coordinates: [
            [-5, 7],
            [-4.99, 7.01],
          ],
        },
      }),
      plot('P3', { geometry: { type: 'Hexagon', coordinates: [1, 2] } }),
    ]);
    expect(Object.keys(model.plots.lines)).toEqual(['1']);
    expect(model.plots.rings[1]).toEqual([]);
    expect(model.plots.x[2]).toBeNull();
    expect(model.totals.located).toBe(2);
    expect(reportData<{ plots: { lines: Record<string, number[][]> } }>(html).plots.lines).toEqual(model.plots.lines);
  });

  it('stores repeated findings and suppliers once, and plots column by column', () => {
    const finding = { code: 'country_missing', severity: 'blocking' as const, message: 'The country is missing.' };
    const { model } = render([
      plot('P1', { ready: false, findings: [finding], supplierIds: ['S1', 'S2'] }),
      plot('P2', { ready: false, findings: [finding] }),
    ]);
    expect(model.findings).toEqual([['country_missing', 'blocking', 'The country is missing.']]);
    expect(model.plots.findings).toEqual([[0], [0]]);
    expect(model.suppliers).toEqual([
      ['S1', 'Alpha Cocoa'],
      ['S2', 'S2'],
    ]);
    expect(model.plots.suppliers).toEqual([[0, 1], [0]]);
    expect(model.reasons).toEqual([['country_missing', 2]]);
  });
});
