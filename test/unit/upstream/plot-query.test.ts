import { describe, expect, it } from 'vitest';
import { buildPlotQuery, effectiveLimit, type PlotQuery } from '../../../upstream/plot-query.ts';
import { RequestValidationError } from '../../../upstream/errors.ts';

function refused(query: unknown, page?: unknown, limit?: unknown): RequestValidationError {
  try {
    buildPlotQuery(query as PlotQuery, page as number, limit as number);
  } catch (e) {
    expect(e).toBeInstanceOf(RequestValidationError);
    return e as RequestValidationError;
  }
  throw new Error('expected a RequestValidationError');
}

describe('plot query builder', () => {
  it('renders each filter with its allowed operation, $not, and repeats params for several values', () => {
    const q = buildPlotQuery(
      {
        filter: {
          commodities: [
            { op: '$contains', value: 'cocoa' },
            { op: '$contains', value: 'oil palm', not: true },
          ],
          countryCode: [{ op: '$eq', value: 'CI' }],
          riskAssessmentStatus: [{ op: '$eq', value: 'NEW', not: true }],
          areaHa: [
            { op: '$gte', value: 1.5 },
            { op: '$lte', value: 20 },
          ],
        },
      },
      2,
      500,
    );
    expect(q.get('page')).toBe('2');
    expect(q.get('limit')).toBe('500');
    expect(q.getAll('filter.commodities')).toEqual(['$contains:cocoa', '$not:$contains:oil palm']);
    expect(q.getAll('filter.countryCode')).toEqual(['$eq:CI']);
    expect(q.getAll('filter.riskAssessmentStatus')).toEqual(['$not:$eq:NEW']);
    expect(q.getAll('filter.areaHa')).toEqual(['$gte:1.5', '$lte:20']);
    expect(q.toString()).toContain('filter.commodities=%24not%3A%24contains%3Aoil+palm');
  });

  it('renders select and includes as comma lists', () => {
    const q = buildPlotQuery({
      select: ['id', 'name', 'geometry'],
      includes: ['mostRecentAnalysis', 'mostRecentAnalysesByType'],
    });
    expect(q.get('select')).toBe('id,name,geometry');
    expect(q.get('includes')).toBe('mostRecentAnalysis,mostRecentAnalysesByType');
    expect(buildPlotQuery({ includes: ['minimumAnalysisResults', 'riskLevel'] }).get('includes')).toBe(
      'minimumAnalysisResults,riskLevel',
    );
    expect(buildPlotQuery({ includes: ['suppliers'] }).get('includes')).toBe('suppliers');
  });

  it('refuses an operation not allowed on the field', () => {
    expect(refused({ filter: { commodities: [{ op: '$eq', value: 'cocoa' }] } }).message).toMatch(
      /filter\.commodities\[0\]\.op: operation "\$eq" not allowed on commodities \(allowed: \$contains\)/,
    );
    expect(refused({ filter: { countryCode: [{ op: '$contains', value: 'C' }] } }).message).toMatch(
      /not allowed on countryCode/,
    );
    expect(refused({ filter: { riskAssessmentStatus: [{ op: '$gte', value: 'NEW' }] } }).message).toMatch(
      /not allowed on riskAssessmentStatus/,
    );
    expect(refused({ filter: { areaHa: [{ op: '$eq', value: 3 }] } }).message).toMatch(/allowed: \$gte, \$lte/);
  });

  it('refuses unknown operations, unknown fields and non-numeric areaHa', () => {
    expect(refused({ filter: { commodities: [{ op: '$in', value: 'a,b' }] } }).message).toMatch(
      /operation "\$in" not allowed/,
    );
    expect(refused({ filter: { surfaceArea: [{ op: '$gte', value: 1 }] } }).message).toMatch(
      /filter\.surfaceArea: unknown filter field/,
    );
    expect(refused({ filter: { areaHa: [{ op: '$gte', value: 'ten' }] } }).message).toMatch(
      /areaHa must be a non-negative number of hectares, got "ten"/,
    );
    expect(refused({ filter: { areaHa: [{ op: '$gte', value: Number.NaN }] } }).message).toMatch(/areaHa must be/);
    expect(refused({ filter: { areaHa: [{ op: '$lte', value: -1 }] } }).message).toMatch(/areaHa must be/);
    expect(refused({ filter: { countryCode: [{ op: '$eq', value: '' }] } }).message).toMatch(
      /expected a non-empty string/,
    );
    // A numeric string is a number: accepted and normalised.
    expect(
      buildPlotQuery({ filter: { areaHa: [{ op: '$gte', value: '2.5' as unknown as number }] } }).get('filter.areaHa'),
    ).toBe('$gte:2.5');
  });

  it('refuses includes beyond one relation except the two allowed pairs, unknown names and duplicates', () => {
    expect(refused({ includes: ['suppliers', 'riskLevel'] }).message).toMatch(
      /combination suppliers\+riskLevel not allowed/,
    );
    expect(refused({ includes: ['mostRecentAnalysis', 'riskLevel'] }).message).toMatch(/not allowed/);
    expect(refused({ includes: ['mostRecentAnalysis', 'mostRecentAnalysesByType', 'suppliers'] }).message).toMatch(
      /not allowed/,
    );
    expect(refused({ includes: ['owner'] }).message).toMatch(/unknown relation "owner"/);
    expect(refused({ includes: ['riskLevel', 'riskLevel'] }).message).toMatch(/listed twice/);
  });

  it('refuses a select without id or with odd names, and invalid page or limit', () => {
    expect(refused({ select: ['name'] }).message).toMatch(/select: must include id/);
    expect(refused({ select: ['id', 'name;drop'] }).message).toMatch(/invalid field name/);
    expect(refused({}, 0).message).toMatch(/page: must be a positive integer, got 0/);
    expect(refused({}, 1.5).message).toMatch(/page: must be a positive integer/);
    expect(refused({}, 'abc').message).toMatch(/page: must be a positive integer, got "abc"/);
    expect(refused({}, 1, 0).message).toMatch(/limit: must be a positive integer/);
  });

  it('sends the limit the server applies (clamped at 500)', () => {
    expect(effectiveLimit(1000)).toBe(500);
    expect(effectiveLimit(100)).toBe(100);
    expect(buildPlotQuery({}, 1, 2000).get('limit')).toBe('500');
  });

  it('names the endpoint in the error', () => {
    expect(refused({ includes: ['x'] }).endpoint).toBe('GET /businesses/{businessId}/plots');
  });
});
