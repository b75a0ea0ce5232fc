import { describe, expect, it } from 'vitest';
import { hasMoreThan6Decimals, truncate6, truncatedGeometry } from '../../../../domain/eudr/six-decimals.ts';
import { compileCountryShapes, placeIn } from '../../../../domain/eudr/country-shapes.ts';
import { packTopology, type Topology } from '../../../../domain/eudr/packed-topology.ts';
import { worldCountries } from '../../../../warehouse/refresh/world-countries.ts';
import { TOLERANCE_KM } from '../../../../domain/eudr/country-placement.ts';
import { findingsOf, readyPlot, square } from './shapes.ts';

const codes = (plot: Parameters<typeof findingsOf>[0]) => findingsOf(plot).map((f) => f.code);

describe('the 6-decimal cut, as the EU information system keeps coordinates', () => {
  it('truncates towards zero on the decimal text, never rounds, and keeps 6-decimal values as they are', () => {
    expect(truncate6(-5.8227394567)).toBe(-5.822739);
    expect(truncate6(144.2567074567)).toBe(144.256707);
    expect(truncate6(1.1234569999)).toBe(1.123456);
    // 0.000003 * 1e6 is 2.9999999999999996 in binary: a plain Math.trunc would give 0.000002.
    expect(truncate6(0.000003)).toBe(0.000003);
    expect(truncate6(-5.1234559999999)).toBe(-5.123455);
    expect(truncate6(1e-7)).toBe(0);
    expect(truncate6(180)).toBe(180);
  });

  it('agrees with cutting the printed number for a million random coordinates of 1 to 12 decimals', () => {
    const byText = (v: number) => {
      const text = String(v).includes('e') ? v.toFixed(20) : String(v);
      const dot = text.indexOf('.');
      return dot < 0 ? v : Number(text.slice(0, dot + 7)) || 0;
    };
    let seed = 7;
    const next = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
    const wrong: number[] = [];
    for (let i = 0; i < 1_000_000; i++) {
      const v = Number(((next() - 0.5) * 360).toFixed(1 + Math.floor(next() * 12)));
      if (truncate6(v) !== byText(v)) wrong.push(v);
    }
    expect(wrong).toEqual([]);
  });

  it('cuts every position of a polygon, and says whether anything had more than 6 decimals', () => {
    const polygon = { type: 'Polygon' as const, coordinates: [square(-3.5312345, 5.8512345, 0.001)] };
    expect(hasMoreThan6Decimals(polygon)).toBe(true);
    const cut = truncatedGeometry(polygon);
    expect(cut.coordinates).toEqual([
      square(-3.531234, 5.851234, 0.001).map(([x, y]) => [truncate6(x!), truncate6(y!)]),
    ]);
    expect(hasMoreThan6Decimals(cut)).toBe(false);
  });

  it('a polygon whose two corners become one position once cut is blocking; the same corners 1e-6 apart are not', () => {
    const ring = square(-3.5312345, 5.8512345, 0.001);
    const doubled = [[-3.5312349, 5.8512345], [-3.5312345, 5.8512345], ...ring.slice(1, -1), [-3.5312349, 5.8512345]];
    const found = findingsOf(readyPlot({ geometry: { type: 'Polygon', coordinates: [doubled] } }));
    expect(found.map((f) => f.code)).toEqual(['geometry_invalid_at_6_decimals']);
    expect(found[0]!.severity).toBe('blocking');
    expect(found[0]!.details).toMatchObject({ rule: 'duplicate_position' });
    const apart = [[-3.5312355, 5.8512345], [-3.5312345, 5.8512345], ...ring.slice(1, -1), [-3.5312355, 5.8512345]];
    expect(codes(readyPlot({ geometry: { type: 'Polygon', coordinates: [apart] } }))).toEqual([]);
  });

  it('a sliver that collapses once cut is blocking', () => {
    // Valid as sent (three distinct corners, no crossing), all within one 6-decimal step in latitude.
    const sliver = [
      [-3.5, 5.85123401],
      [-3.49, 5.85123402],
      [-3.495, 5.85123409],
      [-3.5, 5.85123401],
    ];
    const found = findingsOf(readyPlot({ geometry: { type: 'Polygon', coordinates: [sliver] }, surfaceArea: null }));
    expect(found.map((f) => f.code)).toContain('geometry_invalid_at_6_decimals');
    expect(found.find((f) => f.code === 'geometry_invalid_at_6_decimals')!.details).toMatchObject({
      rule: 'collapsed',
    });
  });
});

describe('holes, which the EU information system does not process', () => {
  it('a polygon with a hole is blocking and says how much more the outer boundary counts', () => {
    const outer = square(-3.5312345, 5.8512345, 0.002);
    const hole = square(-3.5307345, 5.8517345, 0.001).reverse();
    const found = findingsOf(
      readyPlot({ geometry: { type: 'Polygon', coordinates: [outer, hole] }, surfaceArea: 36_870 }),
    );
    expect(found.map((f) => f.code)).toEqual(['polygon_has_holes']);
    const details = found[0]!.details as { holes: number; extraHa: number; outerBoundaryHa: number; areaHa: number };
    expect(details.holes).toBe(1);
    // The hole is a quarter of the outer square: the EU counts a third more than the plot.
    expect(details.extraHa).toBeCloseTo(1.23, 1);
    expect(details.outerBoundaryHa).toBeCloseTo(details.areaHa + details.extraHa, 1);
    expect(found[0]!.message).toContain(`${details.extraHa.toFixed(2)} ha more`);
  });

  it('a multipolygon without holes is not flagged', () => {
    const geometry = {
      type: 'MultiPolygon' as const,
      coordinates: [[square(-3.5312345, 5.8512345, 0.001)], [square(-3.5212345, 5.8512345, 0.001)]],
    };
    expect(codes(readyPlot({ geometry, surfaceArea: 24_580 }))).toEqual([]);
  });
});

describe("a point's area, as the EU information system takes it", () => {
  const point = { type: 'Point' as const, coordinates: [-3.5312345, 5.8512345] };
  it('below 0.0001 ha (1 m²), zero included, is blocking; 1 m² is accepted', () => {
    expect(codes(readyPlot({ geometry: point, surfaceArea: 0.5 }))).toEqual(['point_area_too_small']);
    expect(codes(readyPlot({ geometry: point, surfaceArea: 0 }))).toEqual(['point_area_too_small']);
    expect(codes(readyPlot({ geometry: point, surfaceArea: 1 }))).toEqual([]);
  });
  it('missing is a warning that says the EU assumes 4 ha', () => {
    const [found] = findingsOf(readyPlot({ geometry: point, surfaceArea: null }));
    expect(found).toMatchObject({ code: 'point_area_unknown', severity: 'warning' });
    expect(found!.message).toContain('assumes 4 ha');
  });
});

describe('the plot against its declared country (Natural Earth 1:10m)', () => {
  // 7 decimals, as the fixture's plots have (so coordinate_precision_low stays out of the way).
  const at = (lon: number, lat: number, countryCode: string) =>
    readyPlot({
      geometry: { type: 'Polygon', coordinates: [square(lon + 1.23e-5 * Math.sign(lon), lat + 4.56e-5, 0.001)] },
      countryCode,
      surfaceArea: null,
    });

  it('a plot inside its country has nothing to say; one far outside is blocking and says where it lies', () => {
    expect(codes(at(-3.5312345, 5.8512345, 'CI'))).toEqual([]);
    const found = findingsOf(at(-47.5, -15.5, 'PE'));
    expect(found.map((f) => f.code)).toEqual(['country_outside_declared']);
    expect(found[0]!.message).toContain('in BR');
  });

  it('a plot written latitude first is found swapped, not merely outside', () => {
    const found = findingsOf(at(-15.5, -47.5, 'BR'));
    expect(found.map((f) => f.code)).toEqual(['coordinates_swapped']);
  });

  it(`within ${TOLERANCE_KM} km outside the outline it cannot decide (info); beyond it, outside`, () => {
    // Côte d'Ivoire's coast near Abidjan runs at about 5.25°N at 4°W; the sea south of it.
    const near = findingsOf(at(-4.0, 5.22, 'CI'));
    expect(near.map((f) => f.code)).toEqual(['country_near_border']);
    expect(near[0]!.severity).toBe('info');
    expect(codes(at(-4.0, 4.9, 'CI'))).toEqual(['country_outside_declared']);
  });

  it('a territory Natural Earth folds into its parent is looked up there; a code without an outline is not decided', () => {
    expect(codes(at(-53.5, 4.5, 'GF'))).toEqual([]);
    expect(codes(at(-47.5, -15.5, 'XK'))).toEqual([]);
  });

  it('rings across the antimeridian do not swallow the other side of the world (Alaska is not Russia)', () => {
    const world = worldCountries();
    expect(world.countriesAt(-150, 66.5)).toEqual(['US']);
    expect(world.countriesAt(-100, 67)).toEqual(['CA']);
    expect(world.countriesAt(34.577, -16.158)).toEqual(['MW']);
    expect(world.countriesAt(-175, 66)).toEqual(['RU']);
  });
});

describe('compiled country outlines', () => {
  // One square country of 2° (0..2, 0..2) with a 1° hole (0.5..1.5), in a quantised topology.
  const topology: Topology = {
    transform: { scale: [0.5, 0.5], translate: [0, 0] },
    arcs: [
      [
        [0, 0],
        [4, 0],
        [0, 4],
        [-4, 0],
        [0, -4],
      ],
      [
        [1, 1],
        [0, 2],
        [2, 0],
        [0, -2],
        [-2, 0],
      ],
    ],
    objects: { countries: { geometries: [{ type: 'Polygon', id: '1', arcs: [[0], [1]] }] } },
  };
  const shapes = compileCountryShapes(packTopology(topology), 'countries', (id) => (id === '1' ? 'AA' : undefined));
  const shape = shapes.shapeOf('AA')!;

  it('decodes the arcs and respects holes', () => {
    expect(placeIn(shape, 0.2, 0.2, 0).inside).toBe(true);
    expect(placeIn(shape, 1, 1, 0).inside).toBe(false);
    expect(placeIn(shape, 3, 1, 0).inside).toBe(false);
  });

  it('measures the distance to the border only within the tolerance', () => {
    // 0.01° east of the border at the equator: about 1.1 km.
    expect(placeIn(shape, 2.01, 1, 5).borderKm).toBeCloseTo(1.11, 1);
    expect(placeIn(shape, 2.1, 1, 5).borderKm).toBeNull();
    expect(placeIn(shape, 2.1, 1, 20).borderKm).toBeCloseTo(11.1, 0);
  });
});
