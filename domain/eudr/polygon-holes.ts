import turfArea from '@turf/area';
import { isCheckedGeometry, type PlotGeometry, type Position } from '../../schema/upstream.ts';
import type { GeometryFacts } from '../geometry/geometry-quality.ts';
import { finding, type Finding } from './finding.ts';

/**
 * A polygon with holes (interior rings). The EU GeoJSON File Description v1.3 (Operator API Reference
 * v1.0, 29 May 2026, §9.2) says polygons with holes "are not supported and will not be processed",
 * and §9.5 item 15 that the system "does not take into account holes inside a polygon, but only the
 * outer boundaries". Either way the EU does not have the plot as drawn: it refuses it, or counts the
 * holes as part of the plot. Blocking: the fix is the document's own, separate polygons without holes
 * ("two half-doughnut shaped polygons"). The sentence says how much land the outer boundary adds.
 */
export function polygonHoleFindings(geometry: PlotGeometry | null | undefined, facts: GeometryFacts): Finding[] {
  if (!geometry || !isCheckedGeometry(geometry) || geometry.type === 'Point') return [];
  const polygons = geometry.type === 'MultiPolygon' ? geometry.coordinates : [geometry.coordinates];
  const holes = polygons.reduce((n, rings) => n + Math.max(0, rings.length - 1), 0);
  if (holes === 0) return [];
  const many = holes === 1 ? 'a hole' : `${holes} holes`;
  // Areas only for a valid shape: a flagged one's area is the area as drawn, not a measure to quote.
  if (!facts.valid || facts.areaHa === null)
    return [
      finding(
        'polygon_has_holes',
        `The polygon has ${many}; the EU information system does not process holes (it takes only the outer boundary): give separate polygons without holes.`,
        { holes },
      ),
    ];
  const outer = polygons.map((rings) => [facts.crossesAntimeridian ? unwrapped(rings[0]!) : rings[0]!]);
  const filledHa = turfArea({ type: 'MultiPolygon', coordinates: outer }) / 10_000;
  const extraHa = Math.max(0, filledHa - facts.areaHa);
  return [
    finding(
      'polygon_has_holes',
      `The polygon has ${many}; the EU information system does not process holes (it takes only the outer boundary), which counts ${extraHa.toFixed(2)} ha more (${filledHa.toFixed(2)} ha instead of ${facts.areaHa.toFixed(2)} ha): give separate polygons without holes.`,
      {
        holes,
        areaHa: round2(facts.areaHa),
        outerBoundaryHa: round2(filledHa),
        extraHa: round2(extraHa),
      },
    ),
  ];
}

function unwrapped(ring: Position[]): Position[] {
  return ring.map(([lon, lat]) => [lon! < 0 ? lon! + 360 : lon!, lat!]);
}

function round2(n: number): number {
  return Math.round(n * 100) / 100;
}
