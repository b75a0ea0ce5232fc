import type { ReportModel } from './model.ts';
import { escapeHtml } from './html.ts';

// The report's charts as inline SVG, drawn here and not in the page: they show without scripts and
// cost nothing to open. Pure.

const READY_COLOUR = '#1a9850';
const NOT_READY_COLOUR = '#d7301f';
const BAR_COLOUR = '#6a51a3';
/** Suppliers in the readiness chart: the ones with most plots not ready (the table lists them all). */
export const CHART_SUPPLIERS = 20;
const REASONS = 8;

const percent = (share: number) => `${Math.round(share * 100)}%`;
const count = (n: number) => n.toLocaleString('en-US');

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** Per supplier: a bar as long as its plots, green for ready, red for not ready. */
export function supplierReadinessChart(model: ReportModel): string {
  const rows = model.supplierRows.filter((s) => s.plots > 0).slice(0, CHART_SUPPLIERS);
  if (rows.length === 0) return '<p class="empty">No supplier has plots yet.</p>';
  const label = 250;
  const bar = 400;
  const height = 22;
  const max = Math.max(...rows.map((s) => s.plots));
  const lines = rows.map((s, i) => {
    const y = i * height;
    const readyWidth = (s.plotsReady / max) * bar;
    const notReadyWidth = (s.plotsNotReady / max) * bar;
    const share = s.shareReady === null ? '' : `${percent(s.shareReady)} ready`;
    return [
      `<g class="bar" data-supplier="${escapeHtml(s.supplierId)}"><title>${escapeHtml(s.supplierName)}: ${count(s.plotsReady)} of ${count(s.plots)} plots ready</title>`,
      `<text x="${label - 6}" y="${y + 15}" text-anchor="end">${escapeHtml(clip(s.supplierName, 34))}</text>`,
      `<rect x="${label}" y="${y + 3}" width="${readyWidth.toFixed(1)}" height="${height - 6}" fill="${READY_COLOUR}"/>`,
      `<rect x="${(label + readyWidth).toFixed(1)}" y="${y + 3}" width="${notReadyWidth.toFixed(1)}" height="${height - 6}" fill="${NOT_READY_COLOUR}"/>`,
      `<text x="${(label + readyWidth + notReadyWidth + 6).toFixed(1)}" y="${y + 15}">${count(s.plots)} plots · ${share}</text></g>`,
    ].join('');
  });
  const more =
    model.supplierRows.filter((s) => s.plots > 0).length > rows.length
      ? `<p class="note">The ${rows.length} suppliers with most plots not ready; the table lists every one.</p>`
      : '';
  return `<svg class="chart" role="img" aria-label="Plots ready and not ready per supplier" viewBox="0 0 ${label + bar + 170} ${rows.length * height}" width="${label + bar + 170}" height="${rows.length * height}">${lines.join('')}</svg>${more}`;
}

/** The most frequent blocking codes over the report's plots. */
export function reasonsChart(model: ReportModel): string {
  const rows = model.reasons.slice(0, REASONS);
  if (rows.length === 0)
    return '<p class="empty">No blocking finding: every plot is ready as far as the checks tell.</p>';
  const label = 230;
  const bar = 300;
  const height = 22;
  const max = rows[0]![1];
  const lines = rows.map(([code, plots], i) => {
    const y = i * height;
    const width = (plots / max) * bar;
    return `<g><text x="${label - 6}" y="${y + 15}" text-anchor="end">${escapeHtml(clip(code, 34))}</text><rect x="${label}" y="${y + 3}" width="${width.toFixed(1)}" height="${height - 6}" fill="${BAR_COLOUR}"/><text x="${(label + width + 6).toFixed(1)}" y="${y + 15}">${count(plots)} ${plots === 1 ? 'plot' : 'plots'}</text></g>`;
  });
  return `<svg class="chart" role="img" aria-label="Most frequent blocking reasons" viewBox="0 0 ${label + bar + 110} ${rows.length * height}" width="${label + bar + 110}" height="${rows.length * height}">${lines.join('')}</svg>`;
}
