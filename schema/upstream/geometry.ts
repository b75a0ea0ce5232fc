import { z } from 'zod';

/**
 * GeoJSON Polygon (and MultiPolygon, accepted on upload): rings of [longitude, latitude] pairs in
 * WGS84. A Point is accepted too: the EU Information System takes a point for a plot of up to 4
 * hectares (docs/eudr-readiness.md), so a service may send one; it is stored as sent and the
 * readiness checks say when a point is not enough. Any other GeoJSON geometry is stored as sent too
 * and flagged (geometryIssue below). Coordinates are checked by a plain loop rather than nested zod arrays: a 500-plot page
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
/** Lines: GeoJSON, but not a plot of land; the EU information system refuses them (docs/eudr-readiness.md). */
export interface LineString {
  type: 'LineString';
  coordinates: Position[];
}
export interface MultiLineString {
  type: 'MultiLineString';
  coordinates: Position[][];
}
/** Accepted by the EU information system, but never sent by the service's contract: stored, not checked by ddsync. */
export interface MultiPoint {
  type: 'MultiPoint';
  coordinates: Position[];
}
export interface GeometryCollection {
  type: 'GeometryCollection';
  geometries: PlotGeometry[];
}
/** The shapes ddsync checks (the contract's). */
export type CheckedGeometry = Polygon | MultiPolygon | Point;
/** GeoJSON a service off its contract may send: stored as sent and flagged by the readiness checks, never skipped. */
export type UncheckedGeometry = LineString | MultiLineString | MultiPoint | GeometryCollection;
export type PlotGeometry = CheckedGeometry | UncheckedGeometry;

/** Whether ddsync's shape checks read this geometry (Point, Polygon, MultiPolygon). */
export function isCheckedGeometry(geometry: PlotGeometry): geometry is CheckedGeometry {
  return geometry.type === 'Polygon' || geometry.type === 'MultiPolygon' || geometry.type === 'Point';
}

export interface GeometryIssue {
  path: (string | number)[];
  message: string;
}

/** Every position of a geometry, collections included, in order. */
export function* positionsOf(geometry: PlotGeometry): Generator<Position> {
  switch (geometry.type) {
    case 'Point':
      yield geometry.coordinates;
      return;
    case 'LineString':
    case 'MultiPoint':
      yield* geometry.coordinates;
      return;
    case 'Polygon':
    case 'MultiLineString':
      for (const line of geometry.coordinates) yield* line;
      return;
    case 'MultiPolygon':
      for (const polygon of geometry.coordinates) for (const ring of polygon) yield* ring;
      return;
    case 'GeometryCollection':
      for (const member of geometry.geometries) yield* positionsOf(member);
      return;
  }
}

const DEPTH = { Point: 1, LineString: 2, MultiPoint: 2, MultiLineString: 3, Polygon: 3, MultiPolygon: 4 } as const;
const TYPES = `"${Object.keys(DEPTH).join('", "')}" or "GeometryCollection"`;
/** Collections inside collections, at most (RFC 7946 §3.1.8 advises against any nesting). */
const MAX_COLLECTION_DEPTH = 4;

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

/**
 * The first problem with `value` as a GeoJSON geometry (RFC 7946 §3.1), or null. Every GeoJSON
 * geometry type is read, not only the contract's Polygon, MultiPolygon and Point: a plot sent as a
 * line is still a plot its supplier declared, so it is stored and the readiness checks say the EU
 * refuses it, instead of the record being skipped where no check or gate would ever see it.
 */
export function geometryIssue(value: unknown, collectionDepth = 0): GeometryIssue | null {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return { path: [], message: 'expected object' };
  const { type, coordinates, geometries } = value as { type?: unknown; coordinates?: unknown; geometries?: unknown };
  if (type === 'GeometryCollection') {
    if (collectionDepth >= MAX_COLLECTION_DEPTH)
      return { path: [], message: `expected collections nested at most ${MAX_COLLECTION_DEPTH} deep` };
    if (!Array.isArray(geometries)) return { path: ['geometries'], message: 'expected array' };
    for (let i = 0; i < geometries.length; i++) {
      const issue = geometryIssue(geometries[i], collectionDepth + 1);
      if (issue) return { path: ['geometries', i, ...issue.path], message: issue.message };
    }
    return null;
  }
  if (typeof type !== 'string' || !Object.hasOwn(DEPTH, type)) return { path: ['type'], message: `expected ${TYPES}` };
  const issue = coordinatesIssue(coordinates, DEPTH[type as keyof typeof DEPTH]);
  return issue ? { path: ['coordinates', ...issue.path], message: issue.message } : null;
}

export const PlotGeometrySchema = z.custom<PlotGeometry>().superRefine((value, ctx) => {
  const issue = geometryIssue(value);
  if (issue) ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message, input: value });
});
