import type { Analysis } from '../../schema/upstream.ts';
import { finding, type Finding } from './finding.ts';

/**
 * The plot's most recent deforestation analysis (the service's mostRecentAnalysis). The regulation
 * requires the product to be deforestation-free (Art. 3(a); 'deforestation-free', Art. 2(13)) and
 * the operator to conclude that the risk is negligible (Art. 10); the analysis is the evidence the
 * service gives. Our rule: a plot is ready only with a succeeded analysis that reports no deforested
 * area; missing, still pending, failed, or reporting deforestation after the cut-off blocks it. The
 * deforested area is taken as the service reports it (it analyses the land since the cut-off).
 */
const PENDING = new Set(['pending', 'not_started', 'started']);

export function deforestationAnalysisFindings(analysis: Analysis | null | undefined): Finding[] {
  if (!analysis)
    return [
      finding('analysis_missing', 'The plot has no deforestation analysis, so nothing shows it is deforestation-free.'),
    ];
  const status = normalised(analysis.status);
  const about = { analysisId: analysis.id, type: analysis.type ?? null, status: analysis.status ?? null };
  if (status !== null && PENDING.has(status))
    return [
      finding(
        'analysis_pending',
        `The most recent deforestation analysis (${analysis.type ?? 'unknown type'}) has not finished (${analysis.status}).`,
        about,
      ),
    ];
  if (status === 'failed')
    return [
      finding(
        'analysis_failed',
        `The most recent deforestation analysis (${analysis.type ?? 'unknown type'}) failed.`,
        about,
      ),
    ];
  if (status !== 'succeeded')
    return [
      finding(
        'analysis_pending',
        `The most recent deforestation analysis has no result yet (status ${analysis.status ?? 'missing'}).`,
        about,
      ),
    ];
  const deforested = analysis.deforestedArea;
  if (typeof deforested === 'number' && deforested > 0)
    return [
      finding(
        'deforestation_detected',
        `The most recent deforestation analysis reports ${deforested.toFixed(0)} m² deforested after the cut-off date.`,
        { ...about, deforestedAreaM2: deforested, riskOfDeforestation: analysis.riskOfDeforestation ?? null },
      ),
    ];
  return [];
}

function normalised(status: string | null | undefined): string | null {
  if (typeof status !== 'string') return null;
  const s = status
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, '_');
  return s === '' ? null : s;
}
