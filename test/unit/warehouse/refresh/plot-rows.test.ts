import { describe, it, expect } from 'vitest';
import { toPlotRows } from '../../../../warehouse/refresh/plot-rows.ts';
import { assessGeometry } from '../../../../domain/geometry/geometry-quality.ts';
import { normalisePlot } from '../../../../upstream/index.ts';
import { samplePlot } from '../../upstream/samples.ts';
import type { Plot } from '../../../../schema/upstream.ts';

// The shared sample's ring winds past 2π (it crosses itself); these tests want a valid polygon.
const ring = Array.from({ length: 40 }, (_, k) => [
  10 + Math.cos((2 * Math.PI * k) / 40) * 0.01,
  5 + Math.sin((2 * Math.PI * k) / 40) * 0.01,
]);
const circle = { type: 'Polygon', coordinates: [[...ring, ring[0]]] };
const plot = (i: number, overrides: Record<string, unknown> = {}): Plot =>
  normalisePlot(samplePlot(i, { geometry: circle, ...overrides }), 'test');

describe('plot rows', () => {
  it('maps every field to its column, with the area from the polygon and the surface area in m²', () => {
    const { rows, issues } = toPlotRows(plot(1), false);
    expect(issues).toEqual([]);
    expect(rows.plot).toMatchObject({
      id: '00000000-0000-4000-8000-000000000001',
      name: 'Plot 1',
      country_code: 'CI',
      commodities: ['cocoa'],
      surface_area_m2: 12_345.6,
      geometry_valid: true,
      geometry_issue: null,
      risk_assessment_status: 'NEW',
      risk_level: 'none',
      production_date_start: null,
      production_date_end: '2024-06-01',
      filename: null,
      owner_id: 'o-1',
      is_own: false,
      most_recent_analysis_id: 'a-1',
      euforobs_analysis_id: 'a-1',
      precision_analysis_id: null,
      created_at: '2024-01-01T00:00:00.000Z',
    });
    expect(rows.plot.area_ha).toBeGreaterThan(0);
    expect(rows.plot.bbox_min_lon).toBeLessThan(rows.plot.bbox_max_lon!);
    expect(JSON.parse(rows.plot.geometry!)).toEqual(circle);
    expect(rows.species).toEqual([
      { plot_id: rows.plot.id, position: 0, scientific_name: 'Theobroma cacao', common_name: 'cocoa' },
    ]);
  });

  it('keeps each analysis once, marking the most recent overall and per type', () => {
    const precision = { id: 'p-9', type: 'PRECISION', status: 'succeeded', analysedAt: '2024-03-01T00:00:00.000Z' };
    const { rows } = toPlotRows(
      plot(2, {
        mostRecentAnalysis: precision,
        mostRecentAnalysesByType: { EUFOROBS: { id: 'e-1', type: 'EUFOROBS' }, PRECISION: precision },
      }),
      false,
    );
    expect(rows.analyses.map((a) => [a.id, a.is_most_recent, a.is_most_recent_of_type]).sort()).toEqual([
      ['e-1', false, true],
      ['p-9', true, true],
    ]);
    expect(rows.plot).toMatchObject({
      most_recent_analysis_id: 'p-9',
      euforobs_analysis_id: 'e-1',
      precision_analysis_id: 'p-9',
    });
    expect(rows.analyses.every((a) => a.plot_id === rows.plot.id)).toBe(true);
  });

  it('stores a value that is not what its column holds as null and reports it, without losing the plot', () => {
    const { rows, issues } = toPlotRows(plot(3, { productionDateStart: '2024-02-30', createdAt: 'yesterday' }), false);
    expect(rows.plot.production_date_start).toBeNull();
    expect(rows.plot.created_at).toBeNull();
    expect(issues).toEqual([
      { field: 'productionDateStart', rule: 'expected a date (YYYY-MM-DD)' },
      { field: 'createdAt', rule: 'expected an ISO 8601 date-time' },
    ]);
  });

  it('changes the content hash with any change, and the history hash only with tracked attributes', () => {
    const base = toPlotRows(plot(4), false).rows.plot;
    expect(toPlotRows(plot(4), false).rows.plot.content_hash).toBe(base.content_hash);
    const renamed = toPlotRows(plot(4, { name: 'Other' }), false).rows.plot;
    expect(renamed.content_hash).not.toBe(base.content_hash);
    expect(renamed.history_hash).toBe(base.history_hash);
    const risky = toPlotRows(plot(4, { riskLevel: 'high' }), false).rows.plot;
    expect(risky.history_hash).not.toBe(base.history_hash);
    const species = toPlotRows(plot(4, { species: [] }), false).rows.plot;
    expect(species.content_hash).not.toBe(base.content_hash);
  });
});

describe('geometry quality', () => {
  const square = [
    [0, 0],
    [0.01, 0],
    [0.01, 0.01],
    [0, 0.01],
    [0, 0],
  ];
  it('accepts a closed simple ring and computes hectares and the bounding box', () => {
    const facts = assessGeometry({ type: 'Polygon', coordinates: [square] });
    expect(facts.valid).toBe(true);
    expect(facts.areaHa).toBeGreaterThan(120);
    expect(facts.areaHa).toBeLessThan(125);
    expect(facts.bbox).toEqual([0, 0, 0.01, 0.01]);
  });

  it('flags invalid shapes with the reason', () => {
    expect(
      assessGeometry({
        type: 'Polygon',
        coordinates: [
          [
            [0, 0],
            [1, 1],
            [1, 0],
            [0, 1],
            [0, 0],
          ],
        ],
      }).issue,
    ).toMatch(/^self-intersection at \[0\.5, 0\.5\]/);
    expect(assessGeometry({ type: 'Polygon', coordinates: [square.slice(0, 4)] }).issue).toBe(
      'ring 0 is not closed (first and last positions differ)',
    );
    expect(
      assessGeometry({
        type: 'Polygon',
        coordinates: [
          [
            [0, 0],
            [1, 0],
            [0, 0],
          ],
        ],
      }).issue,
    ).toBe('ring 0 has 3 positions (a ring needs at least 4)');
    expect(
      assessGeometry({
        type: 'Polygon',
        coordinates: [
          [
            [0, 0],
            [200, 0],
            [1, 1],
            [0, 0],
          ],
        ],
      }).issue,
    ).toMatch(/outside WGS84 range/);
    expect(assessGeometry({ type: 'MultiPolygon', coordinates: [[square], []] }).issue).toBe('polygon 1 has no rings');
    expect(assessGeometry(null)).toEqual({
      areaHa: null,
      bbox: null,
      valid: false,
      issue: 'no geometry',
      problem: { kind: 'missing' },
      crossesAntimeridian: false,
    });
  });
});
