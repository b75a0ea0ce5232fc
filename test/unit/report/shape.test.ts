import { describe, it, expect } from 'vitest';
import { compactShape, decodeRings, simplifyRing } from '../../../report/shape.ts';

describe('compact plot shapes', () => {
  it('round to 1e-5 degree, delta-encode from the centre and decode back within a metre', () => {
    const ring = [
      [-5.123456, 7.654321],
      [-5.113456, 7.654321],
      [-5.113456, 7.664321],
      [-5.123456, 7.654321],
    ];
    const shape = compactShape({ type: 'Polygon', coordinates: [ring] })!;
    expect(shape).toMatchObject({ x: -511846, y: 765932 });
    const [decoded] = decodeRings(shape);
    expect(decoded).toHaveLength(4);
    decoded!.forEach(([lon, lat], i) => {
      expect(Math.abs(lon - ring[i]![0]!)).toBeLessThan(1e-5);
      expect(Math.abs(lat - ring[i]![1]!)).toBeLessThan(1e-5);
    });
  });

  it('simplifies long rings, keeps holes and multipolygons, takes points, and leaves out what cannot be placed', () => {
    // 1,000 positions on a straight edge of a triangle: the edge needs two.
    const edge = Array.from({ length: 1000 }, (_, i) => [i / 1e4, 0]);
    const long = [...edge, [0.05, 0.05], [0, 0]];
    const [ring] = decodeRings(compactShape({ type: 'Polygon', coordinates: [long] })!);
    expect(ring!.length).toBeLessThanOrEqual(5);
    expect(
      simplifyRing([
        [0, 0],
        [1, 0],
        [0, 0],
      ] as Array<[number, number]>),
    ).toHaveLength(3);

    const square = (x: number) => [
      [x, 0],
      [x + 0.01, 0],
      [x + 0.01, 0.01],
      [x, 0.01],
      [x, 0],
    ];
    const multi = compactShape({ type: 'MultiPolygon', coordinates: [[square(0), square(0.002)], [square(1)]] })!;
    expect(multi.rings).toHaveLength(3);
    expect(compactShape({ type: 'Point', coordinates: [10, 20] })).toEqual({ x: 1000000, y: 2000000, rings: [] });
    expect(compactShape(null)).toBeNull();
    expect(compactShape({})).toBeNull();
    expect(
      compactShape({
        type: 'Polygon',
        coordinates: [
          [
            [200, 0],
            ['a', 1],
          ],
        ],
      }),
    ).toBeNull();
    expect(compactShape({ type: 'Polygon', coordinates: 'nonsense' })).toBeNull();
  });
});

describe('compact plot shapes of the types the EU refuses', () => {
  it('keeps a LineString and a MultiLineString as open lines, beside the rings of a collection', () => {
    const line = compactShape({
      type: 'LineString',
      coordinates: [
        [10, 20],
        [10.001, 20],
        [10.001, 20.001],
      ],
    })!;
    expect(line.rings).toEqual([]);
    expect(decodeRings(line, 'lines')).toEqual([
      [
        [10, 20],
        [10.001, 20],
        [10.001, 20.001],
      ],
    ]);
    expect(line).toMatchObject({ x: 1000050, y: 2000050 });
    const multi = compactShape({
      type: 'MultiLineString',
      coordinates: [
        [
          [0, 0],
          [0.01, 0],
        ],
        [
          [0, 0.01],
          [0.01, 0.01],
        ],
      ],
    })!;
    expect(multi.lines).toHaveLength(2);
    const collection = compactShape({
      type: 'GeometryCollection',
      geometries: [
        {
          type: 'Polygon',
          coordinates: [
            [
              [0, 0],
              [0.01, 0],
              [0.01, 0.01],
              [0, 0],
            ],
          ],
        },
        {
          type: 'LineString',
          coordinates: [
            [0.02, 0],
            [0.03, 0],
          ],
        },
      ],
    })!;
    expect([collection.rings.length, collection.lines?.length]).toEqual([1, 1]);
    // A polygon has no lines at all (nothing more to embed per plot).
    expect(
      compactShape({
        type: 'Polygon',
        coordinates: [
          [
            [0, 0],
            [0.01, 0],
            [0.01, 0.01],
            [0, 0],
          ],
        ],
      }),
    ).not.toHaveProperty('lines');
  });

  it('leaves off the map a MultiPoint, a type no GeoJSON has, and a line without a valid position', () => {
    expect(
      compactShape({
        type: 'MultiPoint',
        coordinates: [
          [1, 2],
          [3, 4],
        ],
      }),
    ).toBeNull();
    expect(compactShape({ type: 'Circle', coordinates: [1, 2], radius: 3 })).toBeNull();
    expect(compactShape({ type: 'LineString', coordinates: [[500, 1]] })).toBeNull();
    expect(compactShape({ type: 'MultiLineString', coordinates: 'nonsense' })).toBeNull();
  });
});
