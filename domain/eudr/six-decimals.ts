import type { CheckedGeometry, Position } from '../../schema/upstream.ts';

/**
 * Coordinates as the EU information system keeps them: cut to 6 decimal places. The Operator API
 * Reference v1.0 (29 May 2026), §9.3 note 1 and §10.3, says the system truncates ("will truncate
 * coordinate points to 6 decimal places before storing"); the validation rules v1.3 of February 2025
 * said it rounds. The newest document wins, so this truncates.
 *
 * The cut is the cut of the number's decimal text (what a JSON file carries). Plain `Math.trunc(x *
 * 1e6)` is not: binary floating point can land a hair below the 6-decimal grid (a value such as
 * 0.000003 could come out as 0.000002), so near the grid the text decides.
 */
export function truncate6(value: number): number {
  const scaled = value * 1e6;
  const k = Math.round(scaled);
  // At most 6 decimals already: k / 1e6 is then the very double the 6-decimal text parses to.
  if (k / 1e6 === value) return value;
  // Within float noise of the 6-decimal grid, scaling may have crossed it: decide on the text.
  if (Math.abs(scaled - k) < 1e-6) return textTruncate6(value);
  // Math.trunc(scaled) / 1e6 is the correctly rounded double of the cut decimal, as parsing it would give.
  return Math.trunc(scaled) / 1e6 || 0;
}

function textTruncate6(value: number): number {
  const plain = String(value);
  // 1e-7 prints with an exponent: a fixed text has the digits to cut.
  const text = plain.includes('e') ? value.toFixed(20) : plain;
  const dot = text.indexOf('.');
  if (dot < 0) return value;
  // -0.0000001 cuts to -0: the same position as 0.
  return Number(text.slice(0, dot + 7)) || 0;
}

function truncatePosition(position: Position): Position {
  return [truncate6(position[0]!), truncate6(position[1]!)];
}

/** The geometry as the EU keeps it (longitude and latitude only, each cut to 6 decimals). */
export function truncatedGeometry(geometry: CheckedGeometry): CheckedGeometry {
  switch (geometry.type) {
    case 'Point':
      return { type: 'Point', coordinates: truncatePosition(geometry.coordinates) };
    case 'Polygon':
      return { type: 'Polygon', coordinates: geometry.coordinates.map((ring) => ring.map(truncatePosition)) };
    case 'MultiPolygon':
      return {
        type: 'MultiPolygon',
        coordinates: geometry.coordinates.map((rings) => rings.map((ring) => ring.map(truncatePosition))),
      };
  }
}

/** Whether any longitude or latitude has more than 6 decimals (the cut would change the geometry). */
export function hasMoreThan6Decimals(geometry: CheckedGeometry): boolean {
  const long = (p: Position) => truncate6(p[0]!) !== p[0] || truncate6(p[1]!) !== p[1];
  switch (geometry.type) {
    case 'Point':
      return long(geometry.coordinates);
    case 'Polygon':
      return geometry.coordinates.some((ring) => ring.some(long));
    case 'MultiPolygon':
      return geometry.coordinates.some((rings) => rings.some((ring) => ring.some(long)));
  }
}
