import { type CheckedGeometry, isCheckedGeometry, type PlotGeometry, type Position } from '../../schema/upstream.ts';
import { assessGeometry, type GeometryFacts } from '../geometry/geometry-quality.ts';
import { finding, type Finding } from './finding.ts';
import { hasMoreThan6Decimals, truncatedGeometry } from './six-decimals.ts';

/**
 * A polygon that is valid as sent but not once the EU information system has cut its coordinates to
 * 6 decimals (six-decimals.ts). The Operator API Reference v1.0 (29 May 2026) §9.3 note 1 warns that
 * the cut "may, in extreme cases, even result in invalid geometries where the original is valid", and
 * §9.5 item 7 lists "Duplicate coordinates due to 6 decimals rounding in the system" among the errors
 * the system refuses a file for. So the cut shape is checked again with the same rules as the shape
 * sent (geometry-quality.ts), plus consecutive positions the cut has made equal. Only shapes valid
 * as sent are checked: an invalid one already has its finding, and the cut cannot mend it.
 */
/** Less than a square millimetre: nothing left but rounding noise. */
const COLLAPSED_HA = 1e-10;

export function truncationFindings(geometry: PlotGeometry | null | undefined, facts: GeometryFacts): Finding[] {
  if (!geometry || !isCheckedGeometry(geometry) || geometry.type === 'Point' || !facts.valid) return [];
  if (!hasMoreThan6Decimals(geometry)) return [];
  const cut = truncatedGeometry(geometry);
  // The EU's own words first: a duplicate coordinate (a checker of sides would call it a crossing).
  const duplicate = newDuplicate(geometry, cut);
  if (duplicate)
    return [
      finding(
        'geometry_invalid_at_6_decimals',
        `Cut to 6 decimals as the EU information system keeps it, two consecutive positions become the same [${duplicate.at[0]}, ${duplicate.at[1]}]: the EU refuses duplicate coordinates.`,
        { rule: 'duplicate_position', at: duplicate.at, polygon: duplicate.polygon, ring: duplicate.ring },
      ),
    ];
  const after = assessGeometry(cut);
  // Corners cut onto one line enclose nothing: the EU asks for "at least 4 non-aligned points" (Conformance Test 4).
  if (after.valid && after.areaHa !== null && after.areaHa < COLLAPSED_HA)
    return [
      finding(
        'geometry_invalid_at_6_decimals',
        'Cut to 6 decimals as the EU information system keeps it, the polygon collapses: its corners fall on one line and enclose no area. The EU would refuse it.',
        { rule: 'collapsed', areaHaAsSent: facts.areaHa },
      ),
    ];
  if (!after.valid) {
    const collapsed = after.problem?.kind === 'too_few_positions' || after.problem?.kind === 'empty';
    return [
      finding(
        'geometry_invalid_at_6_decimals',
        collapsed
          ? `Cut to 6 decimals as the EU information system keeps it, the polygon collapses (${after.issue}): the EU would refuse it.`
          : `Cut to 6 decimals as the EU information system keeps it, the polygon becomes invalid (${after.issue}): the EU would refuse it.`,
        { rule: collapsed ? 'collapsed' : (after.problem?.kind ?? 'invalid'), issue: after.issue },
      ),
    ];
  }
  return [];
}

/** The first pair of consecutive positions that differ as sent but are equal once cut. */
function newDuplicate(
  sent: CheckedGeometry,
  cut: CheckedGeometry,
): { at: Position; polygon: number; ring: number } | null {
  const polygonsOf = (g: CheckedGeometry): Position[][][] =>
    g.type === 'MultiPolygon' ? g.coordinates : g.type === 'Polygon' ? [g.coordinates] : [];
  const before = polygonsOf(sent);
  const after = polygonsOf(cut);
  for (let p = 0; p < after.length; p++) {
    for (let r = 0; r < after[p]!.length; r++) {
      const a = after[p]![r]!;
      const b = before[p]![r]!;
      for (let i = 1; i < a.length; i++) {
        const same = a[i]![0] === a[i - 1]![0] && a[i]![1] === a[i - 1]![1];
        const wasSame = b[i]![0] === b[i - 1]![0] && b[i]![1] === b[i - 1]![1];
        if (same && !wasSame) return { at: a[i]!, polygon: p, ring: r };
      }
    }
  }
  return null;
}
