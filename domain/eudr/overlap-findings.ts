/**
 * From overlapping pairs of plots to EUDR findings: which overlaps count, whose land it is, and the
 * sentence and numbers a compliance team reads. Pure: the pairs come from PostGIS (overlaps.ts).
 *
 * The tolerance (docs/postgis.md): two plots mapped independently on the ground share a border drawn
 * twice, each within a GNSS receiver's error (about 5 m for a phone under open sky). A border of
 * length L drawn 5 m off on either side leaves a sliver of up to 10 m × L, and a plot of A m² has
 * borders of about 2 × √A metres with one neighbour at most (half a square's perimeter). So an overlap
 * of up to 10 m × 2√A / 2 = 10 × √A m² of the smaller plot (A) is what positioning error alone can
 * explain; beyond it, the same land is claimed twice. It is 10 % of a 1 ha plot, 1 % of a 100 ha
 * estate, and two copies of one polygon are always beyond it.
 */

export const OVERLAP_CODES = ['overlap_same_supplier', 'overlap_other_supplier'] as const;
export type OverlapCode = (typeof OVERLAP_CODES)[number];

/** Metres of positioning error on each side of a border drawn twice. */
export const BORDER_ERROR_M = 5;
/** Most plots listed in a finding's details (the count and total hectares cover them all). */
export const MAX_LISTED = 20;

/** An intersecting pair as PostGIS measured it (areas on the WGS84 spheroid, m²). */
export interface OverlapPair {
  a: string;
  b: string;
  overlapM2: number;
  aM2: number;
  bM2: number;
}

/** Who claims a plot: its live suppliers' business ids, and whether it is the business's own. */
export interface Claimants {
  suppliers: readonly string[];
  own: boolean;
}

export interface OverlapFinding {
  plot_id: string;
  code: OverlapCode;
  severity: 'blocking' | 'warning';
  message: string;
  /** JSON text; deterministic for the same overlaps, so an unchanged refresh rewrites nothing. */
  details: string;
}

/** m² of overlap that positioning error alone can explain between plots the smaller of which has `smallerM2`. */
export function toleranceM2(smallerM2: number): number {
  return 2 * BORDER_ERROR_M * Math.sqrt(Math.max(0, smallerM2));
}

/** Whether the pair overlaps beyond the tolerance: the same land claimed twice. */
export function beyondTolerance(pair: OverlapPair): boolean {
  return pair.overlapM2 > toleranceM2(Math.min(pair.aM2, pair.bM2));
}

/**
 * Same supplier when the two plots share a claimant (a live supplier, or both are the business's
 * own): probably one field entered twice. Otherwise other supplier: two sources claim the same land.
 */
export function overlapCode(a: Claimants, b: Claimants): OverlapCode {
  const shared = (a.own && b.own) || a.suppliers.some((s) => b.suppliers.includes(s));
  return shared ? 'overlap_same_supplier' : 'overlap_other_supplier';
}

/**
 * Severity: land claimed by two different suppliers cannot go into a statement as it is: at least
 * one geolocation is wrong, or the same production is declared twice (Article 9(1)(d) asks for the
 * geolocation of all plots where the commodity was produced; Article 10(2) names mixing with
 * products of unknown origin among the risks to assess). Blocking. Within one supplier, an overlap is usually one
 * field entered twice, or redrawn: the origin is not in doubt, but the hectares are counted twice
 * and one copy should go. A warning.
 */
export function severityOf(code: OverlapCode): 'blocking' | 'warning' {
  return code === 'overlap_other_supplier' ? 'blocking' : 'warning';
}

const ha = (m2: number) => Math.round(m2 / 100) / 100;
const share = (part: number, whole: number) => (whole > 0 ? Math.round((part / whole) * 1000) / 1000 : null);
const haText = (h: number) => `${h.toFixed(2)} ha`;

/** The findings for every plot of a counted pair, one per plot and code, in plot id then code order. */
export function overlapFindings(
  pairs: readonly OverlapPair[],
  claimantsOf: (plotId: string) => Claimants,
): OverlapFinding[] {
  interface Other {
    plot_id: string;
    overlap_m2: number;
    plotM2: number;
    claimants: Claimants;
  }
  const byPlot = new Map<string, Map<OverlapCode, Other[]>>();
  const add = (plot: string, code: OverlapCode, other: Other) => {
    let codes = byPlot.get(plot);
    if (!codes) byPlot.set(plot, (codes = new Map()));
    const list = codes.get(code);
    if (list) list.push(other);
    else codes.set(code, [other]);
  };
  for (const pair of pairs) {
    if (pair.a === pair.b || !beyondTolerance(pair)) continue;
    const ca = claimantsOf(pair.a);
    const cb = claimantsOf(pair.b);
    const code = overlapCode(ca, cb);
    add(pair.a, code, { plot_id: pair.b, overlap_m2: pair.overlapM2, plotM2: pair.aM2, claimants: cb });
    add(pair.b, code, { plot_id: pair.a, overlap_m2: pair.overlapM2, plotM2: pair.bM2, claimants: ca });
  }
  const findings: OverlapFinding[] = [];
  for (const plot of [...byPlot.keys()].sort()) {
    for (const code of OVERLAP_CODES) {
      const others = byPlot.get(plot)?.get(code);
      if (!others) continue;
      // Largest overlap first, then by id: a stable order, so unchanged overlaps give the same text.
      others.sort((x, y) => ha(y.overlap_m2) - ha(x.overlap_m2) || (x.plot_id < y.plot_id ? -1 : 1));
      const totalM2 = others.reduce((sum, o) => sum + o.overlap_m2, 0);
      const totalHa = ha(totalM2);
      const first = others[0]!;
      const whose = code === 'overlap_other_supplier' ? 'of another supplier' : 'of the same supplier';
      const many = others.length === 1 ? `plot ${first.plot_id}` : `${others.length} plots`;
      const largest =
        others.length === 1 ? '' : ` (the largest: plot ${first.plot_id}, ${haText(ha(first.overlap_m2))})`;
      const meaning =
        code === 'overlap_other_supplier'
          ? 'the same land is claimed twice'
          : 'probably one field entered twice; the hectares are counted twice';
      findings.push({
        plot_id: plot,
        code,
        severity: severityOf(code),
        message: `Overlaps ${many} ${whose} by ${haText(totalHa)}${largest}: ${meaning}.`,
        details: JSON.stringify({
          overlapping_plots: others.length,
          overlap_ha: totalHa,
          // Of this plot's area, at most all of it (overlaps with several plots may cover the same part).
          share_of_plot: share(Math.min(first.plotM2, totalM2), first.plotM2),
          tolerance: `an overlap counts beyond ${2 * BORDER_ERROR_M} m × √(smaller plot's m²) (docs/postgis.md)`,
          plots: others.slice(0, MAX_LISTED).map((o) => ({
            plot_id: o.plot_id,
            overlap_ha: ha(o.overlap_m2),
            supplier_business_ids: [...o.claimants.suppliers].sort(),
            own: o.claimants.own,
          })),
        }),
      });
    }
  }
  return findings;
}
