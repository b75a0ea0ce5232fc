import { describe, expect, it } from 'vitest';
import { geometryIssue, type PlotGeometry } from '../../../../schema/upstream.ts';
import { assessGeometry } from '../../../../domain/geometry/geometry-quality.ts';
import { findingsOf, readyPlot } from './shapes.ts';

/** The EU information system's geometry types (Operator API Reference v1.0 §9.2): lines refused, MultiPoint and collections taken. */
const line: PlotGeometry = {
  type: 'LineString',
  coordinates: [
    [-3.5312345, 5.8512345],
    [-3.5302345, 5.8522345],
  ],
};
const lines: PlotGeometry = {
  type: 'MultiLineString',
  coordinates: [
    line.coordinates,
    [
      [-3.53, 5.85],
      [-3.52, 5.86],
    ],
  ],
};
const points: PlotGeometry = {
  type: 'MultiPoint',
  coordinates: [
    [-3.53, 5.85],
    [-3.52, 5.86],
  ],
};
const collection: PlotGeometry = { type: 'GeometryCollection', geometries: [points, line] };

describe('geometry types the EU information system refuses or ddsync does not check', () => {
  it('reads every GeoJSON geometry type, checked for its shape, and still refuses what is not GeoJSON, naming the path and the rule', () => {
    for (const g of [line, lines, points, collection]) expect(geometryIssue(g), g.type).toBeNull();
    expect(geometryIssue({ type: 'Circle', coordinates: [1, 2] })).toEqual({
      path: ['type'],
      message:
        'expected "Point", "LineString", "MultiPoint", "MultiLineString", "Polygon", "MultiPolygon" or "GeometryCollection"',
    });
    expect(geometryIssue({ type: 'LineString', coordinates: [1, 2] })).toEqual({
      path: ['coordinates', 0],
      message: 'expected array',
    });
    expect(
      geometryIssue({ type: 'GeometryCollection', geometries: [points, { type: 'Point', coordinates: ['x', 1] }] }),
    ).toEqual({
      path: ['geometries', 1, 'coordinates', 0],
      message: 'expected number',
    });
    expect(geometryIssue({ type: 'GeometryCollection' })).toEqual({ path: ['geometries'], message: 'expected array' });
    // A collection nested without end is refused before it costs a deep recursion.
    let deep: unknown = points;
    for (let i = 0; i < 10; i++) deep = { type: 'GeometryCollection', geometries: [deep] };
    expect(geometryIssue(deep)?.message).toMatch(/nested at most 4 deep/);
  });

  it('stores a line as not valid, with no area, where it lies, and its type as the issue', () => {
    expect(assessGeometry(line)).toEqual({
      areaHa: null,
      bbox: [-3.5312345, 5.8512345, -3.5302345, 5.8522345],
      valid: false,
      issue: 'a LineString, not a polygon or a point (no area)',
      problem: { kind: 'not_a_plot_shape', type: 'LineString' },
      crossesAntimeridian: false,
    });
    // A collection's box spans every member: the points and the line.
    expect(assessGeometry(collection).bbox).toEqual([-3.5312345, 5.85, -3.52, 5.86]);
    expect(assessGeometry({ type: 'LineString', coordinates: [] }).bbox).toBeNull();
  });

  it('blocks a plot drawn as a line (LineString, MultiLineString) and says why, with no polygon finding beside it', () => {
    for (const g of [line, lines]) {
      const found = findingsOf(readyPlot({ geometry: g }));
      const refused = found.filter((f) => f.code === 'geometry_type_refused');
      expect(refused, g.type).toEqual([
        {
          code: 'geometry_type_refused',
          severity: 'blocking',
          message: expect.stringContaining(`drawn as a ${g.type}`),
          details: { type: g.type },
        },
      ]);
      // Nothing about rings, holes, decimals or area: those rules are for polygons.
      expect(found.map((f) => f.code).filter((c) => /^polygon_|_6_decimals|precision|surface_area/.test(c))).toEqual(
        [],
      );
    }
  });

  it('warns that a MultiPoint or a collection is not checked by ddsync, which the EU takes', () => {
    for (const g of [points, collection]) {
      const found = findingsOf(readyPlot({ geometry: g }));
      expect(found.map((f) => [f.code, f.severity])).toEqual([['geometry_type_not_checked', 'warning']]);
    }
  });

  it('still finds the plot against its declared country: a line in another country is outside it', () => {
    // Côte d'Ivoire declared, the line drawn in Ghana (about 1°W, 7°N).
    const inGhana: PlotGeometry = {
      type: 'LineString',
      coordinates: [
        [-1.0, 7.0],
        [-0.99, 7.01],
      ],
    };
    const codes = findingsOf(readyPlot({ geometry: inGhana })).map((f) => f.code);
    expect(codes).toContain('country_outside_declared');
    expect(codes).toContain('geometry_type_refused');
  });
});
