import { describe, it, expect } from 'vitest';
import { isAllowedPlotRelationSet } from '../../../../schema/upstream/plot-rules.ts';

describe("plot relations asked for together: one alone, or one of the contract's pairs", () => {
  const cases: Array<[string[], boolean]> = [
    [[], true],
    [['suppliers'], true],
    [['riskLevel'], true],
    [['mostRecentAnalysis', 'mostRecentAnalysesByType'], true],
    [['mostRecentAnalysesByType', 'mostRecentAnalysis'], true],
    [['minimumAnalysisResults', 'riskLevel'], true],
    [['riskLevel', 'minimumAnalysisResults'], true],
    [['mostRecentAnalysis', 'riskLevel'], false],
    [['suppliers', 'riskLevel'], false],
    [['mostRecentAnalysis', 'mostRecentAnalysesByType', 'riskLevel'], false],
    [['minimumAnalysisResults', 'riskLevel', 'mostRecentAnalysis', 'mostRecentAnalysesByType'], false],
  ];
  it.each(cases)('%j → %j', (names, ok) => {
    expect(isAllowedPlotRelationSet(names)).toBe(ok);
  });
});
