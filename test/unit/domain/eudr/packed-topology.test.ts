import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import countries from 'i18n-iso-countries';
import { describe, expect, it } from 'vitest';
import { placeIn } from '../../../../domain/eudr/country-shapes.ts';
import { TOLERANCE_KM } from '../../../../domain/eudr/country-placement.ts';
import { packTopology, readPackedTopology, type Topology } from '../../../../domain/eudr/packed-topology.ts';
import { worldCountries } from '../../../../warehouse/refresh/world-countries.ts';

const file = createRequire(import.meta.url).resolve('world-atlas/countries-10m.json');
const bytes = readFileSync(file);
const parsed = JSON.parse(bytes.toString('utf8')) as Topology;

/**
 * The straightforward reading, as world-countries.ts did before the arcs were packed: the JSON tree,
 * each arc's deltas summed into [lon, lat] pairs, a ring across the antimeridian unwrapped, and every
 * edge of the country visited (no bands, no bounding box). The oracle the packed form must match.
 */
function straightforward(topology: Topology) {
  const t = topology.transform!;
  const arc = (index: number) => {
    let x = 0;
    let y = 0;
    const positions = topology.arcs[index]!.map(([dx, dy]) => {
      x += dx!;
      y += dy!;
      return [x * t.scale[0] + t.translate[0], y * t.scale[1] + t.translate[1]] as [number, number];
    });
    return positions;
  };
  const rings = new Map<string, [number, number][][]>();
  for (const g of topology.objects.countries!.geometries) {
    const code = g.id === undefined ? undefined : countries.numericToAlpha2(String(g.id));
    if (!code || !g.arcs) continue;
    const polygons = (g.type === 'Polygon' ? [g.arcs] : g.arcs) as number[][][];
    for (const polygon of polygons) {
      for (const indexes of polygon) {
        const ring: [number, number][] = [];
        for (const index of indexes) {
          const positions = index >= 0 ? arc(index) : arc(~index).reverse();
          ring.push(...(ring.length === 0 ? positions : positions.slice(1)));
        }
        const lons = ring.map(([lon]) => lon);
        const across = Math.max(...lons) - Math.min(...lons) > 180;
        rings.set(code, [
          ...(rings.get(code) ?? []),
          across ? ring.map(([lon, lat]) => [lon < 0 ? lon + 360 : lon, lat]) : ring,
        ]);
      }
    }
  }
  // A bounding box per ring with a margin wider than any tolerance used here (5 km is under 3° of
  // longitude up to 89°), only to spare the oracle edges that cannot matter: outside it, a ring adds
  // no crossing of the ray or an even number, and none of its edges is within the tolerance.
  const boxOf = (points: [number, number][]): [number, number, number, number] => [
    Math.min(...points.map(([x]) => x)) - 3,
    Math.min(...points.map(([, y]) => y)) - 1,
    Math.max(...points.map(([x]) => x)) + 3,
    Math.max(...points.map(([, y]) => y)) + 1,
  ];
  const ringBoxes = new Map([...rings].map(([code, list]) => [code, list.map(boxOf)]));
  const place = (code: string, lon: number, lat: number, toleranceKm: number) => {
    const xs = lon < 0 ? [lon, lon + 360] : [lon];
    let inside = false;
    let best = Infinity;
    const kmPerLon = 111.32 * Math.max(0.01, Math.cos((lat * Math.PI) / 180));
    for (const x of xs) {
      let crossings = false;
      for (const [ring, [x0, y0, x1, y1]] of rings
        .get(code)!
        .map((ring, i) => [ring, ringBoxes.get(code)![i]!] as const)) {
        if (x < x0 || x > x1 || lat < y0 || lat > y1) continue;
        for (let i = 1; i < ring.length; i++) {
          const [x1, y1] = ring[i - 1]!;
          const [x2, y2] = ring[i]!;
          if (y1 > lat !== y2 > lat && x < ((x2 - x1) * (lat - y1)) / (y2 - y1) + x1) crossings = !crossings;
          const ax = (x1 - x) * kmPerLon;
          const ay = (y1 - lat) * 110.574;
          const dx = (x2 - x) * kmPerLon - ax;
          const dy = (y2 - lat) * 110.574 - ay;
          const length2 = dx * dx + dy * dy;
          const s = length2 === 0 ? 0 : Math.max(0, Math.min(1, -(ax * dx + ay * dy) / length2));
          best = Math.min(best, Math.hypot(ax + s * dx, ay + s * dy));
        }
      }
      inside ||= crossings;
    }
    return { inside, borderKm: inside || toleranceKm <= 0 || best > toleranceKm ? null : best };
  };
  const boxes = new Map(
    [...ringBoxes].map(([code, list]) => [
      code,
      boxOf(
        list.flatMap(
          ([x0, y0, x1, y1]) =>
            [
              [x0 + 3, y0 + 1],
              [x1 - 3, y1 - 1],
            ] as [number, number][],
        ),
      ),
    ]),
  );
  const around = (lon: number, lat: number) =>
    [...boxes].filter(([, [x0, y0, x1, y1]]) =>
      (lon < 0 ? [lon, lon + 360] : [lon]).some((x) => x >= x0 && x <= x1 && lat >= y0 && lat <= y1),
    );
  return { rings, place, around: (lon: number, lat: number) => around(lon, lat).map(([code]) => code) };
}

describe('the packed topology', () => {
  it('reads the same arcs, transform and objects from the bytes as packing the parsed JSON does', () => {
    const fromBytes = readPackedTopology(bytes);
    const fromTree = packTopology(parsed);
    expect(fromBytes.positions).toBeInstanceOf(Int32Array);
    expect(fromBytes.arcStart.length).toBe(parsed.arcs.length + 1);
    expect(fromBytes.positions.length).toBe(2 * parsed.arcs.reduce((sum, arc) => sum + arc.length, 0));
    expect(Buffer.compare(Buffer.from(fromBytes.positions.buffer), Buffer.from(fromTree.positions.buffer))).toBe(0);
    expect(Buffer.compare(Buffer.from(fromBytes.arcStart.buffer), Buffer.from(fromTree.arcStart.buffer))).toBe(0);
    expect(fromBytes.transform).toEqual(parsed.transform);
    expect(fromBytes.objects).toEqual(parsed.objects);
  });

  it('takes whitespace, keys in any order, a topology without transform (coordinates as written) and an elevation', () => {
    const text = ` { "arcs" : [ [ [ 1.5 , -2e1 ] , [3,4,99] ] ,[[-0.25,1E-3]] ],
      "objects": {"a": {"geometries": [{"type": "Polygon", "id": "x\\"y", "arcs": [[0, -2]]}]}}, "bbox": [0, 1] }`;
    const topology = readPackedTopology(Buffer.from(text));
    expect(topology.transform).toBeUndefined();
    expect([...topology.positions]).toEqual([1.5, -20, 3, 4, -0.25, 0.001]);
    expect([...topology.arcStart]).toEqual([0, 2, 3]);
    expect(topology.objects.a!.geometries[0]!.id).toBe('x"y');
  });

  it('refuses what is not a topology, naming the byte', () => {
    expect(() => readPackedTopology(Buffer.from('[1, 2]'))).toThrow(/'\{' expected at byte 0/);
    expect(() => readPackedTopology(Buffer.from('{"objects": {}}'))).toThrow(/no arcs array/);
    expect(() => readPackedTopology(Buffer.from('{"arcs": [[[1, x]]]}'))).toThrow(/not a number/);
    expect(() => readPackedTopology(Buffer.from('{"arcs": [[[1, 2]]]'))).toThrow(/expected at byte/);
  });
});

describe('Natural Earth 1:10m, packed, against the straightforward decoding', () => {
  const oracle = straightforward(parsed);
  const world = worldCountries();
  let seed = 23;
  const next = () => (seed = (seed * 48271) % 2147483647) / 2147483647;

  it('gives the same answers in and around every country, at its borders and across the antimeridian', () => {
    const points: [number, number][] = [
      [-150, 66.5], // Alaska
      [-165.4, 64.5], // Nome, Alaska, across the Bering Strait from Chukotka
      [172, 66.5], // Chukotka
      [-175, 66], // Chukotka west of the antimeridian
      [178.44, -18.14], // Suva, Fiji
      [-179.87, -16.68], // Fiji's Vanua Levu's eastern tip, beyond ±180°
      [-178.8, -18.1], // Fiji's Lau islands (sea between them)
      [179.99, -16.5],
      [-180, 71.2], // Wrangel Island, on the antimeridian
    ];
    for (const code of oracle.rings.keys()) {
      const rings = oracle.rings.get(code)!;
      for (let k = 0; k < 6; k++) {
        // Near a border: a little off a vertex of one of the country's rings.
        const ring = rings[Math.floor(next() * rings.length)]!;
        const [lon, lat] = ring[Math.floor(next() * ring.length)]!;
        const wrapped = lon > 180 ? lon - 360 : lon;
        points.push([wrapped + (next() - 0.5) * 0.02, lat + (next() - 0.5) * 0.02]);
        // Anywhere around it.
        points.push([wrapped + (next() - 0.5) * 4, Math.max(-89, Math.min(89, lat + (next() - 0.5) * 4))]);
      }
    }
    let inside = 0;
    let near = 0;
    for (const [lon, lat] of points) {
      const here: string[] = [];
      for (const code of oracle.around(lon, lat)) {
        const expected = oracle.place(code, lon, lat, TOLERANCE_KM);
        const found = placeIn(world.shapeOf(code)!, lon, lat, TOLERANCE_KM);
        if (found.inside !== expected.inside || found.borderKm !== expected.borderKm) {
          expect({ code, lon, lat, ...found }).toEqual({ code, lon, lat, ...expected });
        }
        if (expected.inside) here.push(code);
        if (expected.borderKm !== null) near++;
      }
      expect(world.countriesAt(lon, lat)).toEqual(here.sort());
      if (here.length > 0) inside++;
    }
    // The sample reaches both sides of borders, not only open sea.
    expect(inside).toBeGreaterThan(points.length / 4);
    expect(near).toBeGreaterThan(points.length / 4);
    expect(world.countriesAt(-150, 66.5)).toEqual(['US']);
    expect(world.countriesAt(172, 66.5)).toEqual(['RU']);
    expect(world.countriesAt(178.44, -18.14)).toEqual(['FJ']);
  });
});
