import { isCheckedGeometry, type PlotGeometry } from '../../schema/upstream.ts';
import { finding, type Finding } from './finding.ts';

/**
 * Regulation (EU) 2023/1115, Art. 2(28): latitude and longitude with at least six decimal digits. A
 * JSON number does not keep trailing zeros (5.123450 arrives as 5.12345), so one short coordinate
 * proves nothing: about one value in ten of six-decimal data ends in 0. The finding is raised when
 * more than half of the plot's coordinate values have fewer than six decimals (our tolerance), which
 * catches data rounded to 4 or 5 decimals and never fires on honest six-decimal data.
 */
export const SHORT_SHARE_LIMIT = 0.5;

export function coordinatePrecisionFindings(geometry: PlotGeometry | null | undefined): Finding[] {
  // A line or a collection has its own finding (geolocation-form.ts); its precision is not the question.
  if (!geometry || !isCheckedGeometry(geometry)) return [];
  const tally = { values: 0, short: 0 };
  if (geometry.type === 'Point') countPosition(geometry.coordinates, tally);
  else if (geometry.type === 'Polygon') countRings(geometry.coordinates, tally);
  else for (const polygon of geometry.coordinates) countRings(polygon, tally);
  if (tally.values === 0 || tally.short / tally.values <= SHORT_SHARE_LIMIT) return [];
  return [
    finding(
      'coordinate_precision_low',
      `${tally.short} of ${tally.values} coordinate values have fewer than 6 decimal digits; the regulation asks for at least 6 (about 0.1 m).`,
      { values: tally.values, short: tally.short, limitShare: SHORT_SHARE_LIMIT },
    ),
  ];
}

function countRings(rings: number[][][], tally: { values: number; short: number }): void {
  // Plain loops: every position of every changed plot passes here.
  for (let r = 0; r < rings.length; r++) {
    const ring = rings[r]!;
    // The closing position repeats the first: counted once.
    const end = ring.length > 1 && samePosition(ring[0]!, ring[ring.length - 1]!) ? ring.length - 1 : ring.length;
    for (let i = 0; i < end; i++) countPosition(ring[i]!, tally);
  }
}

function countPosition(position: number[], tally: { values: number; short: number }): void {
  // Longitude and latitude; an altitude is not a coordinate of the plot.
  for (let k = 0; k < 2 && k < position.length; k++) {
    tally.values++;
    if (fewerThanSixDecimals(position[k]!)) tally.short++;
  }
}

/** Whether `value` has at most 5 decimal digits (as a JSON number prints it). */
export function fewerThanSixDecimals(value: number): boolean {
  const scaled = value * 1e5;
  return Math.abs(scaled - Math.round(scaled)) < 1e-6;
}

function samePosition(a: number[], b: number[]): boolean {
  return a[0] === b[0] && a[1] === b[1];
}
