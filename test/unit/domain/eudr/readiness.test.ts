import { describe, expect, it } from 'vitest';
import turfArea from '@turf/area';
import { plotFindings } from '../../../../domain/eudr/readiness.ts';
import { worldCountries } from '../../../../warehouse/refresh/world-countries.ts';
import { CHECKS } from '../../../../domain/eudr/finding.ts';
import { assessGeometry } from '../../../../domain/geometry/geometry-quality.ts';
import { findingsOf, readyPlot, square } from './shapes.ts';

const codes = (plot: Parameters<typeof findingsOf>[0]) => findingsOf(plot).map((f) => f.code);

describe('plotFindings', () => {
  it('finds nothing wrong with a plot that has everything', () => {
    const plot = readyPlot();
    // The fixture's reported area is the polygon's, within the tolerance.
    expect(Math.abs(turfArea(plot.geometry as never) - plot.surfaceArea!)).toBeLessThan(100);
    expect(findingsOf(plot)).toEqual([]);
  });

  it('gives each finding the severity of its check, a sentence and sorted codes', () => {
    const found = findingsOf(readyPlot({ countryCode: null, productionDateStart: null, productionDateEnd: null }));
    expect(found.map((f) => f.code)).toEqual(['country_missing', 'production_period_missing']);
    for (const f of found) {
      expect(f.severity).toBe(CHECKS[f.code]);
      expect(f.message).toMatch(/^[A-Z].*\.$/);
    }
  });

  it('uses the geometry facts it is given (the refresh assesses a shape once)', () => {
    const plot = readyPlot();
    const facts = { ...assessGeometry(plot.geometry), areaHa: 50 };
    expect(plotFindings(plot, facts, worldCountries()).map((f) => f.code)).toEqual(['surface_area_mismatch']);
  });

  it('a point over 4 ha is blocking; a point of 4 ha or less, or for cattle, is not', () => {
    const point = { type: 'Point' as const, coordinates: [-3.5312345, 5.8512345] };
    expect(codes(readyPlot({ geometry: point, surfaceArea: 52_000 }))).toEqual(['point_over_4_ha']);
    expect(codes(readyPlot({ geometry: point, surfaceArea: 40_000 }))).toEqual([]);
    expect(codes(readyPlot({ geometry: point, surfaceArea: 520_000, commodities: ['cattle'] }))).toEqual([]);
    expect(codes(readyPlot({ geometry: point, surfaceArea: 520_000, commodities: ['cattle', 'soya'] }))).toEqual([
      'point_over_4_ha',
    ]);
    expect(codes(readyPlot({ geometry: point, surfaceArea: null }))).toEqual(['point_area_unknown']);
    expect(codes(readyPlot({ geometry: null }))).toEqual(['geometry_missing']);
  });

  it('a point outside WGS84 range is blocking', () => {
    expect(
      codes(readyPlot({ geometry: { type: 'Point', coordinates: [5.8512345, 95.5312345] }, surfaceArea: 100 })),
    ).toEqual(['coordinates_out_of_range']);
  });

  it('a bow-tie is a self-intersection, not an area mismatch', () => {
    const bowTie = [
      [-3.53, 5.85],
      [-3.529, 5.851],
      [-3.529, 5.85],
      [-3.53, 5.851],
      [-3.53, 5.85],
    ].map(([lon, lat]) => [lon! + 0.0000001, lat! + 0.0000001]);
    const found = findingsOf(readyPlot({ geometry: { type: 'Polygon', coordinates: [bowTie] } }));
    expect(found.map((f) => f.code)).toEqual(['polygon_self_intersection']);
    expect(found[0]!.details).toMatchObject({ at: [-3.5295, 5.8505], crossings: 1 });
  });

  it('an unclosed ring and a ring of three positions are blocking', () => {
    const open = square(-3.5312345, 5.8512345, 0.001).slice(0, 4);
    expect(codes(readyPlot({ geometry: { type: 'Polygon', coordinates: [open] } }))).toEqual([
      'polygon_ring_not_closed',
    ]);
    const three = [open[0]!, open[1]!, open[0]!];
    const found = findingsOf(readyPlot({ geometry: { type: 'Polygon', coordinates: [three] } }));
    expect(found.map((f) => f.code)).toEqual(['polygon_too_few_positions']);
    expect(found[0]!.details).toEqual({ positions: 3, polygon: 0, ring: 0 });
  });

  it('a closed ring of four or more positions that repeats one or two points encloses nothing: blocking, the plot not valid', () => {
    const [a, b] = square(-3.5312345, 5.8512345, 0.001);
    for (const [ring, distinct] of [
      [[a!, a!, a!, a!], 1],
      [[a!, b!, a!, b!, a!], 2],
    ] as const) {
      const geometry = { type: 'Polygon' as const, coordinates: [[...ring]] };
      expect(assessGeometry(geometry).valid).toBe(false);
      const found = findingsOf(readyPlot({ geometry }));
      expect(found.map((f) => f.code)).toEqual(['polygon_too_few_positions']);
      expect(found[0]!.details).toEqual({ positions: ring.length, distinct, polygon: 0, ring: 0 });
    }
  });

  it('a polygon with a hole inside is valid and measured without the hole (the EU refuses holes: polygon_has_holes); a hole outside is blocking', () => {
    const outer = square(-3.5312345, 5.8512345, 0.002);
    const hole = square(-3.5307345, 5.8517345, 0.001).reverse();
    const facts = assessGeometry({ type: 'Polygon', coordinates: [outer, hole] });
    expect(facts.valid).toBe(true);
    const plot = readyPlot({
      geometry: { type: 'Polygon', coordinates: [outer, hole] },
      surfaceArea: facts.areaHa! * 10_000,
    });
    expect(codes(plot)).toEqual(['polygon_has_holes']);
    expect(facts.areaHa! * 10_000).toBeCloseTo((turfArea({ type: 'Polygon', coordinates: [outer] }) * 3) / 4, -2);
    const away = square(-3.5212345, 5.8512345, 0.0005);
    expect(codes(readyPlot({ geometry: { type: 'Polygon', coordinates: [outer, away] }, surfaceArea: null }))).toEqual([
      'polygon_has_holes',
      'polygon_hole_outside',
    ]);
    // A hole crossing the outer ring is a self-intersection.
    const crossing = square(-3.5302345, 5.8502345, 0.002);
    expect(
      codes(readyPlot({ geometry: { type: 'Polygon', coordinates: [outer, crossing] }, surfaceArea: null })),
    ).toEqual(['polygon_has_holes', 'polygon_self_intersection']);
  });

  it('a polygon crossing the antimeridian is measured across it: no false area or validity finding', () => {
    // 0.002° by 0.002° straddling 180°: about 4.9 ha near the equator.
    const ring = [
      [179.9990001, -16.5000001],
      [-179.9990001, -16.5000001],
      [-179.9990001, -16.4980001],
      [179.9990001, -16.4980001],
      [179.9990001, -16.5000001],
    ];
    const facts = assessGeometry({ type: 'Polygon', coordinates: [ring] });
    expect(facts).toMatchObject({ valid: true, crossesAntimeridian: true });
    expect(facts.areaHa).toBeGreaterThan(4.5);
    expect(facts.areaHa).toBeLessThan(5.0);
    const found = findingsOf(
      readyPlot({
        geometry: { type: 'Polygon', coordinates: [ring] },
        surfaceArea: facts.areaHa! * 10_000,
        countryCode: 'FJ',
      }),
    );
    expect(found.map((f) => [f.code, f.severity])).toEqual([['polygon_crosses_antimeridian', 'info']]);
  });

  it('a MultiPolygon of two valid parts is valid', () => {
    const a = square(-3.5312345, 5.8512345, 0.001);
    const b = square(-3.5212345, 5.8512345, 0.001);
    expect(
      codes(readyPlot({ geometry: { type: 'MultiPolygon', coordinates: [[a], [b]] }, surfaceArea: 24_580 })),
    ).toEqual([]);
  });
});
