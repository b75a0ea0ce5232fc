import { reasonsChart, supplierReadinessChart } from './charts.ts';
import { escapeHtml, jsonForScript, scriptText, styleText } from './html.ts';
import type { ReportModel } from './model.ts';
import {
  COUNTRY_RISK_COLOURS,
  COUNTRY_RISK_LEVELS,
  COUNTRY_RISK_ORDER,
  NOT_READY,
  type PageData,
  READINESS_COLOURS,
  READY,
  UNKNOWN,
} from './page-data.ts';
import { PAGE_STYLE } from './page-style.ts';

// The report as one HTML document: data → text, no I/O. Everything it needs is inside it (the
// libraries, the country outlines, the data), and its Content-Security-Policy forbids the browser to
// fetch anything at all: it opens the same offline, from a mail attachment or a file share.

/** The libraries and outlines the page inlines, read from node_modules by the caller (report/assets.ts). */
export interface ReportAssets {
  leafletJs: string;
  leafletCss: string;
  topojsonClientJs: string;
  /** world-atlas countries-110m.json (Natural Earth, TopoJSON) as text. */
  worldTopoJson: string;
  /** The page's own script, bundled from report/page/ (report/page-bundle.ts). */
  pageJs: string;
}

const CSP =
  "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'";

const count = (n: number) => n.toLocaleString('en-US');
const percent = (part: number, whole: number) => (whole === 0 ? '–' : `${Math.round((part / whole) * 100)}%`);

/** "2026-11-23 20:45 UTC" */
export function utcMinute(iso: string): string {
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}

function header(m: ReportModel): string {
  const t = m.totals;
  const scope = m.supplier
    ? `plots reached through <strong>${escapeHtml(m.supplier.name)}</strong> (<code>${escapeHtml(m.supplier.id)}</code>)`
    : 'every current plot in the warehouse';
  const refresh = m.lastRefreshAt
    ? `data of the refresh that ended ${utcMinute(m.lastRefreshAt)}${m.lastRefreshStatus === 'partial' ? ' (partial: a supplier could not be read)' : ''}`
    : 'no refresh has ended yet';
  const overlap = m.overlapChecked
    ? '<span class="mode on">overlap check run (PostGIS)</span>'
    : '<span class="mode off">overlap check not run (no PostGIS in this warehouse): land claimed twice is not detected</span>';
  return `<header>
<h1>EUDR geolocation readiness</h1>
<p class="scope">${scope} · generated ${utcMinute(m.generatedAt)} · ${refresh}</p>
<p class="mode-line">Warehouse mode: ${overlap}</p>
<ul class="totals">
<li><strong id="total-plots">${count(t.plots)}</strong> plots</li>
<li class="ready"><strong id="total-ready">${count(t.ready)}</strong> ready (${percent(t.ready, t.plots)})</li>
<li class="not-ready"><strong id="total-not-ready">${count(t.notReady)}</strong> not ready</li>
${t.unknown > 0 ? `<li class="unknown"><strong>${count(t.unknown)}</strong> unknown</li>` : ''}
<li><strong>${count(Math.round(t.hectares))}</strong> ha</li>
${t.located < t.plots ? `<li class="unknown"><strong>${count(t.plots - t.located)}</strong> without a position to map</li>` : ''}
</ul>
</header>`;
}

function mapSection(m: ReportModel): string {
  return `<section class="map-row">
<div id="map" aria-label="Map of the plots coloured by readiness or by country risk"></div>
<aside>
<div class="legend">
<fieldset class="colour-by"><legend>Colour plots by</legend>
<label><input type="radio" name="colour-by" value="readiness" checked> readiness</label>
<label><input type="radio" name="colour-by" value="risk"> country risk</label>
</fieldset>
<div data-legend="readiness">
<div><span class="swatch" style="background:${READINESS_COLOURS[READY]}"></span>ready</div>
<div><span class="swatch" style="background:${READINESS_COLOURS[NOT_READY]}"></span>not ready (a blocking finding)</div>
<div><span class="swatch" style="background:${READINESS_COLOURS[UNKNOWN]}"></span>readiness unknown</div>
<div class="scale"><span class="gradient"></span>zoomed out: discs gather the plots near each other, coloured by their share ready (red 0% → green 100%)</div>
</div>
${riskLegend(m)}
</div>
<div id="details"><p class="hint">Hover over a plot for its summary; click it for its findings. Zoom in to see polygons (${count(m.totals.located)} plots on the map). Click a supplier below to go to its plots.</p></div>
</aside>
</section>`;
}

/** The legend of the country risk colouring, shown when it is chosen: each level with its plots. */
function riskLegend(m: ReportModel): string {
  const levels = [...COUNTRY_RISK_ORDER].reverse();
  const rows = levels.map((level) => {
    const colour = COUNTRY_RISK_COLOURS[COUNTRY_RISK_LEVELS.indexOf(level)];
    const label = level === 'unknown' ? 'unknown (level not settled, or no country)' : `${level} risk`;
    return `<div data-level="${level}"><span class="swatch" style="background:${colour}"></span>${label}: <span class="count">${count(m.countryRisk[level])}</span> ${m.countryRisk[level] === 1 ? 'plot' : 'plots'}</div>`;
  });
  return `<div data-legend="risk" hidden>
${rows.join('\n')}
<div class="scale">the country of production's level under the Commission's benchmarking (docs/country-risk.md); zoomed out, a disc takes the highest level among its plots (high, then unknown, standard, low), as a supplier's country risk does</div>
</div>`;
}

function reasonCell(reasons: Array<{ code: string; plots: number }>): string {
  if (reasons.length === 0) return '';
  return reasons.map((r) => `<code>${escapeHtml(r.code)}</code> ${count(r.plots)}`).join('<br>');
}

/** "eligible*" (every plot low-risk), "no (3 of 5 plots low-risk)", or "–" without plots. */
function eligibility(s: ReportModel['supplierRows'][number]): string {
  if (s.simplifiedDueDiligenceEligible === null) return '–';
  if (s.simplifiedDueDiligenceEligible) return 'eligible*';
  return `no (${count(s.plotsCountryRiskLow)} of ${count(s.plots)} plots low-risk)`;
}

function supplierTable(m: ReportModel): string {
  if (m.supplierRows.length === 0) return '<p class="empty">No supplier in the warehouse yet.</p>';
  const rows = m.supplierRows.map(
    (s) => `<tr data-supplier="${escapeHtml(s.supplierId)}">
<td>${escapeHtml(s.supplierName)}<br><code>${escapeHtml(s.supplierId)}</code></td>
<td class="n">${count(s.plots)}</td><td class="n">${count(s.plotsReady)}</td><td class="n">${count(s.plotsNotReady)}</td>
<td class="n">${count(Math.round(s.hectares * 10) / 10)}</td><td class="n">${count(Math.round(s.hectaresReady * 10) / 10)}</td>
<td class="n share">${s.shareReady === null ? '–' : `${Math.round(s.shareReady * 100)}%`}</td>
<td>${reasonCell(s.topReasons)}</td>
<td class="risk ${escapeHtml(s.countryRiskLevel ?? 'none')}">${escapeHtml(s.countryRiskLevel ?? '–')}</td>
<td class="sdd">${eligibility(s)}</td></tr>`,
  );
  return `<table id="suppliers">
<thead><tr><th>Supplier</th><th>Plots</th><th>Ready</th><th>Not ready</th><th>Hectares</th><th>Hectares ready</th><th>Share ready</th><th>Top blocking reasons (plots)</th><th>Country risk</th><th>Simplified due diligence (Art. 13)</th></tr></thead>
<tbody>${rows.join('')}</tbody>
</table>
<p class="note">A plot reached through two suppliers counts for each. Country risk: the highest level, under the Commission's benchmarking (Implementing Regulation (EU) 2025/1093, from a third-party transcription), of the countries of production of the supplier's plots; unknown when a country's level is not settled or a plot has none. Simplified due diligence: every plot lies in a low-risk country, so the supplier is eligible as far as the countries go, subject to the operator's own assessment of the risk of circumvention and of mixing (Art. 13(1)); see docs/country-risk.md.</p>`;
}

/** The whole report. */
export function renderReport(m: ReportModel, assets: ReportAssets): string {
  const empty = m.totals.plots === 0;
  const title = m.supplier ? `EUDR readiness — ${m.supplier.name}` : 'EUDR readiness — ddsync report';
  const body = empty
    ? `<section class="empty-report"><h2>No plots yet</h2><p>${
        m.supplier
          ? 'No current plot is reached through this supplier.'
          : 'The warehouse has no current plot: run <code>ddsync refresh --wait</code>, then <code>ddsync report</code> again.'
      }</p></section>`
    : mapSection(m);
  // The page needs the plots, the finding and supplier tables; the rest is in the HTML already.
  const pageData: PageData = {
    plots: m.plots,
    findings: m.findings,
    suppliers: m.suppliers,
    overlapChecked: m.overlapChecked,
    countryRiskLevels: COUNTRY_RISK_LEVELS,
  };
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${CSP}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="ddsync report">
<title>${escapeHtml(title)}</title>
<style>${styleText(assets.leafletCss)}</style>
<style>${PAGE_STYLE}</style>
</head>
<body>
${header(m)}
<main>
${body}
<section class="charts">
<div><h2>Readiness per supplier</h2>${supplierReadinessChart(m)}</div>
<div><h2>Why plots are not ready</h2>${reasonsChart(m)}</div>
</section>
<section><h2>Suppliers</h2>${supplierTable(m)}</section>
</main>
<footer>Made by ddsync from the warehouse views bi_eudr_plot_readiness and bi_eudr_supplier_readiness (docs/eudr-readiness.md, docs/report.md). Map drawn with Leaflet; country outlines: Natural Earth (public domain) via world-atlas. Opens offline: nothing is fetched.</footer>
<script type="application/json" id="ddsync-data">${jsonForScript(pageData)}</script>
${empty ? '' : `<script type="application/json" id="ddsync-world">${jsonForScript(JSON.parse(assets.worldTopoJson))}</script>`}
${empty ? '' : `<script>${scriptText(assets.leafletJs)}</script>\n<script>${scriptText(assets.topojsonClientJs)}</script>`}
<script>${scriptText(assets.pageJs)}</script>
</body>
</html>
`;
}
