import { check } from '@placemarkio/check-geojson';
import { describe, expect, it } from 'vitest';
import {
  base64Bytes,
  EU_PROPERTIES,
  type ExportPlot,
  plotFeature,
  splitFeatures,
} from '../../../../domain/eudr/eu-geojson.ts';
import { truncate6 } from '../../../../domain/eudr/six-decimals.ts';

const square = (lon: number, lat: number, d: number) => [
  [lon, lat],
  [lon + d, lat],
  [lon + d, lat + d],
  [lon, lat + d],
  [lon, lat],
];
const plot = (id: string, geometry: unknown, o: Partial<ExportPlot> = {}): ExportPlot => ({
  id,
  name: `Plot ${id}`,
  countryCode: 'BR',
  producerName: 'Fazenda Boa Vista',
  geometry,
  areaHa: 12.345678,
  ...o,
});
const decimals = (n: number) => (String(n).split('.')[1] ?? '').length;
const positionsOf = (g: { type: string; coordinates: unknown }): number[][] =>
  g.type === 'Point'
    ? [g.coordinates as number[]]
    : ((g.coordinates as unknown[]).flat(g.type === 'Polygon' ? 1 : 2) as number[][]);

describe("the EU's GeoJSON, as ddsync writes it", () => {
  it('truncates toward zero to 6 decimals, as the readiness checks do, also where the double lies just under the decimal', () => {
    // 1.2345679999999 cuts to 1.234567; a cut of its 10-decimal text (1.2345680000) would carry 1.234568,
    // a point the checks never saw.
    const coordinates = [1.2345679999999, -5.8227394567, 144.2567074567, 12.345678, 0.1234569, -0.0000001, 7];
    for (const x of coordinates) {
      const f = plotFeature(plot('p', { type: 'Point', coordinates: [x, 5] }, { areaHa: 1 }));
      expect(f.ok && (f.feature.geometry.coordinates as number[])[0]).toBe(truncate6(x));
    }
    expect(coordinates.map(truncate6)).toEqual([1.234567, -5.822739, 144.256707, 12.345678, 0.123456, 0, 7]);
  });

  it('writes the four properties only, coordinates of at most 6 decimals, the outer ring only', () => {
    const holed = {
      type: 'Polygon',
      coordinates: [square(-47.12345678912, -15.98765432198, 0.01), square(-47.118, -15.983, 0.002)],
    };
    const f = plotFeature(plot('a', holed));
    expect(f.ok).toBe(true);
    if (!f.ok) return;
    expect(Object.keys(f.feature.properties).every((k) => (EU_PROPERTIES as readonly string[]).includes(k))).toBe(true);
    expect(f.feature.properties).toEqual({
      ProducerName: 'Fazenda Boa Vista',
      ProducerCountry: 'BR',
      ProductionPlace: 'Plot a',
      Area: 12.3457,
    });
    expect(f.feature.geometry.type).toBe('Polygon');
    expect(f.feature.geometry.coordinates).toHaveLength(1);
    for (const [lon, lat] of positionsOf(f.feature.geometry)) {
      expect(decimals(lon!)).toBeLessThanOrEqual(6);
      expect(decimals(lat!)).toBeLessThanOrEqual(6);
    }
    expect((f.feature.geometry.coordinates as number[][][])[0]![0]).toEqual([-47.123456, -15.987654]);
  });

  it('leaves out a property it does not know, never writes it empty, and writes a country only as an ISO alpha-2 code', () => {
    const square1 = { type: 'Polygon', coordinates: [square(1, 1, 0.01)] };
    const unknown = plotFeature(plot('u', square1, { countryCode: null, producerName: '  ', name: null }));
    expect(unknown.ok && unknown.feature.properties).toEqual({ ProductionPlace: 'u', Area: 12.3457 });
    const lower = plotFeature(plot('l', square1, { countryCode: ' br ', producerName: ' Fazenda ' }));
    expect(lower.ok && lower.feature.properties).toMatchObject({ ProducerCountry: 'BR', ProducerName: 'Fazenda' });
    for (const bad of ['', 'BRA', 'B1', 'Brazil']) {
      // Still written: the plot's geolocation stands without the country, which the statement carries too.
      const f = plotFeature(plot('b', square1, { countryCode: bad }));
      expect(f.ok && Object.keys(f.feature.properties)).toEqual(['ProducerName', 'ProductionPlace', 'Area']);
    }
  });

  it('keeps only the outer ring of each part of a multipolygon, and leaves Area out of a point whose area is unknown', () => {
    const multi = plotFeature(
      plot('m', {
        type: 'MultiPolygon',
        coordinates: [[square(1, 1, 0.1), square(1.02, 1.02, 0.01)], [square(2, 2, 0.1)]],
      }),
    );
    expect(multi.ok && multi.feature.geometry.coordinates.map((p) => (p as unknown[]).length)).toEqual([1, 1]);
    const point = plotFeature(plot('p', { type: 'Point', coordinates: [10.1234567, 5.7654321] }, { areaHa: null }));
    expect(point.ok && point.feature).toEqual({
      type: 'Feature',
      properties: { ProducerName: 'Fazenda Boa Vista', ProducerCountry: 'BR', ProductionPlace: 'Plot p' },
      geometry: { type: 'Point', coordinates: [10.123456, 5.765432] },
    });
  });

  it('drops a vertex the cut makes equal to the one before, and refuses what the EU refuses, naming why', () => {
    const dup = plotFeature(
      plot('d', {
        type: 'Polygon',
        coordinates: [
          [
            [1, 1],
            [1.0000001, 1.0000002],
            [1.1, 1],
            [1.1, 1.1],
            [1, 1.1],
            [1, 1],
          ],
        ],
      }),
    );
    expect(dup.ok && dup.feature.geometry.coordinates[0]).toHaveLength(5);
    const collapsed = plotFeature(
      plot('c', {
        type: 'Polygon',
        coordinates: [
          [
            [1, 1],
            [1.0000001, 1],
            [1.0000002, 1.0000001],
            [1, 1],
          ],
        ],
      }),
    );
    expect(collapsed).toEqual({ ok: false, plotId: 'c', reason: expect.stringMatching(/once cut to 6 decimals/) });
    expect(
      plotFeature(
        plot('l', {
          type: 'LineString',
          coordinates: [
            [1, 1],
            [2, 2],
          ],
        }),
      ),
    ).toEqual({
      ok: false,
      plotId: 'l',
      reason: 'a geometry of type "LineString", which the EU does not accept',
    });
    expect(plotFeature(plot('mp', { type: 'MultiPoint', coordinates: [[1, 1]] }))).toEqual({
      ok: false,
      plotId: 'mp',
      reason: 'a MultiPoint, which the EU accepts but ddsync does not check, so does not write',
    });
    expect(plotFeature(plot('n', null))).toEqual({ ok: false, plotId: 'n', reason: 'no geometry' });
    // A point's Area below 0.0001 ha is refused by the EU; left out, it would read as 4 ha.
    const tiny = { type: 'Point', coordinates: [1, 1] };
    expect(plotFeature(plot('z', tiny, { areaHa: 0 }))).toEqual({
      ok: false,
      plotId: 'z',
      reason: expect.stringMatching(/below the 0\.0001 ha the EU takes for a point/),
    });
    expect(plotFeature(plot('t', tiny, { areaHa: 0.00009 })).ok).toBe(false);
    const least = plotFeature(plot('e', tiny, { areaHa: 0.0001 }));
    expect(least.ok && least.feature.properties['Area']).toBe(0.0001);
  });

  it('splits into files whose base64 stays within the limit, each naming its plots, each valid GeoJSON to a library ddsync does not write with', () => {
    const features = Array.from({ length: 30 }, (_, i) => {
      const f = plotFeature(
        plot(`p${i}`, { type: 'Polygon', coordinates: [square(-50 + i * 0.1, -10.123456789, 0.05)] }),
      );
      if (!f.ok) throw new Error('unexpected');
      return { plotId: `p${i}`, feature: f.feature };
    });
    const limit = 2_000;
    const files = splitFeatures(features, limit);
    expect(files.length).toBeGreaterThan(3);
    expect(files.flatMap((f) => f.plotIds)).toEqual(features.map((f) => f.plotId));
    for (const file of files) {
      expect(file.base64Bytes).toBe(Buffer.from(file.text).toString('base64').length);
      expect(file.base64Bytes).toBeLessThanOrEqual(limit);
      expect(file.overLimit).toBe(false);
      // @placemarkio/check-geojson throws a HintError on anything RFC 7946 refuses.
      const parsed = check(file.text) as unknown as {
        type: string;
        features: Array<{ properties: object; geometry: { type: string; coordinates: unknown } }>;
      };
      expect(parsed.type).toBe('FeatureCollection');
      expect(
        parsed.features
          .map((f) => f.properties)
          .every((p) => Object.keys(p).every((k) => (EU_PROPERTIES as readonly string[]).includes(k))),
      ).toBe(true);
      // The next plot would not have fitted: the split is where the limit is, not before.
      const next = files[files.indexOf(file) + 1];
      if (next)
        expect(
          base64Bytes(
            file.bytes +
              1 +
              Buffer.byteLength(JSON.stringify(features.find((f) => f.plotId === next.plotIds[0])!.feature)),
          ),
        ).toBeGreaterThan(limit);
    }
    expect(splitFeatures(features)).toHaveLength(1);
  });

  it('writes a plot that alone passes the limit in a file of its own, and says so', () => {
    const f = plotFeature(plot('big', { type: 'Polygon', coordinates: [square(1, 1, 0.1)] }));
    if (!f.ok) throw new Error('unexpected');
    const files = splitFeatures([{ plotId: 'big', feature: f.feature }], 100);
    expect(files.map((x) => [x.plotIds, x.overLimit])).toEqual([[['big'], true]]);
  });
});
