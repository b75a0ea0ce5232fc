import { z } from 'zod';

/**
 * GeoJSON Polygon (and MultiPolygon, accepted on upload): rings of [longitude, latitude] pairs in
 * WGS84. A Point is accepted too: the EU Information System takes a point for a plot of up to 4
 * hectares (docs/eudr-readiness.md), so a service may send one; it is stored as sent and the
 * readiness checks say when a point is not enough. Coordinates are checked by a plain loop rather than nested zod arrays: a 500-plot page
 * carries tens of thousands of positions and this is the hot path of a refresh.
 */

export type Position = number[];
export interface Polygon {
  type: 'Polygon';
  coordinates: Position[][];
}
export interface MultiPolygon {
  type: 'MultiPolygon';
  coordinates: Position[][][];
}
export interface Point {
  type: 'Point';
  coordinates: Position;
}
export type PlotGeometry = Polygon | MultiPolygon | Point;

export interface GeometryIssue {
  path: (string | number)[];
  message: string;
}

const DEPTH = { Point: 1, Polygon: 3, MultiPolygon: 4 } as const;

/** The first problem with `value` as arrays nested `depth` deep around number positions, or null. */
export function coordinatesIssue(value: unknown, depth: number): GeometryIssue | null {
  if (!Array.isArray(value)) return { path: [], message: 'expected array' };
  if (depth === 1) {
    // A position: at least [longitude, latitude], optionally altitude.
    if (value.length < 2) return { path: [], message: 'expected a position of at least 2 numbers' };
    for (let i = 0; i < value.length; i++) {
      const n = value[i];
      if (typeof n !== 'number' || !Number.isFinite(n)) return { path: [i], message: 'expected number' };
    }
    return null;
  }
  for (let i = 0; i < value.length; i++) {
    const issue = coordinatesIssue(value[i], depth - 1);
    // Paths are built only on failure: the happy path allocates nothing.
    if (issue) return { path: [i, ...issue.path], message: issue.message };
  }
  return null;
}

export function geometryIssue(value: unknown): GeometryIssue | null {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return { path: [], message: 'expected object' };
  const { type, coordinates } = value as { type?: unknown; coordinates?: unknown };
  if (type !== 'Polygon' && type !== 'MultiPolygon' && type !== 'Point')
    return { path: ['type'], message: 'expected "Polygon", "MultiPolygon" or "Point"' };
  const issue = coordinatesIssue(coordinates, DEPTH[type]);
  return issue ? { path: ['coordinates', ...issue.path], message: issue.message } : null;
}

export const PlotGeometrySchema = z.custom<PlotGeometry>().superRefine((value, ctx) => {
  const issue = geometryIssue(value);
  if (issue) ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message, input: value });
});
