// Generates one plot from (seed, global index): the same plot every time, with no storage.
import {
  ANALYSIS_STATUSES,
  PENDING_ANALYSIS_STATUSES,
  PLACE_WORDS,
  PLOT_NAME_WORDS,
  PRODUCING_COUNTRIES,
  RISK_ASSESSMENT_STATUSES,
  RISK_LEVELS,
  SPECIES_BY_COMMODITY,
} from './catalog.ts';
import {
  bowTie,
  cornerDoubledBelow6Decimals,
  ringAreaM2,
  rounded,
  shrinkShape,
  starShape,
  swapped,
  toPoint,
  toPolygon,
  unclosed,
  withHole,
  type OffContractGeometry,
  type PointGeometry,
  type PolygonGeometry,
} from './geometry.ts';
import { ownerOf, type BusinessNode, type Layout } from './layout.ts';
import { Rand, hash, uuidFor } from './rng.ts';

export interface Analysis {
  id: string;
  createdAt: string;
  updatedAt: string;
  status: string;
  plotId: string;
  analysedAt: string;
  version: string;
  deforestedArea: number;
  deforestedGeometry: PolygonGeometry | Record<string, never>;
  riskOfDeforestation: number;
  type: string;
  customData: Record<string, unknown>;
  name: string;
}

/** Internal plot state: generated, then overlaid with mutations, then projected to the wire. */
export interface PlotState {
  g: number;
  id: string;
  ownerIndex: number;
  createdAt: string;
  updatedAt: string;
  /** A Polygon as the contract shows; the pointOver4ha odd record is a Point (see ODD_KINDS). */
  geometry: PolygonGeometry | PointGeometry | OffContractGeometry;
  commodities: string[];
  name: string;
  surfaceArea: number;
  countryCode: string;
  analyses: Analysis[];
  riskAssessmentStatus: string;
  /** Explicit risk level; undefined = derived from the analyses (null while pending). */
  riskLevel?: string | null;
  species: Array<{ scientificName: string; commonName: string }>;
  productionDateStart: string | Record<string, never>;
  productionDateEnd: string | Record<string, never>;
  filename: string | Record<string, never>;
  description: string;
  customData: Record<string, unknown>;
}

/**
 * Deliberately odd records, placed on the first non-own plots (global order) so tests find them.
 * From pointOver4ha on, each is what an EUDR readiness check was made for (docs/simulator.md):
 * a plot of more than 4 ha given as a point (beyond the contract's Polygon: the EU system accepts
 * points, so a service may send one), a ring without its closing position, coordinates rounded to
 * 4 decimals, a surface area three times the polygon's, production starting before the cut-off
 * date, an analysis reporting deforestation, no country, and a copy of another supplier's plot.
 * The last four are what the EU information system itself refuses or reads differently (the GeoJSON
 * File Description): a polygon with a hole, a point whose area is 0 (below the EU's 0.0001 ha), a
 * polygon written latitude first, and a corner drawn twice within one 6-decimal step (the same
 * position once the EU cuts coordinates to 6 decimals). All stay within the contract: a Polygon (the
 * point as pointOver4ha), a number for surfaceArea.
 */
export const ODD_KINDS = [
  'bowTie',
  'emptyObjects',
  'unicodeName',
  'noAnalyses',
  'pendingAnalysis',
  'pointOver4ha',
  'unclosedRing',
  'lowPrecision',
  'areaMismatch',
  'beforeCutoff',
  'deforested',
  'noCountry',
  'sameLand',
  'withHole',
  'pointZeroArea',
  'swappedLonLat',
  'doubledCorner',
] as const;
export type OddKind = (typeof ODD_KINDS)[number];

const EPOCH = Date.UTC(2023, 0, 1);
const DAY = 86_400_000;

/** Plot ids embed the global index in their last 12 hex digits, so an id maps back to its plot. */
export function plotIdFor(seed: number, g: number): string {
  const prefix = uuidFor(seed, 'plot', g).slice(0, 24);
  const tail = (g + (hash(seed, 'plot-offset') % 0x1000000)).toString(16).padStart(12, '0');
  return prefix + tail;
}

/**
 * A plot's analysis of one type: its plot's index and the type in its last 12 hex digits, so no two
 * analyses share an id (a random UUID never repeats at the service; a hash of 32 bits gave 224 of a
 * million plots' two million analyses an id twice).
 */
export function analysisIdFor(seed: number, g: number, type: string): string {
  const prefix = uuidFor(seed, 'analysis', g, type).slice(0, 24);
  const kind = ANALYSIS_TYPES.indexOf(type);
  if (kind < 0) throw new Error(`no analysis type ${type}`);
  return prefix + (g * ANALYSIS_TYPES.length + kind).toString(16).padStart(12, '0');
}
const ANALYSIS_TYPES = ['EUFOROBS', 'PRECISION'];

export function plotIndexOf(seed: number, id: string): number | undefined {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(id)) return undefined;
  const g = parseInt(id.slice(24), 16) - (hash(seed, 'plot-offset') % 0x1000000);
  return g >= 0 && plotIdFor(seed, g) === id ? g : undefined;
}

function isoDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

function round2(value: number): number {
  return Math.round(value * 100) / 100;
}

export function oddKindOf(g: number, ownPlots: number, totalPlots: number): OddKind | undefined {
  const k = g - ownPlots;
  return k >= 0 && g < totalPlots ? ODD_KINDS[k] : undefined;
}

function makeAnalysis(
  seed: number,
  g: number,
  plotId: string,
  type: string,
  createdMs: number,
  rand: Rand,
  shape: ReturnType<typeof starShape>,
  lon: number,
  lat: number,
  areaM2: number,
  status: string,
  deforested?: number,
): Analysis {
  const analysedMs = createdMs + rand.int(1, 200) * DAY + rand.int(0, 86_399) * 1000;
  const deforestedShare = deforested ?? (status === 'succeeded' && rand.chance(0.25) ? rand.next() * 0.3 : 0);
  const at = new Date(analysedMs).toISOString();
  return {
    id: analysisIdFor(seed, g, type),
    createdAt: at,
    updatedAt: at,
    status,
    plotId,
    analysedAt: at,
    version: type === 'PRECISION' ? '3.1.0' : '2.4.2',
    deforestedArea: round2(areaM2 * deforestedShare),
    deforestedGeometry: deforestedShare > 0 ? toPolygon(shrinkShape(shape, deforestedShare), lon, lat) : {},
    riskOfDeforestation:
      status === 'succeeded' ? Math.round(Math.min(1, deforestedShare * 2 + rand.next() * 0.2) * 1000) / 1000 : 0,
    type,
    customData: {},
    name: `${type === 'PRECISION' ? 'Precision' : 'EU forest observatory'} analysis`,
  };
}

export function generatePlot(
  seed: number,
  g: number,
  owner: BusinessNode,
  ownPlots: number,
  totalPlots: number,
  /** Needed for the sameLand odd record only (it copies a plot of another supplier). */
  layout?: Layout,
  /** Vertices of the outer ring (default: 5 to 9 at random). */
  vertices?: number,
): PlotState {
  const rand = new Rand(seed, 'plot', g);
  const odd = oddKindOf(g, ownPlots, totalPlots);
  const id = plotIdFor(seed, g);
  const home = PRODUCING_COUNTRIES.find((c) => c.code === owner.countryCode) ?? PRODUCING_COUNTRIES[0]!;
  // Written latitude first, a position is still a valid one only where |longitude| <= 90: the
  // swappedLonLat record is placed in the first such country when its owner's lies farther east.
  const country =
    odd === 'swappedLonLat' && Math.max(Math.abs(home.box[0]), Math.abs(home.box[1])) > 90
      ? (PRODUCING_COUNTRIES.find((c) => Math.max(Math.abs(c.box[0]), Math.abs(c.box[1])) <= 90) ?? home)
      : home;
  const [minLon, maxLon, minLat, maxLat] = country.box;
  const lon = minLon + rand.next() * (maxLon - minLon);
  const lat = minLat + rand.next() * (maxLat - minLat);
  // Log-uniform 0.5–500 ha: many small farms, a few large estates.
  const areaM2 = Math.exp(Math.log(5_000) + rand.next() * Math.log(1000));
  const shape = starShape(rand, areaM2, vertices);
  // The first plot of each business carries all its commodities, so the connection's union is exact.
  const commodities = g === owner.plotStart ? [...owner.commodities] : [rand.pick(owner.commodities)];
  const createdMs = EPOCH + (hash(seed, 'plot-created', g) % 400) * DAY + rand.int(0, 86_399) * 1000;
  const statusRoll = rand.next();
  const euStatus =
    odd === 'pendingAnalysis'
      ? 'PENDING'
      : odd === 'deforested' || statusRoll < 0.8
        ? 'succeeded'
        : (ANALYSIS_STATUSES[Math.floor(rand.next() * 4)] ?? 'PENDING');
  const analyses: Analysis[] = [];
  if (odd !== 'noAnalyses') {
    const deforested = odd === 'deforested' ? 0.12 : undefined;
    analyses.push(
      makeAnalysis(seed, g, id, 'EUFOROBS', createdMs, rand, shape, lon, lat, areaM2, euStatus, deforested),
    );
    // The deforested record's EUFOROBS analysis stays its most recent one.
    if (rand.chance(0.3) && odd !== 'deforested')
      analyses.push(
        makeAnalysis(
          seed,
          g,
          id,
          'PRECISION',
          createdMs + 30 * DAY,
          rand,
          shape,
          lon,
          lat,
          areaM2,
          rand.chance(0.85) ? 'succeeded' : 'started',
        ),
      );
  }
  const hasDates = odd !== 'emptyObjects' && rand.chance(0.7);
  const startMs = EPOCH - rand.int(30, 700) * DAY;
  const updatedMs = createdMs + rand.int(0, 60) * DAY;
  const speciesList = SPECIES_BY_COMMODITY[commodities[0] ?? ''] ?? [];
  const land = oddLand(odd, shape, lon, lat, areaM2, commodities, owner);
  const twin = odd === 'sameLand' && layout ? sameLandTwin(seed, g, layout, ownPlots, totalPlots, vertices) : undefined;
  const beforeCutoff = odd === 'beforeCutoff';
  return {
    g,
    id,
    ownerIndex: owner.index,
    createdAt: new Date(createdMs).toISOString(),
    updatedAt: new Date(Math.max(updatedMs, ...analyses.map((a) => Date.parse(a.analysedAt)))).toISOString(),
    geometry: twin?.geometry ?? land.geometry,
    commodities: land.commodities,
    name:
      odd === 'unicodeName'
        ? 'Café São João — 農園 🌱'
        : `${rand.pick(PLOT_NAME_WORDS)} ${rand.pick(PLACE_WORDS)} ${g}`,
    surfaceArea: twin?.surfaceArea ?? land.surfaceArea,
    countryCode: odd === 'noCountry' ? '' : (twin?.countryCode ?? country.code),
    analyses,
    riskAssessmentStatus: RISK_ASSESSMENT_STATUSES[Math.min(4, Math.floor(rand.next() ** 1.6 * 5))] ?? 'NEW',
    species: odd === 'emptyObjects' ? [] : speciesList.length > 0 ? [rand.pick(speciesList)] : [],
    productionDateStart: beforeCutoff ? '2019-04-01' : hasDates ? isoDay(startMs) : {},
    productionDateEnd: beforeCutoff ? '2019-10-31' : hasDates ? isoDay(startMs + rand.int(30, 365) * DAY) : {},
    filename:
      odd !== 'emptyObjects' && rand.chance(0.5) ? `upload-${hash(seed, 'file', owner.index) % 10_000}.geojson` : {},
    description: odd === 'emptyObjects' ? '' : `${commodities.join(', ')} plot near ${country.city}`,
    customData: odd === 'emptyObjects' ? {} : { farmCode: `F-${owner.index}-${g - owner.plotStart}` },
  };
}

/** The geometry, commodities and reported area of a plot, as its odd kind (if any) makes them. */
function oddLand(
  odd: OddKind | undefined,
  shape: ReturnType<typeof starShape>,
  lon: number,
  lat: number,
  areaM2: number,
  commodities: string[],
  owner: BusinessNode,
): Pick<PlotState, 'geometry' | 'commodities' | 'surfaceArea'> {
  switch (odd) {
    case 'bowTie':
      return { geometry: bowTie(lon, lat, areaM2), commodities, surfaceArea: round2(areaM2) };
    case 'pointOver4ha': {
      // Cattle may be a point whatever its size (Art. 2(28)): this one grows another commodity if its owner does.
      const crop = owner.commodities.find((c) => c !== 'cattle');
      return {
        geometry: toPoint(lon, lat),
        commodities: crop && commodities.every((c) => c === 'cattle') ? [crop] : commodities,
        surfaceArea: round2(Math.max(areaM2, 120_000)),
      };
    }
    case 'unclosedRing':
      return { geometry: unclosed(toPolygon(shape, lon, lat)), commodities, surfaceArea: round2(areaM2) };
    case 'lowPrecision': {
      // At least 20 ha, so rounding to 4 decimals (about 11 m) moves no corner across another.
      const grown = Math.max(areaM2, 200_000);
      const geometry = rounded(toPolygon(shrinkShape(shape, grown / areaM2), lon, lat), 4);
      return { geometry, commodities, surfaceArea: round2(ringAreaM2(geometry.coordinates[0] ?? [])) };
    }
    case 'areaMismatch':
      return { geometry: toPolygon(shape, lon, lat), commodities, surfaceArea: round2(areaM2 * 3) };
    case 'withHole':
      // A fifth of the land left out (a pond, a village): the reported area is the land around it.
      return { geometry: withHole(shape, 0.2, lon, lat), commodities, surfaceArea: round2(areaM2 * 0.8) };
    case 'pointZeroArea': {
      const crop = owner.commodities.find((c) => c !== 'cattle');
      return {
        geometry: toPoint(lon, lat),
        commodities: crop && commodities.every((c) => c === 'cattle') ? [crop] : commodities,
        surfaceArea: 0,
      };
    }
    case 'swappedLonLat':
      return { geometry: swapped(toPolygon(shape, lon, lat)), commodities, surfaceArea: round2(areaM2) };
    case 'doubledCorner':
      return {
        geometry: cornerDoubledBelow6Decimals(toPolygon(shape, lon, lat)),
        commodities,
        surfaceArea: round2(areaM2),
      };
    default:
      return { geometry: toPolygon(shape, lon, lat), commodities, surfaceArea: round2(areaM2) };
  }
}

/**
 * The land the sameLand odd record claims: the first plot of a business reached through other
 * direct suppliers than its own, copied (geometry, reported area, country), so the same land is
 * claimed by two suppliers. Undefined when the layout has no such business.
 */
function sameLandTwin(
  seed: number,
  g: number,
  layout: Layout,
  ownPlots: number,
  totalPlots: number,
  vertices?: number,
): PlotState | undefined {
  const mine = new Set(layout.reachedBy[ownerOf(layout, g).index] ?? []);
  const other = layout.businesses.find(
    (b) =>
      b.plotCount > 0 &&
      (layout.reachedBy[b.index]?.length ?? 0) > 0 &&
      !(layout.reachedBy[b.index] ?? []).some((s) => mine.has(s)),
  );
  if (!other || oddKindOf(other.plotStart, ownPlots, totalPlots)) return undefined;
  return generatePlot(seed, other.plotStart, other, ownPlots, totalPlots, undefined, vertices);
}

/** Risk level follows the most recent analysis unless set explicitly; null while it is pending. */
export function derivedRiskLevel(seed: number, plot: PlotState, latest: Analysis | undefined): string | null {
  if (plot.riskLevel !== undefined) return plot.riskLevel;
  if (!latest || PENDING_ANALYSIS_STATUSES.has(latest.status)) return null;
  if (latest.status === 'failed') return 'none';
  if (latest.riskOfDeforestation > 0.3) return 'high';
  if (latest.riskOfDeforestation > 0.1) return 'medium';
  return RISK_LEVELS[2 + (hash(seed, 'risk', plot.g) % 2)] ?? 'low';
}
