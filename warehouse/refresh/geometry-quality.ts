import turfArea from '@turf/area';
import turfBbox from '@turf/bbox';
import turfKinks from '@turf/kinks';
import type { PlotGeometry, Position } from '../../schema/upstream.ts';
import { drawnRingAreaM2 } from './drawn-area.ts';

/**
 * What the warehouse records about a plot's polygon: its area (hectares, @turf/area), bounding box,
 * and whether it is a valid shape. An invalid shape is stored and flagged with the reason, never
 * dropped: the plot is still a plot the supplier declared, and its area is the area it encloses as
 * drawn (flaggedAreaM2), so its hectares stay in every total.
 */
export interface GeometryFacts {
  areaHa: number | null;
  bbox: [minLon: number, minLat: number, maxLon: number, maxLat: number] | null;
  valid: boolean;
  issue: string | null;
}

const M2_PER_HECTARE = 10_000;

export function assessGeometry(geometry: PlotGeometry | null | undefined): GeometryFacts {
  if (!geometry) return { areaHa: null, bbox: null, valid: false, issue: 'no geometry' };
  const polygons: Position[][][] = geometry.type === 'Polygon' ? [geometry.coordinates] : geometry.coordinates;
  const issue = structuralIssue(polygons, geometry.type === 'MultiPolygon');
  if (issue === 'empty') return { areaHa: null, bbox: null, valid: false, issue: 'geometry has no positions' };
  const bbox = turfBbox(geometry) as GeometryFacts['bbox'];
  const flagged = (why: string): GeometryFacts => ({
    areaHa: flaggedAreaM2(polygons) / M2_PER_HECTARE,
    bbox,
    valid: false,
    issue: why,
  });
  if (issue) return flagged(issue);
  const kinks = turfKinks(geometry).features;
  if (kinks.length > 0) {
    const [lon, lat] = kinks[0]!.geometry.coordinates as [number, number];
    return flagged(
      `self-intersection at [${round(lon)}, ${round(lat)}]${kinks.length > 1 ? ` and ${kinks.length - 1} more` : ''}`,
    );
  }
  return { areaHa: turfArea(geometry) / M2_PER_HECTARE, bbox, valid: true, issue: null };
}

/**
 * The area of a flagged shape: as @turf/area (outer ring minus holes, polygons added), but each ring
 * measured as drawn (drawnRingAreaM2), so a ring that crosses itself keeps the area it encloses
 * instead of the 0 its cancelling lobes give; never negative. Rings are measured one by one: rings
 * that cross one another are not merged.
 */
function flaggedAreaM2(polygons: Position[][][]): number {
  let total = 0;
  for (const [outer, ...holes] of polygons) {
    if (!outer) continue;
    total += Math.max(
      0,
      holes.reduce((area, hole) => area - drawnRingAreaM2(hole), drawnRingAreaM2(outer)),
    );
  }
  return total;
}

/** The first rule a GeoJSON polygon breaks (RFC 7946 §3.1.6), or 'empty', or null. */
function structuralIssue(polygons: Position[][][], multi: boolean): string | null {
  let positions = 0;
  for (let p = 0; p < polygons.length; p++) {
    const rings = polygons[p]!;
    const where = (r: number) => (multi ? `polygon ${p} ring ${r}` : `ring ${r}`);
    if (rings.length === 0) return multi ? `polygon ${p} has no rings` : 'polygon has no rings';
    for (let r = 0; r < rings.length; r++) {
      const ring = rings[r]!;
      positions += ring.length;
      for (const [lon, lat] of ring) {
        if (lon! < -180 || lon! > 180 || lat! < -90 || lat! > 90)
          return `${where(r)} has a position outside WGS84 range: [${lon}, ${lat}]`;
      }
      if (ring.length < 4) return `${where(r)} has ${ring.length} positions (a ring needs at least 4)`;
      const first = ring[0]!;
      const last = ring[ring.length - 1]!;
      if (first[0] !== last[0] || first[1] !== last[1])
        return `${where(r)} is not closed (first and last positions differ)`;
    }
  }
  return positions === 0 ? 'empty' : null;
}

function round(n: number): number {
  return Math.round(n * 1e6) / 1e6;
}
