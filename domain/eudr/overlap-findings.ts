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

/** Another plot overlapping a plot beyond the tolerance, as that plot's finding names it. */
export interface OverlapOther {
  plot_id: string;
  overlap_m2: number;
  claimants: Claimants;
}

/**
 * The order a finding lists the other plots in: largest overlap first (rounded to 0.01 ha), then by
 * id. A stable order, so unchanged overlaps give the same text. The overlap check streams each
 * plot's others from Postgres in this order (warehouse/spatial/overlaps.ts, `overlapOrderSql`).
 */
export function compareOthers(x: OverlapOther, y: OverlapOther): number {
  return ha(y.overlap_m2) - ha(x.overlap_m2) || (x.plot_id < y.plot_id ? -1 : 1);
}

/**
 * What one plot's finding of one code needs of its overlaps, however many there are: their count,
 * their total (summed in the order the others were added, which is the listing order), and the first
 * MAX_LISTED others in the listing order. Bounded, so a plot overlapped by thousands of copies of
 * itself costs no more memory than one overlapped by 20.
 */
export interface OverlapTally {
  /** This plot's own area, m². */
  plotM2: number;
  count: number;
  totalM2: number;
  /** At most MAX_LISTED, in compareOthers order. */
  listed: OverlapOther[];
}

export function newOverlapTally(plotM2: number): OverlapTally {
  return { plotM2, count: 0, totalM2: 0, listed: [] };
}

/**
 * Counts `other` into the tally. The total is a floating-point sum, so its last bits depend on the
 * order: add the others in compareOthers order (as overlapFindings and the overlap check do) and the
 * text is the same for the same overlaps.
 */
export function tallyOverlap(tally: OverlapTally, other: OverlapOther): void {
  tally.count += 1;
  tally.totalM2 += other.overlap_m2;
  const listed = tally.listed;
  if (listed.length === MAX_LISTED && compareOthers(other, listed[MAX_LISTED - 1]!) > 0) return;
  let at = listed.length;
  while (at > 0 && compareOthers(other, listed[at - 1]!) < 0) at -= 1;
  listed.splice(at, 0, other);
  if (listed.length > MAX_LISTED) listed.pop();
}

/** The finding of one plot and code from the tally of its overlaps (at least one). */
export function overlapFinding(plot: string, code: OverlapCode, tally: OverlapTally): OverlapFinding {
  const totalM2 = tally.totalM2;
  const totalHa = ha(totalM2);
  const first = tally.listed[0]!;
  const count = tally.count;
  const whose = code === 'overlap_other_supplier' ? 'of another supplier' : 'of the same supplier';
  const many = count === 1 ? `plot ${first.plot_id}` : `${count} plots`;
  const largest = count === 1 ? '' : ` (the largest: plot ${first.plot_id}, ${haText(ha(first.overlap_m2))})`;
  const meaning =
    code === 'overlap_other_supplier'
      ? 'the same land is claimed twice'
      : 'probably one field entered twice; the hectares are counted twice';
  return {
    plot_id: plot,
    code,
    severity: severityOf(code),
    message: `Overlaps ${many} ${whose} by ${haText(totalHa)}${largest}: ${meaning}.`,
    details: JSON.stringify({
      overlapping_plots: count,
      overlap_ha: totalHa,
      // Of this plot's area, at most all of it (overlaps with several plots may cover the same part).
      share_of_plot: share(Math.min(tally.plotM2, totalM2), tally.plotM2),
      tolerance: `an overlap counts beyond ${2 * BORDER_ERROR_M} m × √(smaller plot's m²) (docs/postgis.md)`,
      plots: tally.listed.map((o) => ({
        plot_id: o.plot_id,
        overlap_ha: ha(o.overlap_m2),
        supplier_business_ids: [...o.claimants.suppliers].sort(),
        own: o.claimants.own,
      })),
    }),
  };
}

/**
 * The findings for every plot of a counted pair, one per plot and code, in plot id then code order.
 * All in memory: for a handful of pairs (tests, tools). The overlap check over a warehouse streams
 * the same tallies from Postgres instead (warehouse/spatial/overlaps.ts).
 */
export function overlapFindings(
  pairs: readonly OverlapPair[],
  claimantsOf: (plotId: string) => Claimants,
): OverlapFinding[] {
  const byPlot = new Map<string, { plotM2: number; codes: Map<OverlapCode, OverlapOther[]> }>();
  const add = (plot: string, plotM2: number, code: OverlapCode, other: OverlapOther) => {
    let entry = byPlot.get(plot);
    if (!entry) byPlot.set(plot, (entry = { plotM2, codes: new Map() }));
    const list = entry.codes.get(code);
    if (list) list.push(other);
    else entry.codes.set(code, [other]);
  };
  for (const pair of pairs) {
    if (pair.a === pair.b || !beyondTolerance(pair)) continue;
    const ca = claimantsOf(pair.a);
    const cb = claimantsOf(pair.b);
    const code = overlapCode(ca, cb);
    add(pair.a, pair.aM2, code, { plot_id: pair.b, overlap_m2: pair.overlapM2, claimants: cb });
    add(pair.b, pair.bM2, code, { plot_id: pair.a, overlap_m2: pair.overlapM2, claimants: ca });
  }
  const findings: OverlapFinding[] = [];
  for (const plot of [...byPlot.keys()].sort()) {
    const { plotM2, codes } = byPlot.get(plot)!;
    for (const code of OVERLAP_CODES) {
      const others = codes.get(code);
      if (!others) continue;
      const tally = newOverlapTally(plotM2);
      for (const other of others.sort(compareOthers)) tallyOverlap(tally, other);
      findings.push(overlapFinding(plot, code, tally));
    }
  }
  return findings;
}
