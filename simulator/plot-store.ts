// The plot dataset: generated plots plus an in-memory overlay of mutations. Memory grows with the
// number of mutations only; an unfiltered page costs O(page), filtered queries scan.
import { ringAreaM2, type OffContractGeometry, type PolygonGeometry } from './geometry.ts';
import { globalIndexAt, ownerOf, type Layout, type SupplierReach } from './layout.ts';
import { generatePlot, oddKindOf, plotIndexOf, type Analysis, type PlotState } from './plot-factory.ts';

export interface PlotPatch {
  name?: string;
  /** A test may set a geometry off the contract (a line) to play a service that breaks it. */
  geometry?: PolygonGeometry | OffContractGeometry;
  commodities?: string[];
  riskAssessmentStatus?: string;
  riskLevel?: string | null;
  description?: string;
  customData?: Record<string, unknown>;
  surfaceArea?: number;
}

export class PlotStore {
  private patches = new Map<number, PlotPatch & { updatedAt: string }>();
  private extraAnalyses = new Map<number, Analysis[]>();
  private removed = new Set<number>();
  /** The index of the plot drawn with `hugePlotVertices` once found (null: there is none). */
  private hugeIndex: number | null | undefined;

  constructor(
    readonly seed: number,
    readonly layout: Layout,
    /** Vertices of every outer ring (default: 5 to 9 at random). */
    readonly vertices?: number,
    /** Vertices of the first plot of the first direct supplier's list (default: as every other plot). */
    readonly hugePlotVertices?: number,
  ) {}

  /**
   * The plot drawn with `hugePlotVertices`: the first ordinary plot (no odd record, which has a shape
   * of its own) on the first direct supplier's first page.
   */
  private get hugePlot(): number | undefined {
    if (this.hugePlotVertices === undefined) return undefined;
    if (this.hugeIndex === undefined) this.hugeIndex = this.findHugePlot() ?? null;
    return this.hugeIndex ?? undefined;
  }

  private findHugePlot(): number | undefined {
    const reach = this.layout.reach.get(this.layout.supplierIndices[0] ?? -1);
    if (!reach) return undefined;
    for (let offset = 0; ; offset++) {
      const g = globalIndexAt(this.layout, reach, offset);
      if (g === undefined || oddKindOf(g, this.ownPlotCount, this.layout.totalPlots) === undefined) return g;
    }
  }

  get ownPlotCount(): number {
    return this.layout.businesses[0]?.plotCount ?? 0;
  }

  /** The current state of plot `g`, or undefined when removed or out of range. */
  get(g: number): PlotState | undefined {
    if (g < 0 || g >= this.layout.totalPlots || this.removed.has(g)) return undefined;
    const owner = ownerOf(this.layout, g);
    const plot = generatePlot(
      this.seed,
      g,
      owner,
      this.ownPlotCount,
      this.layout.totalPlots,
      this.layout,
      g === this.hugePlot ? this.hugePlotVertices : this.vertices,
    );
    const patch = this.patches.get(g);
    if (patch) Object.assign(plot, patch);
    const extra = this.extraAnalyses.get(g);
    if (extra) {
      // A new analysis of a type replaces the generated one of that type as "most recent".
      plot.analyses = [...plot.analyses, ...extra];
      if (!patch || !('riskLevel' in patch)) delete plot.riskLevel;
    }
    return plot;
  }

  indexOf(id: string): number | undefined {
    const g = plotIndexOf(this.seed, id);
    return g !== undefined && g < this.layout.totalPlots && !this.removed.has(g) ? g : undefined;
  }

  edit(id: string, patch: PlotPatch): PlotState | undefined {
    const g = this.indexOf(id);
    if (g === undefined) return undefined;
    const merged = { ...this.patches.get(g), ...patch, updatedAt: new Date().toISOString() };
    if (patch.geometry?.type === 'Polygon' && patch.surfaceArea === undefined) {
      merged.surfaceArea = Math.round(ringAreaM2(patch.geometry.coordinates[0] ?? []) * 100) / 100;
    }
    this.patches.set(g, merged);
    return this.get(g);
  }

  addAnalysis(id: string, analysis: Analysis): PlotState | undefined {
    const g = this.indexOf(id);
    if (g === undefined) return undefined;
    this.extraAnalyses.set(g, [...(this.extraAnalyses.get(g) ?? []), analysis]);
    const patch = this.patches.get(g) ?? { updatedAt: analysis.updatedAt };
    patch.updatedAt = analysis.updatedAt;
    this.patches.set(g, patch);
    return this.get(g);
  }

  remove(id: string): boolean {
    const g = this.indexOf(id);
    if (g === undefined) return false;
    this.removed.add(g);
    return true;
  }

  /** Brings a removed plot back at its place: an insertion in front of every plot after it. */
  restore(id: string): boolean {
    const g = plotIndexOf(this.seed, id);
    return g !== undefined && this.removed.delete(g);
  }

  /** Removed plots among global indices [start, start+count). */
  removedIn(start: number, count: number): number {
    let n = 0;
    for (const g of this.removed) if (g >= start && g < start + count) n++;
    return n;
  }

  reset(): void {
    this.patches.clear();
    this.extraAnalyses.clear();
    this.removed.clear();
  }

  /** Sorted positions of removed plots within a supplier's list. */
  private removedPositions(reach: SupplierReach): number[] {
    const positions: number[] = [];
    for (const g of this.removed) {
      const i = reach.businesses.indexOf(ownerOf(this.layout, g).index);
      const node = this.layout.businesses[reach.businesses[i] ?? -1];
      if (i >= 0 && node) positions.push((reach.prefix[i] ?? 0) + g - node.plotStart);
    }
    return positions.sort((a, b) => a - b);
  }

  liveCount(reach: SupplierReach): number {
    return (reach.prefix[reach.businesses.length] ?? 0) - this.removedPositions(reach).length;
  }

  /** Plots [offset, offset+limit) of a supplier's list, skipping removed ones, in O(limit). */
  page(reach: SupplierReach, offset: number, limit: number): PlotState[] {
    const removed = this.removedPositions(reach);
    const total = reach.prefix[reach.businesses.length] ?? 0;
    // Translate the live offset to a raw position by stepping over removed positions before it.
    let raw = offset;
    let r = 0;
    while (r < removed.length && (removed[r] ?? Infinity) <= raw) {
      raw++;
      r++;
    }
    const out: PlotState[] = [];
    for (; raw < total && out.length < limit; raw++) {
      if (removed[r] === raw) {
        r++;
        continue;
      }
      const g = globalIndexAt(this.layout, reach, raw);
      const plot = g === undefined ? undefined : this.get(g);
      if (plot) out.push(plot);
    }
    return out;
  }

  /** Every live plot of a supplier's list, in list order (for filtered queries). */
  *scan(reach: SupplierReach): Generator<PlotState> {
    for (const b of reach.businesses) {
      const node = this.layout.businesses[b];
      if (!node) continue;
      for (let g = node.plotStart; g < node.plotStart + node.plotCount; g++) {
        const plot = this.get(g);
        if (plot) yield plot;
      }
    }
  }

  /** Every live plot of one business (own plots use business 0). */
  *ofBusiness(index: number): Generator<PlotState> {
    const node = this.layout.businesses[index];
    if (!node) return;
    for (let g = node.plotStart; g < node.plotStart + node.plotCount; g++) {
      const plot = this.get(g);
      if (plot) yield plot;
    }
  }
}
