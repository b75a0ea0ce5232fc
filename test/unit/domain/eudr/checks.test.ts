import { describe, expect, it } from 'vitest';
import { coordinatePrecisionFindings, fewerThanSixDecimals } from '../../../../domain/eudr/coordinate-precision.ts';
import { countryFindings } from '../../../../domain/eudr/country-of-production.ts';
import { deforestationAnalysisFindings } from '../../../../domain/eudr/deforestation-analysis.ts';
import { polygonValidityFindings } from '../../../../domain/eudr/polygon-validity.ts';
import { productionPeriodFindings } from '../../../../domain/eudr/production-period.ts';
import { surfaceAreaFindings } from '../../../../domain/eudr/surface-area.ts';
import { assessGeometry } from '../../../../domain/geometry/geometry-quality.ts';
import { dateOrNull, type ValueIssue } from '../../../../domain/values.ts';
import { square } from './shapes.ts';

const codes = (found: Array<{ code: string }>) => found.map((f) => f.code);

describe('coordinate precision', () => {
  it('tells values of 5 decimals or fewer from values of 6 or more', () => {
    expect(fewerThanSixDecimals(5.12345)).toBe(true);
    expect(fewerThanSixDecimals(-76.5345)).toBe(true);
    expect(fewerThanSixDecimals(180)).toBe(true);
    expect(fewerThanSixDecimals(5.123456)).toBe(false);
    expect(fewerThanSixDecimals(-179.1234567)).toBe(false);
    expect(fewerThanSixDecimals(0.000001)).toBe(false);
  });

  it('flags a shape rounded to 4 decimals, not six-decimal data with some trailing zeros', () => {
    const rounded = square(-3.5312, 5.8512, 0.001).map(([lon, lat]) => [
      Math.round(lon! * 1e4) / 1e4,
      Math.round(lat! * 1e4) / 1e4,
    ]);
    const found = coordinatePrecisionFindings({ type: 'Polygon', coordinates: [rounded] });
    expect(codes(found)).toEqual(['coordinate_precision_low']);
    expect(found[0]!.details).toEqual({ values: 8, short: 8, limitShare: 0.5 });
    // Six decimals, one value of eight happening to end in 0 (printed with five).
    const honest = [
      [-3.531231, 5.85123],
      [-3.530231, 5.851231],
      [-3.530231, 5.852231],
      [-3.531231, 5.852231],
      [-3.531231, 5.85123],
    ];
    expect(coordinatePrecisionFindings({ type: 'Polygon', coordinates: [honest] })).toEqual([]);
    expect(codes(coordinatePrecisionFindings({ type: 'Point', coordinates: [-3.53, 5.85] }))).toEqual([
      'coordinate_precision_low',
    ]);
    expect(coordinatePrecisionFindings(null)).toEqual([]);
  });
});

describe('polygon validity', () => {
  it('turns the shape assessment into findings', () => {
    const outside = [
      [0.1234567, 0.1234567],
      [200.1234567, 0.1234567],
      [1.1234567, 1.1234567],
      [0.1234567, 0.1234567],
    ];
    expect(polygonValidityFindings(assessGeometry({ type: 'Polygon', coordinates: [outside] }))).toEqual([
      {
        code: 'coordinates_out_of_range',
        severity: 'blocking',
        message:
          'A position [200.1234567, 0.1234567] lies outside WGS84 range (longitude -180..180, latitude -90..90): coordinates swapped or not in degrees?',
        details: { position: [200.1234567, 0.1234567], polygon: 0, ring: 0 },
      },
    ]);
    expect(codes(polygonValidityFindings(assessGeometry({ type: 'Polygon', coordinates: [] })))).toEqual([
      'polygon_empty',
    ]);
    expect(
      codes(polygonValidityFindings(assessGeometry({ type: 'MultiPolygon', coordinates: [[square(0, 0, 0.01)], []] }))),
    ).toEqual(['polygon_empty']);
    expect(polygonValidityFindings(assessGeometry({ type: 'Polygon', coordinates: [square(0, 0, 0.01)] }))).toEqual([]);
  });

  it('a point is flagged as not a polygon by the shape assessment, with no area', () => {
    expect(assessGeometry({ type: 'Point', coordinates: [-3.5, 5.8] })).toEqual({
      areaHa: null,
      bbox: [-3.5, 5.8, -3.5, 5.8],
      valid: false,
      issue: 'a point, not a polygon (no area)',
      problem: { kind: 'point' },
      crossesAntimeridian: false,
    });
  });
});

describe('surface area', () => {
  const facts = assessGeometry({ type: 'Polygon', coordinates: [square(-3.5312345, 5.8512345, 0.01)] });
  const computed = facts.areaHa! * 10_000;

  it('accepts a difference within 10% or within 0.1 ha', () => {
    expect(surfaceAreaFindings(computed * 1.09, facts)).toEqual([]);
    expect(surfaceAreaFindings(computed * 0.91, facts)).toEqual([]);
    const small = assessGeometry({ type: 'Polygon', coordinates: [square(-3.5312345, 5.8512345, 0.0001)] });
    expect(surfaceAreaFindings(small.areaHa! * 10_000 + 900, small)).toEqual([]);
  });

  it('flags a difference beyond both, e.g. hectares sent as square metres', () => {
    const found = surfaceAreaFindings(computed / 10_000, facts);
    expect(codes(found)).toEqual(['surface_area_mismatch']);
    expect(found[0]!.severity).toBe('warning');
    expect(found[0]!.details).toMatchObject({ relativeTolerance: 0.1, absoluteToleranceM2: 1000 });
    expect(codes(surfaceAreaFindings(computed * 1.2, facts))).toEqual(['surface_area_mismatch']);
  });

  it('does not compare when nothing is reported or the shape is flagged', () => {
    expect(surfaceAreaFindings(null, facts)).toEqual([]);
    const bowTie = assessGeometry({
      type: 'Polygon',
      coordinates: [
        [
          [0, 0],
          [0.01, 0.01],
          [0.01, 0],
          [0, 0.01],
          [0, 0],
        ],
      ],
    });
    expect(surfaceAreaFindings(1, bowTie)).toEqual([]);
  });
});

describe('production period', () => {
  it('needs a date or a period', () => {
    expect(codes(productionPeriodFindings(null, undefined))).toEqual(['production_period_missing']);
    expect(codes(productionPeriodFindings('', ' '))).toEqual(['production_period_missing']);
    expect(productionPeriodFindings('2022-01-01', null)).toEqual([]);
    expect(productionPeriodFindings(null, '2022-01-01')).toEqual([]);
  });

  it('a start on or before 31 December 2020 is a warning; the day after is not', () => {
    const found = productionPeriodFindings('2020-12-31', '2021-06-30');
    expect(found).toEqual([
      {
        code: 'production_before_cutoff',
        severity: 'warning',
        message:
          "Production starts on 2020-12-31, on or before the cut-off date 2020-12-31: explain how the land's state at the cut-off is known.",
        details: { start: '2020-12-31', cutoff: '2020-12-31' },
      },
    ]);
    expect(productionPeriodFindings('2021-01-01', '2021-06-30')).toEqual([]);
    expect(codes(productionPeriodFindings('2019-05-01T00:00:00Z', null))).toEqual(['production_before_cutoff']);
    expect(productionPeriodFindings(null, '2020-06-30')[0]!.message).toMatch(
      /^Production is dated 2020-06-30, on or before/,
    );
  });

  it('an end before the start, or a text that is no date, is blocking', () => {
    expect(codes(productionPeriodFindings('2022-06-01', '2022-05-31'))).toEqual(['production_end_before_start']);
    expect(codes(productionPeriodFindings('2022-02-30', '2022-05-31'))).toEqual(['production_date_invalid']);
    expect(codes(productionPeriodFindings('2022-01-01', 'soon'))).toEqual(['production_date_invalid']);
    // Both bad: still one finding (a finding is one row per plot and code), naming both.
    const both = productionPeriodFindings('2022-02-30', 'soon');
    expect(codes(both)).toEqual(['production_date_invalid']);
    expect(both[0]!.details).toEqual({ productionDateStart: '2022-02-30', productionDateEnd: 'soon' });
  });

  it('reads a date as the warehouse stores it, so a finding never contradicts the stored column', () => {
    for (const text of [' 2022-01-01', '2022-1-1', '01/02/2022', '2022-02-29', '2022-13-01']) {
      const issues: ValueIssue[] = [];
      expect(dateOrNull(text, 'productionDateStart', issues), text).toBeNull();
      expect(codes(productionPeriodFindings(text, '2022-06-30')), text).toEqual(['production_date_invalid']);
    }
    for (const text of ['2022-01-01', '2024-02-29', '2022-01-01T00:00:00Z']) {
      expect(dateOrNull(text, 'productionDateStart', []), text).toBe(text.slice(0, 10));
      expect(productionPeriodFindings(text, '2024-06-30'), text).toEqual([]);
    }
  });
});

describe('deforestation analysis', () => {
  it('needs a succeeded analysis that reports no deforested area', () => {
    expect(codes(deforestationAnalysisFindings(null))).toEqual(['analysis_missing']);
    for (const status of ['PENDING', 'not started', 'started', null])
      expect(codes(deforestationAnalysisFindings({ id: 'a', status }))).toEqual(['analysis_pending']);
    expect(codes(deforestationAnalysisFindings({ id: 'a', status: 'failed' }))).toEqual(['analysis_failed']);
    expect(deforestationAnalysisFindings({ id: 'a', status: 'succeeded', deforestedArea: 0 })).toEqual([]);
    expect(deforestationAnalysisFindings({ id: 'a', status: 'succeeded' })).toEqual([]);
    const found = deforestationAnalysisFindings({
      id: 'a',
      type: 'EUFOROBS',
      status: 'succeeded',
      deforestedArea: 1234.5,
      riskOfDeforestation: 0.4,
    });
    expect(found).toEqual([
      {
        code: 'deforestation_detected',
        severity: 'blocking',
        message: 'The most recent deforestation analysis reports 1235 m² deforested after the cut-off date.',
        details: {
          analysisId: 'a',
          type: 'EUFOROBS',
          status: 'succeeded',
          deforestedAreaM2: 1234.5,
          riskOfDeforestation: 0.4,
        },
      },
    ]);
  });
});

describe('country of production', () => {
  it('is required, as a two-letter code', () => {
    expect(codes(countryFindings(null))).toEqual(['country_missing']);
    expect(codes(countryFindings('  '))).toEqual(['country_missing']);
    expect(codes(countryFindings("Côte d'Ivoire"))).toEqual(['country_code_invalid']);
    expect(countryFindings('CI')).toEqual([]);
  });
});
