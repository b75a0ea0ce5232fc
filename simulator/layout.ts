// The shape of the seeded supply chain: which businesses exist, who supplies whom, and which
// contiguous range of global plot indices each business owns. Everything else is derived.
import { PRODUCING_COUNTRIES, COMPANY_WORDS, COMPANY_SUFFIXES } from './catalog.ts';
import { Rand, hash, uuidFor } from './rng.ts';

/**
 * Explicit layout for tests. `suppliers[i].plots` is the supplier's own plot count;
 * `upstream` lists own plot counts of upstream businesses private to it; `shared` upstream
 * businesses are reachable through every listed supplier index (the same plots through several suppliers).
 */
export interface LayoutSpec {
  ownPlots?: number;
  suppliers: Array<{ plots: number; upstream?: number[] }>;
  shared?: Array<{ plots: number; suppliers: number[] }>;
}

export type BusinessRole = 'caller' | 'supplier' | 'upstream' | 'buyer' | 'prospect';

export interface BusinessNode {
  index: number;
  id: string;
  role: BusinessRole;
  name: string;
  countryCode: string;
  commodities: string[];
  plotStart: number;
  plotCount: number;
}

/** Businesses whose plots a supplier's plot list covers, with prefix counts for O(1) paging. */
export interface SupplierReach {
  businesses: number[];
  /** prefix[i] = plots in businesses[0..i); prefix[businesses.length] = total. */
  prefix: number[];
}

export interface Layout {
  businesses: BusinessNode[];
  supplierIndices: number[];
  buyerIndices: number[];
  prospectIndex: number;
  reach: Map<number, SupplierReach>;
  /** For each business index: the direct suppliers (business indices) through which its plots are reachable. */
  reachedBy: number[][];
  totalPlots: number;
  /** Sorted plot starts of plot-holding businesses, for owner look-up by global index. */
  ownerStarts: number[];
  ownerIndexAt: number[];
}

/** Spreads `plots` over suppliers and their upstream businesses, with some shared upstream. */
export function defaultLayoutSpec(seed: number, suppliers: number, plots: number, ownPlots?: number): LayoutSpec {
  const own = Math.min(plots, ownPlots ?? Math.min(1000, Math.max(1, Math.round(plots / 100))));
  const rand = new Rand(seed, 'layout');
  const upstreamCounts = Array.from({ length: suppliers }, () => rand.int(0, 2));
  const sharedCount = suppliers >= 2 ? Math.ceil(suppliers / 2) : 0;
  const weights: number[] = [];
  for (let s = 0; s < suppliers; s++) {
    weights.push(0.5 + rand.next());
    for (let u = 0; u < (upstreamCounts[s] ?? 0); u++) weights.push(0.5 + rand.next());
  }
  for (let k = 0; k < sharedCount; k++) weights.push(0.5 + rand.next());
  const remaining = plots - own;
  const totalWeight = weights.reduce((a, b) => a + b, 0);
  const counts = weights.map((w) => Math.floor((remaining * w) / totalWeight));
  counts[0] = (counts[0] ?? 0) + remaining - counts.reduce((a, b) => a + b, 0);
  let next = 0;
  const take = (): number => counts[next++] ?? 0;
  const spec: LayoutSpec = { ownPlots: own, suppliers: [], shared: [] };
  for (let s = 0; s < suppliers; s++) {
    const supplierPlots = take();
    spec.suppliers.push({ plots: supplierPlots, upstream: Array.from({ length: upstreamCounts[s] ?? 0 }, take) });
  }
  for (let k = 0; k < sharedCount; k++) {
    const reachedBy = [k % suppliers, (k + 1) % suppliers];
    if (suppliers >= 3 && rand.chance(0.5)) reachedBy.push((k + 2) % suppliers);
    spec.shared?.push({ plots: take(), suppliers: [...new Set(reachedBy)] });
  }
  return spec;
}

function companyName(rand: Rand, countryName: string): string {
  return `${rand.pick(COMPANY_WORDS)}${rand.pick(COMPANY_WORDS).toLowerCase()} ${countryName.split(' ')[0]} ${rand.pick(COMPANY_SUFFIXES)}`;
}

export function buildLayout(seed: number, spec: LayoutSpec): Layout {
  const businesses: BusinessNode[] = [];
  let plotCursor = 0;
  const add = (role: BusinessRole, plotCount: number, name?: string): number => {
    const index = businesses.length;
    const rand = new Rand(seed, 'business', index);
    const country =
      PRODUCING_COUNTRIES[hash(seed, 'country', index) % PRODUCING_COUNTRIES.length] ?? PRODUCING_COUNTRIES[0]!;
    const commodities = [rand.pick(country.commodities)];
    const second = rand.pick(country.commodities);
    if (second !== commodities[0] && rand.chance(0.5)) commodities.push(second);
    businesses.push({
      index,
      id: uuidFor(seed, 'business', index),
      role,
      name: name ?? companyName(rand, country.name),
      countryCode: country.code,
      commodities,
      plotStart: plotCursor,
      plotCount,
    });
    plotCursor += plotCount;
    return index;
  };
  add('caller', spec.ownPlots ?? 0, 'Demo Importer GmbH');
  const supplierIndices = spec.suppliers.map((s) => add('supplier', s.plots));
  const reachSets = supplierIndices.map((s) => [s]);
  spec.suppliers.forEach((s, i) => {
    for (const count of s.upstream ?? []) reachSets[i]?.push(add('upstream', count));
  });
  for (const shared of spec.shared ?? []) {
    const index = add('upstream', shared.plots);
    for (const s of shared.suppliers) {
      if (s < 0 || s >= supplierIndices.length)
        throw new Error(`layout: shared upstream refers to supplier ${s}, which does not exist`);
      reachSets[s]?.push(index);
    }
  }
  const buyerIndices = [add('buyer', 0), add('buyer', 0)];
  const prospectIndex = add('prospect', 0);

  const reach = new Map<number, SupplierReach>();
  const reachedBy: number[][] = businesses.map(() => []);
  supplierIndices.forEach((supplier, i) => {
    const list = [...new Set(reachSets[i] ?? [])].sort((a, b) => a - b);
    const prefix = [0];
    for (const b of list) {
      prefix.push((prefix[prefix.length - 1] ?? 0) + (businesses[b]?.plotCount ?? 0));
      reachedBy[b]?.push(supplier);
    }
    reach.set(supplier, { businesses: list, prefix });
  });
  const holders = businesses.filter((b) => b.plotCount > 0);
  return {
    businesses,
    supplierIndices,
    buyerIndices,
    prospectIndex,
    reach,
    reachedBy,
    totalPlots: plotCursor,
    ownerStarts: holders.map((b) => b.plotStart),
    ownerIndexAt: holders.map((b) => b.index),
  };
}

/** The business owning global plot index `g` (binary search over plot starts). */
export function ownerOf(layout: Layout, g: number): BusinessNode {
  let lo = 0;
  let hi = layout.ownerStarts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((layout.ownerStarts[mid] ?? 0) <= g) lo = mid;
    else hi = mid - 1;
  }
  const node = layout.businesses[layout.ownerIndexAt[lo] ?? 0];
  if (!node || g < node.plotStart || g >= node.plotStart + node.plotCount) throw new Error(`no plot with index ${g}`);
  return node;
}

/** Global plot index at position `offset` of a supplier's plot list (O(log businesses)). */
export function globalIndexAt(layout: Layout, reach: SupplierReach, offset: number): number | undefined {
  for (let i = 0; i < reach.businesses.length; i++) {
    const end = reach.prefix[i + 1] ?? 0;
    if (offset < end) {
      const node = layout.businesses[reach.businesses[i] ?? 0];
      return node ? node.plotStart + offset - (reach.prefix[i] ?? 0) : undefined;
    }
  }
  return undefined;
}
