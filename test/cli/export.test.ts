import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { check } from '@placemarkio/check-geojson';
import { sql } from 'kysely';
import { startSimulator, type OddKind, type Simulator } from '../../simulator/index.ts';
import { openWarehouse, type Warehouse } from '../../warehouse/database.ts';
import { truncate6 } from '../../domain/eudr/six-decimals.ts';
import { takeInShipments } from '../../warehouse/submission/intake.ts';
import { createTestDatabase } from '../support/databases.ts';
import {
  ddsyncEnv,
  lastJsonLine,
  runDdsync,
  startWorkerProcess,
  stopProcess,
  type RunningCommand,
} from '../support/processes.ts';
import { scratchDir } from '../support/scratch.ts';
import { shipmentRow, writeShipments } from '../support/shipments.ts';

// `ddsync export geojson` end to end: a warehouse refreshed from the simulator by a real worker
// (`ddsync refresh --wait`), then the export as a child process, its files read back and checked
// against the warehouse (plot_suppliers) and against the simulator's odd records.

type Position = [number, number];
interface Written {
  files: Array<{ path: string; plots: string[]; bytes: number; base64Bytes: number; overLimit: boolean }>;
  skipped: Array<{ plotId: string; reason: string }>;
}
interface FeatureOut {
  type: 'Feature';
  properties: Record<string, unknown>;
  geometry:
    | { type: 'Point'; coordinates: Position }
    | { type: 'Polygon'; coordinates: Position[][] }
    | {
        type: 'MultiPolygon';
        coordinates: Position[][][];
      };
}
interface PlotRow {
  id: string;
  name: string | null;
  country_code: string | null;
  producer_name: string | null;
  geometry: { type: string; coordinates: unknown };
}

const EU_PROPERTIES = ['Area', 'ProducerCountry', 'ProducerName', 'ProductionPlace'];

/** Every number literal in a JSON text with more than 6 decimals (none may have). */
const overPrecise = (text: string) => text.match(/-?\d+\.\d{7,}/g) ?? [];

describe('ddsync export geojson', () => {
  let sim: Simulator;
  let env: NodeJS.ProcessEnv;
  let worker: RunningCommand;
  let db: Warehouse;
  let odd: Partial<Record<OddKind, string>>;

  beforeAll(async () => {
    sim = await startSimulator({ port: 0, suppliers: 3, plots: 240 });
    const databaseUrl = await createTestDatabase('cliexport');
    env = ddsyncEnv({ upstreamUrl: sim.url, databaseUrl, taskQueue: `cli-export-${randomUUID()}` });
    worker = await startWorkerProcess(env);
    const refresh = runDdsync(['refresh', '--wait', '--json'], env);
    const code = await refresh.exited;
    if (code !== 0) throw new Error(`ddsync refresh --wait exited ${code}:\n${refresh.output()}`);
    db = openWarehouse(databaseUrl, 2);
    odd = sim.control.oddRecords();
  }, 180_000);
  afterAll(async () => {
    await stopProcess(worker);
    await db?.destroy();
    await sim?.close();
  });

  /** The supplier's current plots as the warehouse holds them (plot_suppliers, not deleted). */
  async function currentPlots(supplierId: string): Promise<Map<string, PlotRow>> {
    const { rows } = await sql<PlotRow>`
      select p.id, p.name, p.country_code, coalesce(b.name, p.owner_id) as producer_name, p.geometry
      from plot_suppliers ps
      join plots p on p.id = ps.plot_id and p.deleted_at is null
      left join businesses b on b.id = p.owner_id
      where ps.supplier_id = ${supplierId} and ps.deleted_at is null`.execute(db);
    return new Map(rows.map((r) => [r.id, r]));
  }

  /**
   * Runs the export, reads back every file and checks what holds for any export: valid GeoJSON, the
   * EU's four properties only, at most 6 decimals, outer rings only, each plot in one file only,
   * the files listed being the files in the folder. Returns the features by plot id.
   */
  async function exportAndRead(
    args: string[],
  ): Promise<{ code: number | null; out: Written; features: Map<string, FeatureOut>; output: string }> {
    const dir = scratchDir('export');
    const run = runDdsync(['export', 'geojson', ...args, '--out', dir, '--json'], env);
    const code = await run.exited;
    const output = run.output();
    const out = lastJsonLine<Written>(output);
    expect(readdirSync(dir).sort(), output).toEqual(out.files.map((f) => f.path.slice(dir.length + 1)).sort());
    const features = new Map<string, FeatureOut>();
    for (const file of out.files) {
      expect(file.path.startsWith(`${dir}/`)).toBe(true);
      const text = readFileSync(file.path, 'utf8');
      expect(Buffer.byteLength(text)).toBe(file.bytes);
      // Throws on anything RFC 7946 refuses.
      const collection = check(text) as unknown as { type: string; features: FeatureOut[] };
      expect(collection.type).toBe('FeatureCollection');
      expect(overPrecise(text), file.path).toEqual([]);
      expect(collection.features).toHaveLength(file.plots.length);
      collection.features.forEach((f, i) => {
        const plotId = file.plots[i]!;
        expect(features.has(plotId), `plot ${plotId} written twice`).toBe(false);
        features.set(plotId, f);
        expect(Object.keys(f).sort()).toEqual(['geometry', 'properties', 'type']);
        const keys = Object.keys(f.properties);
        expect(
          keys.every((k) => EU_PROPERTIES.includes(k)),
          `${plotId}: ${keys.join(', ')}`,
        ).toBe(true);
        expect(keys).toContain('ProductionPlace');
        expect(Object.values(f.properties), `${plotId}: a property written empty`).not.toContain('');
        if ('Area' in f.properties) expect(typeof f.properties['Area']).toBe('number');
        const g = f.geometry;
        expect(['Point', 'Polygon', 'MultiPolygon']).toContain(g.type);
        if (g.type === 'Polygon') expect(g.coordinates, `${plotId} has a hole`).toHaveLength(1);
        if (g.type === 'MultiPolygon') for (const p of g.coordinates) expect(p, `${plotId} has a hole`).toHaveLength(1);
      });
    }
    for (const s of out.skipped) {
      expect(features.has(s.plotId), `${s.plotId} both written and skipped`).toBe(false);
      expect(s.reason.length).toBeGreaterThan(0);
    }
    return { code, out, features, output };
  }

  it('writes every current plot of each supplier exactly once, as the EU reads GeoJSON', async () => {
    const suppliers = sim.control.suppliers();
    expect(suppliers.length).toBe(3);
    let oddSeen = 0;
    for (const { id: supplierId } of suppliers) {
      const expected = await currentPlots(supplierId);
      expect(expected.size).toBeGreaterThan(0);
      const { code, out, features, output } = await exportAndRead(['--supplier', supplierId]);
      // Exit code 1 exactly when a plot could not be written (or passes the limit alone), and it is named.
      expect(code, output).toBe(out.skipped.length > 0 || out.files.some((f) => f.overLimit) ? 1 : 0);
      expect(out.files.map((f) => f.path.split('/').at(-1))).toEqual([`supplier-${supplierId}.geojson`]);
      const named = [...features.keys(), ...out.skipped.map((s) => s.plotId)].sort();
      expect(named).toEqual([...expected.keys()].sort());
      for (const [plotId, f] of features) {
        const plot = expected.get(plotId)!;
        expect(f.properties['ProductionPlace']).toBe(plot.name?.trim() || plot.id);
        const country = plot.country_code?.trim().toUpperCase();
        expect(f.properties['ProducerCountry']).toBe(country && /^[A-Z]{2}$/.test(country) ? country : undefined);
        expect(f.properties['ProducerName']).toBe(plot.producer_name?.trim() || undefined);
      }
      oddSeen += Object.values(odd).filter((id) => expected.has(id)).length;
    }
    // The odd records sit with the simulated suppliers: every one of them went through an export above.
    expect(oddSeen).toBeGreaterThanOrEqual(Object.keys(odd).length);
  }, 120_000);

  /** The export of the supplier that reaches `plotId`: its feature, or why it was not written. */
  async function exportOf(plotId: string) {
    const { rows } = await sql<{ supplier_id: string }>`
      select supplier_id from plot_suppliers where plot_id = ${plotId} and deleted_at is null order by supplier_id limit 1`.execute(
      db,
    );
    const supplierId = rows[0]!.supplier_id;
    const result = await exportAndRead(['--supplier', supplierId]);
    const plot = (await currentPlots(supplierId)).get(plotId)!;
    return {
      ...result,
      plot,
      feature: result.features.get(plotId),
      skip: result.out.skipped.find((s) => s.plotId === plotId),
    };
  }

  it("handles the simulator's odd records as documented", async () => {
    const cut = (ring: Position[]) => ring.map(([x, y]) => [truncate6(x), truncate6(y)]);

    // A polygon with a hole: its outer ring only (the EU does not read holes).
    const hole = await exportOf(odd.withHole!);
    const holed = hole.plot.geometry.coordinates as Position[][];
    expect(holed.length).toBeGreaterThan(1);
    expect(hole.feature?.geometry).toEqual({ type: 'Polygon', coordinates: [cut(holed[0]!)] });

    // A corner drawn twice within one 6-decimal step: written once.
    const doubled = await exportOf(odd.doubledCorner!);
    const doubledRing = (doubled.plot.geometry.coordinates as Position[][])[0]!;
    expect(doubled.feature?.geometry.type).toBe('Polygon');
    const written = (doubled.feature!.geometry.coordinates as Position[][])[0]!;
    expect(written).toHaveLength(doubledRing.length - 1);
    for (let i = 1; i < written.length; i++) expect(written[i]).not.toEqual(written[i - 1]);

    // A point whose reported area is 0: the EU refuses a point's Area below 0.0001 ha, and without
    // Area would read 4 ha: not written, named with the reason (exit code 1).
    const point = await exportOf(odd.pointZeroArea!);
    expect(point.plot.geometry.type).toBe('Point');
    expect(point.feature).toBeUndefined();
    expect(point.skip?.reason).toMatch(/below the 0\.0001 ha the EU takes for a point/);
    expect(point.code).toBe(1);

    // A point over 4 ha: a point with its area, so the EU does not assume 4 ha.
    const big = await exportOf(odd.pointOver4ha!);
    expect(big.feature?.geometry.type).toBe('Point');
    expect(big.feature?.properties['Area']).toBeGreaterThan(4);

    // Latitude first, and a bow-tie: written as they are (the readiness findings name them; the
    // EU's own checks refuse them), cut to 6 decimals.
    for (const kind of ['swappedLonLat', 'bowTie'] as const) {
      const r = await exportOf(odd[kind]!);
      expect(r.feature?.geometry, kind).toEqual({
        type: 'Polygon',
        coordinates: [cut((r.plot.geometry.coordinates as Position[][])[0]!)],
      });
    }

    // A ring without its closing position: not written, named with the reason (exit code 1).
    const unclosed = await exportOf(odd.unclosedRing!);
    expect(unclosed.feature).toBeUndefined();
    expect(unclosed.skip?.reason).toMatch(/closed ring/);
    expect(unclosed.code).toBe(1);

    // A name outside ASCII: written as it is, as UTF-8 (the file's bytes are counted as such above).
    const unicode = await exportOf(odd.unicodeName!);
    expect(unicode.plot.name).toMatch(/[^\x00-\x7f]/);
    expect(unicode.feature?.properties['ProductionPlace']).toBe(unicode.plot.name);
  }, 120_000);

  it('--batch ID --key KEY writes the plots of a row taken in by ddsync submit', async () => {
    const [first, second] = sim.control.suppliers();
    const firstPlots = await currentPlots(first!.id);
    const secondPlots = [...(await currentPlots(second!.id)).keys()].sort().slice(0, 2);
    const path = writeShipments([
      shipmentRow('whole', first!.id),
      shipmentRow('named', second!.id, {
        components: [
          {
            hsn: '18010000',
            quantity: 10,
            unit: 'KGM',
            description: 'cocoa',
            supplierBusinessId: second!.id,
            plotIds: secondPlots,
          },
        ],
      }),
    ]);
    const intake = await takeInShipments(db, path, `${path}.report.ndjson`);
    expect(intake).toMatchObject({ accepted: 2, invalid: 0 });

    const whole = await exportAndRead(['--batch', intake.batchId, '--key', 'whole']);
    expect(whole.out.files.map((f) => f.path.split('/').at(-1))).toEqual([`${intake.batchId}-whole.geojson`]);
    expect([...whole.features.keys(), ...whole.out.skipped.map((s) => s.plotId)].sort()).toEqual(
      [...firstPlots.keys()].sort(),
    );
    expect(whole.code).toBe(whole.out.skipped.length > 0 ? 1 : 0);

    const named = await exportAndRead(['--batch', intake.batchId, '--key', 'named']);
    expect(named.code, named.output).toBe(0);
    expect(named.out.files[0]!.plots.sort()).toEqual(secondPlots);

    const missing = runDdsync(['export', 'geojson', '--batch', intake.batchId, '--key', 'nope'], env);
    expect(await missing.exited).toBe(1);
    expect(missing.output()).toContain(`batch ${intake.batchId} has no accepted row with key "nope"`);
  }, 120_000);

  it('refuses bad flags naming the flag and the rule (exit code 2), and an unknown supplier (exit code 1)', async () => {
    const cases: Array<[string[], number, RegExp]> = [
      [[], 2, /give either --supplier ID or --batch ID --key KEY/],
      [['--supplier', 'S', '--batch', randomUUID(), '--key', 'k'], 2, /--supplier goes alone/],
      [['--batch', randomUUID()], 2, /--batch needs --key/],
      [['--key', 'k'], 2, /--key goes with --batch/],
      [['--batch', 'b-1', '--key', 'k'], 2, /--batch must be a batch id \(a UUID\), got "b-1"/],
      [['--supplier', 'no-such-supplier'], 1, /no plots for supplier no-such-supplier/],
    ];
    for (const [args, code, message] of cases) {
      const run = runDdsync(['export', 'geojson', ...args], env);
      expect(await run.exited, `${args.join(' ')}:\n${run.output()}`).toBe(code);
      expect(run.output()).toMatch(message);
      expect(run.output()).not.toMatch(/BATCH must be/);
    }
  }, 120_000);
});
