import type { DemoFigures } from '../warehouse/demo-figures.ts';
import { fmt } from './progress.ts';

export function formatDemoFigures(f: DemoFigures, plotsAtSource: number): string {
  const lines = [
    `warehouse: ${fmt(f.plots)} current plots (the simulator serves ${fmt(plotsAtSource)}), ${fmt(f.suppliers)} suppliers, ${fmt(f.analyses)} analyses, ${fmt(f.hectares)} ha`,
    `           ${fmt(f.flaggedPlots)} plots flagged (risk high/medium or mitigation/non-compliant), ${fmt(f.invalidGeometries)} with an invalid polygon (stored, flagged)`,
    `EUDR readiness (bi_eudr_plot_readiness): ${fmt(f.plotsReady)} plots ready, ${fmt(f.plotsNotReady)} not ready; overlap check ${f.overlapChecked ? 'run (PostGIS)' : 'not run (no PostGIS)'}`,
    'most flagged (bi_risk_overview):',
  ];
  for (const r of f.risk) {
    lines.push(
      `  ${r.supplier_name.slice(0, 34).padEnd(34)} ${r.commodity.padEnd(9)} ${r.country_code ?? '--'}  ${fmt(r.plots).padStart(6)} plots ${fmt(r.hectares).padStart(8)} ha  ${(r.flagged_share * 100).toFixed(1).padStart(5)}% flagged`,
    );
  }
  return lines.join('\n');
}
