import type { RawPlotPage } from '../../../upstream/paging.ts';
/** Plots as the service sends them (contract quirks included): ~2 KB each, 40-vertex polygon. */

export function samplePlot(i: number, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const ring: number[][] = [];
  for (let k = 0; k < 40; k++) ring.push([10 + Math.cos(k / 6) * 0.01 + i * 1e-4, 5 + Math.sin(k / 6) * 0.01]);
  ring.push([...ring[0]!]);
  const analysis = {
    id: `a-${i}`,
    createdAt: '2024-01-01T00:00:00.000Z',
    updatedAt: '2024-01-01T00:00:00.000Z',
    status: 'succeeded',
    plotId: `p-${i}`,
    analysedAt: '2024-01-02T00:00:00.000Z',
    version: '1.2',
    deforestedArea: 0,
    deforestedGeometry: {},
    riskOfDeforestation: 0.1,
    type: 'EUFOROBS',
  };
  return {
    id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    createdAt: '2024-01-01T00:00:00.000Z',
    updatedAt: '2024-01-01T00:00:00.000Z',
    suppliers: [
      {
        id: `s-${i % 7}`,
        name: `Cocoa Coop ${i % 7}`,
        addressCountryCode: 'CI',
        newlyCreated: 'false',
        contactPerson: {},
      },
    ],
    geometry: { type: 'Polygon', coordinates: [ring] },
    commodities: ['cocoa'],
    name: `Plot ${i}`,
    surfaceArea: 12_345.6,
    countryCode: 'CI',
    mostRecentAnalysis: analysis,
    mostRecentAnalysesByType: { EUFOROBS: { ...analysis } },
    riskAssessmentStatus: 'NEW',
    riskLevel: 'none',
    species: [{ scientificName: 'Theobroma cacao', commonName: 'cocoa' }],
    productionDateStart: {},
    productionDateEnd: '2024-06-01',
    filename: {},
    description: 'a plot',
    ownerId: 'o-1',
    customData: { k: 'v' },
    ...overrides,
  };
}

export function samplePage(n: number, from = 0): Record<string, unknown>[] {
  return Array.from({ length: n }, (_, i) => samplePlot(from + i));
}

/** A page as the client holds it in memory before parsing (never kept on disk, no hash). */
export function inMemoryPage(text: string, page = 1): RawPlotPage {
  const bytes = new TextEncoder().encode(text);
  return {
    page,
    limit: 500,
    byteLength: bytes.length,
    hash: undefined,
    spilled: undefined,
    bytes,
    text,
    release: () => {},
  };
}
