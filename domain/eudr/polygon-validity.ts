import type { GeometryFacts } from '../geometry/geometry-quality.ts';
import { finding, type Finding } from './finding.ts';

/**
 * Whether the polygon is one the EU Information System can take (GeoJSON, RFC 7946 §3.1.6, as its
 * GeoJSON file description requires): closed rings of at least four positions, WGS84 coordinates in
 * range, sides that do not cross, holes inside the outer ring. The shape is assessed once by the
 * refresh (geometry-quality.ts); this turns its first problem into a finding. A ring drawn across
 * the antimeridian is measured across it (no false area or self-intersection) and noted as info.
 */
export function polygonValidityFindings(facts: GeometryFacts): Finding[] {
  const found: Finding[] = [];
  const p = facts.problem;
  const at = (where: { polygon?: number; ring?: number }) =>
    where.ring === undefined ? {} : { polygon: where.polygon ?? 0, ring: where.ring };
  const ringName = (where: { polygon?: number; ring?: number }) =>
    where.ring === 0 ? 'The outer ring' : `Ring ${where.ring}`;
  switch (p?.kind) {
    case 'out_of_range':
      found.push(
        finding(
          'coordinates_out_of_range',
          `A position [${p.position[0]}, ${p.position[1]}] lies outside WGS84 range (longitude -180..180, latitude -90..90): coordinates swapped or not in degrees?`,
          { position: p.position, ...at(p) },
        ),
      );
      break;
    case 'empty':
    case 'no_rings':
      found.push(
        finding(
          'polygon_empty',
          'The polygon has no positions.',
          p.kind === 'no_rings' ? { polygon: p.polygon } : null,
        ),
      );
      break;
    case 'not_closed':
      found.push(
        finding('polygon_ring_not_closed', `${ringName(p)} is not closed: its first and last positions differ.`, at(p)),
      );
      break;
    case 'too_few_positions':
      found.push(
        finding(
          'polygon_too_few_positions',
          p.distinct === undefined
            ? `${ringName(p)} has ${p.positions} positions; a closed ring needs at least 4 (three corners and the first again).`
            : `${ringName(p)} has only ${p.distinct} distinct position(s); a ring needs at least 3 different corners to enclose an area.`,
          { positions: p.positions, ...(p.distinct === undefined ? {} : { distinct: p.distinct }), ...at(p) },
        ),
      );
      break;
    case 'self_intersection':
      found.push(
        finding(
          'polygon_self_intersection',
          `The polygon's sides cross at [${p.at[0]}, ${p.at[1]}]${p.count > 1 || !p.complete ? ` and ${p.complete ? '' : 'at least '}${p.count - 1} more point(s)` : ''}.`,
          { at: p.at, crossings: p.count, ...(p.complete ? {} : { crossingsAtLeast: true }) },
        ),
      );
      break;
    case 'too_complex':
      found.push(
        finding(
          'polygon_too_complex_to_check',
          `More than ${p.pairs} pairs of the polygon's sides overlap one another: whether they cross was not checked. Redraw or simplify the boundary.`,
          { overlappingPairsChecked: p.pairs },
        ),
      );
      break;
    case 'hole_outside':
      found.push(finding('polygon_hole_outside', `${ringName(p)} is a hole that lies outside the outer ring.`, at(p)));
      break;
    default:
      break;
  }
  if (facts.crossesAntimeridian)
    found.push(
      finding(
        'polygon_crosses_antimeridian',
        'The polygon crosses the antimeridian (±180° longitude); measured across it. Some tools expect it split in two there.',
      ),
    );
  return found;
}
