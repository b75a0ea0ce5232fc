// The cut the readiness checks make (the EU truncates), so a file carries exactly what was checked.
import { truncate6 } from './six-decimals.ts';

/**
 * Plots → the GeoJSON the EU information system reads for a due-diligence statement. Pure: no I/O.
 *
 * What the EU's "GeoJSON File Description" v1.3 (as reproduced in the Operator API Reference v1.0,
 * §9, 29 May 2026) asks, and what this writer does about it:
 * - a FeatureCollection of Features in WGS84, longitude first (§9.1, §9.2);
 * - only the properties ProducerName, ProducerCountry, ProductionPlace and Area (hectares, a number)
 *   are read; others are ignored (§9.2): nothing else is written;
 * - coordinates are cut to 6 decimals by the system before it stores them (§9.3 note 1, §10.3
 *   "truncate"): the writer truncates (toward zero) itself, so what is checked here is what the EU
 *   stores; a vertex that becomes equal to the one before it is dropped (§9.5 item 7: duplicate
 *   coordinates after the cut are a common error), and a ring left with fewer than 4 positions is
 *   not written (the plot is named as skipped);
 * - holes are not supported, only outer boundaries count (§9.2, §9.5 item 15): the outer ring of
 *   each polygon is written and its holes are left out (the EU would count the area with them filled);
 * - LineString, MultiLineString and other types are refused (§9.2): such a plot is skipped, named;
 * - a Point without Area counts as 4 ha (§9.3 note 2): Area is written when the plot's area is known
 *   and left out otherwise, so the EU's own default applies rather than a figure of ours; a point whose
 *   known area is below 0.0001 ha, which the EU refuses (§10.3), is not written (named as skipped).
 */

export interface ExportPlot {
  id: string;
  /** The plot's name: ProductionPlace (its id when it has none). */
  name: string | null;
  countryCode: string | null;
  /** The business that produces on the plot (its owner): ProducerName. */
  producerName: string | null;
  geometry: unknown;
  /** Hectares: the polygon's area, or for a point the area the service reports; null when unknown. */
  areaHa: number | null;
}

export const EU_PROPERTIES = ['ProducerName', 'ProducerCountry', 'ProductionPlace', 'Area'] as const;

type Position = [number, number];
type Geometry =
  | { type: 'Point'; coordinates: Position }
  | { type: 'Polygon'; coordinates: Position[][] }
  | { type: 'MultiPolygon'; coordinates: Position[][][] };

export interface Feature {
  type: 'Feature';
  properties: Record<string, string | number>;
  geometry: Geometry;
}

export type FeatureResult = { ok: true; feature: Feature } | { ok: false; plotId: string; reason: string };

const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

function position(p: unknown): Position | null {
  if (!Array.isArray(p) || p.length < 2 || !isNumber(p[0]) || !isNumber(p[1])) return null;
  return [truncate6(p[0]), truncate6(p[1])];
}

/** The outer ring, cut, without vertices equal to the one before; null when it no longer encloses anything. */
function outerRing(rings: unknown): Position[] | null {
  if (!Array.isArray(rings) || rings.length === 0 || !Array.isArray(rings[0])) return null;
  const ring: Position[] = [];
  for (const raw of rings[0] as unknown[]) {
    const p = position(raw);
    if (!p) return null;
    const last = ring[ring.length - 1];
    if (!last || last[0] !== p[0] || last[1] !== p[1]) ring.push(p);
  }
  const first = ring[0];
  const last = ring[ring.length - 1];
  if (!first || !last || first[0] !== last[0] || first[1] !== last[1]) return null;
  return ring.length >= 4 ? ring : null;
}

/** The geometry as the EU reads it, or why it cannot be written. */
export function euGeometry(geometry: unknown): { ok: true; geometry: Geometry } | { ok: false; reason: string } {
  const g = geometry as { type?: unknown; coordinates?: unknown } | null;
  if (!g || typeof g !== 'object') return { ok: false, reason: 'no geometry' };
  if (g.type === 'Point') {
    const p = position(g.coordinates);
    return p
      ? { ok: true, geometry: { type: 'Point', coordinates: p } }
      : { ok: false, reason: 'a point without a position' };
  }
  if (g.type === 'Polygon') {
    const ring = outerRing(g.coordinates);
    return ring
      ? { ok: true, geometry: { type: 'Polygon', coordinates: [ring] } }
      : { ok: false, reason: 'a polygon whose outer ring is not a closed ring of 4 positions once cut to 6 decimals' };
  }
  if (g.type === 'MultiPolygon' && Array.isArray(g.coordinates)) {
    const polygons: Position[][][] = [];
    for (const rings of g.coordinates as unknown[]) {
      const ring = outerRing(rings);
      if (!ring)
        return {
          ok: false,
          reason:
            'a multipolygon with a part whose outer ring is not a closed ring of 4 positions once cut to 6 decimals',
        };
      polygons.push([ring]);
    }
    if (polygons.length > 0) return { ok: true, geometry: { type: 'MultiPolygon', coordinates: polygons } };
  }
  if (g.type === 'MultiPoint' || g.type === 'GeometryCollection')
    return { ok: false, reason: `a ${g.type}, which the EU accepts but ddsync does not check, so does not write` };
  return { ok: false, reason: `a geometry of type ${JSON.stringify(String(g.type))}, which the EU does not accept` };
}

/** 0.0001 ha (1 m²): the smallest Area the EU information system takes for a point (§10.3). */
export const MIN_POINT_AREA_HA = 0.0001;

/** One plot as a Feature with the EU's four properties (Area only when known), or why it cannot be one. */
export function plotFeature(plot: ExportPlot): FeatureResult {
  const geometry = euGeometry(plot.geometry);
  if (!geometry.ok) return { ok: false, plotId: plot.id, reason: geometry.reason };
  // The EU refuses a point's Area below 0.0001 ha (§10.3), and the whole statement with it; leaving
  // Area out would claim its default of 4 ha instead: such a point is not written, named.
  if (geometry.geometry.type === 'Point' && plot.areaHa !== null && plot.areaHa < MIN_POINT_AREA_HA)
    return {
      ok: false,
      plotId: plot.id,
      reason: `a point reporting an area of ${plot.areaHa} ha, below the 0.0001 ha the EU takes for a point`,
    };
  // All four are optional to the EU (§9.2): one not known is left out, never written empty; a
  // country that is not an ISO alpha-2 code would be refused, so it is left out too (its finding says so).
  const properties: Record<string, string | number> = {};
  const producer = plot.producerName?.trim();
  if (producer) properties['ProducerName'] = producer;
  const country = plot.countryCode?.trim().toUpperCase();
  if (country && /^[A-Z]{2}$/.test(country)) properties['ProducerCountry'] = country;
  properties['ProductionPlace'] = plot.name?.trim() || plot.id;
  // Hectares to 4 decimals: the EU's smallest point area is 0.0001 ha.
  if (plot.areaHa !== null && Number.isFinite(plot.areaHa)) properties['Area'] = Math.round(plot.areaHa * 1e4) / 1e4;
  return { ok: true, feature: { type: 'Feature', properties, geometry: geometry.geometry } };
}

const COLLECTION_HEAD = '{"type":"FeatureCollection","features":[';
const COLLECTION_TAIL = ']}';
const utf8Bytes = (text: string) => new TextEncoder().encode(text).length;

/** The bytes of a feature's compact JSON, as it stands in a collection. */
export const featureBytes = (feature: Feature): number => utf8Bytes(JSON.stringify(feature));

/** The bytes of a FeatureCollection of features of these sizes, written compactly. */
export const collectionBytes = (sizes: readonly number[]): number =>
  COLLECTION_HEAD.length +
  COLLECTION_TAIL.length +
  sizes.reduce((sum, n) => sum + n, 0) +
  Math.max(0, sizes.length - 1);

/**
 * How the EU limit is measured here: the statement carries the GeoJSON as base64 (`geometryGeojson`
 * is xs:base64Binary), and no source says whether the 25 MB counts the text or its base64; the base64
 * is a third larger, so counting it is the cautious reading. 25 MB = 25 × 10⁶ bytes.
 */
export const base64Bytes = (bytes: number): number => 4 * Math.ceil(bytes / 3);

export const EU_GEOLOCATION_LIMIT_BYTES = 25_000_000;

export interface GeoJsonFile {
  text: string;
  plotIds: string[];
  bytes: number;
  base64Bytes: number;
  /** A single plot whose feature alone passes the limit: written, and said so. */
  overLimit: boolean;
}

/**
 * Features (in order) packed into FeatureCollections whose base64 stays within `limitBytes`; a file
 * starts when the next feature would pass it. Each file names its plots.
 */
export function splitFeatures(
  features: ReadonlyArray<{ plotId: string; feature: Feature }>,
  limitBytes = EU_GEOLOCATION_LIMIT_BYTES,
): GeoJsonFile[] {
  const files: GeoJsonFile[] = [];
  let texts: string[] = [];
  let ids: string[] = [];
  // The bytes of the features so far; a collection adds its head, tail and a comma between two.
  let total = 0;
  const bytesWith = (extra: number, n: number) =>
    COLLECTION_HEAD.length + COLLECTION_TAIL.length + total + extra + Math.max(0, n - 1);
  const close = () => {
    if (texts.length === 0) return;
    const text = `${COLLECTION_HEAD}${texts.join(',')}${COLLECTION_TAIL}`;
    const bytes = bytesWith(0, texts.length);
    files.push({
      text,
      plotIds: ids,
      bytes,
      base64Bytes: base64Bytes(bytes),
      overLimit: base64Bytes(bytes) > limitBytes,
    });
    texts = [];
    ids = [];
    total = 0;
  };
  for (const { plotId, feature } of features) {
    const text = JSON.stringify(feature);
    const size = utf8Bytes(text);
    if (texts.length > 0 && base64Bytes(bytesWith(size, texts.length + 1)) > limitBytes) close();
    texts.push(text);
    ids.push(plotId);
    total += size;
  }
  close();
  return files;
}
