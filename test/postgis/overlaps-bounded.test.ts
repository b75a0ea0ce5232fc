import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import { openWarehouse, type Warehouse } from '../../warehouse/database.ts';
import { migrateToLatest } from '../../warehouse/migrate.ts';
import { beyondToleranceSql, checkOverlapsAfterRun, hundredthsOfHaSql } from '../../warehouse/spatial/overlaps.ts';
import {
  MAX_LISTED,
  OVERLAP_CODES,
  beyondTolerance,
  overlapFindings,
  toleranceM2,
  type Claimants,
  type OverlapPair,
} from '../../domain/eudr/overlap-findings.ts';
import { createTestDatabase } from '../support/databases.ts';
import { square } from '../support/test-shapes.ts';

// The overlap check with bounded worker memory (docs/postgis.md, "Scale"): a messy source's cluster of
// copies of one polygon gives n²/2 pairs, which the check keeps in Postgres and streams plot by plot.

const COPIES = 300;
/** The child's heap: between what the streaming check needs (20 MB) and what reading every pair at once did (over 40). */
const HEAP_MB = 30;
const copy = (i: number) => `copy-${String(i).padStart(3, '0')}`;
/** Copies in three groups: the business's own (no live supplier), supplier s1, suppliers s1 and s2. */
const group = (i: number) => i % 3;
const mixed = (k: number) => `mix-${String(k).padStart(2, '0')}`;

interface Stored {
  plot_id: string;
  code: string;
  severity: string;
  message: string;
  details: {
    overlapping_plots: number;
    plots: Array<{ plot_id: string; supplier_business_ids: string[]; own: boolean }>;
  };
}

const current = async (db: Warehouse) =>
  (
    await sql<Stored>`
      select plot_id, code, severity, message, details from eudr_findings
      where is_current and code = any(${[...OVERLAP_CODES]}::text[]) order by plot_id, code`.execute(db)
  ).rows;
const findingRows = async (db: Warehouse) =>
  (await sql<{ n: number }>`select count(*)::int as n from eudr_findings`.execute(db)).rows[0]!.n;
const forgetCheck = (db: Warehouse) => sql`update spatial_state set overlaps_checked_at = null`.execute(db);

/** Every intersecting pair and every plot's claimants, all in memory, as the check read them before it streamed. */
async function allPairs(db: Warehouse): Promise<{ pairs: OverlapPair[]; claimants: Map<string, Claimants> }> {
  const { rows } = await sql<{ a: string; b: string; overlap_m2: number; a_m2: number; b_m2: number }>`
    select a.id as a, b.id as b, ST_Area(ST_Intersection(a.geom, b.geom)::geography) as overlap_m2,
      ST_Area(a.geom::geography) as a_m2, ST_Area(b.geom::geography) as b_m2
    from plots a join plots b on ST_Intersects(a.geom, b.geom) and b.id > a.id
    where a.deleted_at is null and ST_Dimension(a.geom) = 2 and b.deleted_at is null and ST_Dimension(b.geom) = 2`.execute(
    db,
  );
  const claimed = await sql<{ id: string; own: boolean; suppliers: string[] }>`
    select p.id, p.is_own as own,
      coalesce((select array_agg(ps.supplier_id) from plot_suppliers ps where ps.plot_id = p.id and ps.deleted_at is null), '{}') as suppliers
    from plots p`.execute(db);
  return {
    pairs: rows.map((r) => ({ a: r.a, b: r.b, overlapM2: r.overlap_m2, aM2: r.a_m2, bM2: r.b_m2 })),
    claimants: new Map(claimed.rows.map((r) => [r.id, { suppliers: r.suppliers, own: r.own }])),
  };
}

describe('the overlap check over a cluster of copies of one polygon', () => {
  let url: string;
  let db: Warehouse;
  beforeAll(async () => {
    url = await createTestDatabase('overlaps_bounded');
    db = openWarehouse(url, 2);
    await migrateToLatest(db);
    const plots: Array<{ id: string; geometry: string; own: boolean }> = [];
    const links: Array<{ plot_id: string; supplier_id: string; deleted: boolean }> = [];
    for (let i = 0; i < COPIES; i++) {
      plots.push({ id: copy(i), geometry: JSON.stringify(square(30, 10, 0.005)), own: group(i) === 0 });
      if (group(i) === 0) links.push({ plot_id: copy(i), supplier_id: 's1', deleted: true }); // a link that is gone
      if (group(i) >= 1) links.push({ plot_id: copy(i), supplier_id: 's1', deleted: false });
      if (group(i) === 2) links.push({ plot_id: copy(i), supplier_id: 's2', deleted: false });
    }
    // Elsewhere, a plot overlapped by 30 others by different amounts, some by equal ones (listing order),
    // and a neighbour whose border is drawn about 1 m over its own (within the tolerance: no finding).
    plots.push({ id: 'mix-base', geometry: JSON.stringify(square(31, 10, 0.01)), own: false });
    links.push({ plot_id: 'mix-base', supplier_id: 's3', deleted: false });
    for (let k = 0; k < 30; k++) {
      const shift = 0.0003 * Math.floor(k / 2) + 0.0001;
      plots.push({ id: mixed(29 - k), geometry: JSON.stringify(square(31 + shift, 10, 0.01)), own: false });
      links.push({ plot_id: mixed(29 - k), supplier_id: k % 4 === 0 ? 's3' : 's4', deleted: false });
    }
    plots.push({ id: 'mix-sliver', geometry: JSON.stringify(square(31 - 0.00999, 9.98001, 0.02)), own: false });
    await sql`
      insert into plots (id, geometry, geometry_valid, content_hash, history_hash, is_own)
      select r.id, r.geometry::jsonb, true, 'h', 'h', r.own
      from json_to_recordset(${JSON.stringify(plots)}::json) as r(id text, geometry text, own boolean)`.execute(db);
    await sql`
      insert into plot_suppliers (plot_id, supplier_id, deleted_at)
      select r.plot_id, r.supplier_id, case when r.deleted then now() end
      from json_to_recordset(${JSON.stringify(links)}::json) as r(plot_id text, supplier_id text, deleted boolean)`.execute(
      db,
    );
    await sql`analyze plots, plot_suppliers`.execute(db);
  });
  afterAll(() => db?.destroy());

  it('gives each copy its 299 others, split by whose land, listing at most MAX_LISTED, exactly as overlapFindings does', async () => {
    const outcome = await checkOverlapsAfterRun(db, crypto.randomUUID());
    const { pairs, claimants } = await allPairs(db);
    const expected = overlapFindings(pairs, (id) => claimants.get(id)!);
    expect(outcome).toMatchObject({ ran: true, pairs: pairs.length, findings: expected.length, closed: 0 });
    expect(outcome).toMatchObject({ opened: expected.length });
    expect(pairs.length).toBeGreaterThan((COPIES * (COPIES - 1)) / 2);

    // Byte for byte what the in-memory function makes of all pairs at once (jsonb compared as values).
    const stored = await current(db);
    const order = (x: { plot_id: string; code: string }, y: { plot_id: string; code: string }) =>
      x.plot_id < y.plot_id ? -1 : x.plot_id > y.plot_id ? 1 : x.code < y.code ? -1 : x.code > y.code ? 1 : 0;
    expect(stored.sort(order)).toEqual(expected.map((f) => ({ ...f, details: JSON.parse(f.details) })).sort(order));

    const ofCopy = (i: number) => stored.filter((f) => f.plot_id === copy(i));
    for (const i of [0, 1, 2, 150, COPIES - 1]) {
      const found = ofCopy(i);
      const same = found.find((f) => f.code === 'overlap_same_supplier')!;
      const other = found.find((f) => f.code === 'overlap_other_supplier')!;
      // Own plots share no supplier with the others (their s1 link is gone); s1 and s1+s2 share s1.
      const sameCount = group(i) === 0 ? COPIES / 3 - 1 : (2 * COPIES) / 3 - 1;
      expect([same.details.overlapping_plots, other.details.overlapping_plots]).toEqual([
        sameCount,
        COPIES - 1 - sameCount,
      ]);
      expect([same.severity, other.severity]).toEqual(['warning', 'blocking']);
      expect(same.message).toMatch(new RegExp(`^Overlaps ${sameCount} plots of the same supplier by `));
      for (const f of [same, other]) {
        expect(f.details.plots).toHaveLength(MAX_LISTED);
        // Equal overlaps: listed by id, the plot itself never among them.
        const ids = f.details.plots.map((p) => p.plot_id);
        expect(ids).toEqual([...ids].sort());
        expect(ids).not.toContain(copy(i));
        for (const p of f.details.plots) {
          const j = Number(p.plot_id.slice('copy-'.length));
          expect(p.own).toBe(group(j) === 0);
          expect(p.supplier_business_ids).toEqual([[], ['s1'], ['s1', 's2']][group(j)]);
          expect(f.code === 'overlap_same_supplier').toBe((group(i) === 0) === (group(j) === 0));
        }
      }
    }
    // The mixed plots: the base is listed largest first, ties by id; the sliver counts for nothing.
    const base = stored.filter((f) => f.plot_id === 'mix-base');
    expect(base.map((f) => [f.code, f.details.overlapping_plots])).toEqual([
      ['overlap_other_supplier', 22],
      ['overlap_same_supplier', 8],
    ]);
    expect(stored.filter((f) => f.plot_id === 'mix-sliver')).toEqual([]);
    expect(pairs.some((p) => p.b === 'mix-sliver' && p.a === 'mix-base')).toBe(true);
  });

  it('writes nothing when checked again over the same overlaps', async () => {
    const before = await findingRows(db);
    await forgetCheck(db);
    expect(await checkOverlapsAfterRun(db, crypto.randomUUID())).toMatchObject({ ran: true, opened: 0, closed: 0 });
    expect(await findingRows(db)).toBe(before);
  });

  it('runs in a worker whose heap is smaller than all the pairs and findings together', async () => {
    // The check before the streaming read all 44,850 pairs with their claimants into the worker and
    // built all 600 findings at once: in a process of its own it ran out of a 40 MB heap and needed
    // 48; the streaming check runs in 20 (18 is too little for the code and modules alone, with tsx).
    await forgetCheck(db);
    const before = await findingRows(db);
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [`--max-old-space-size=${HEAP_MB}`, '--import', 'tsx', 'test/postgis/overlap-check-child.ts', url],
      { encoding: 'utf8' },
    );
    expect(JSON.parse(stdout.trim().split('\n').at(-1)!)).toMatchObject({ ran: true, opened: 0, closed: 0 });
    expect(await findingRows(db)).toBe(before);
  });
});

describe('the tolerance and the listing order in SQL', () => {
  let db: Warehouse;
  beforeAll(async () => {
    db = openWarehouse(await createTestDatabase('overlaps_sql'), 1);
    await migrateToLatest(db);
  });
  afterAll(() => db?.destroy());

  /** The double after (up) or before (down) x. */
  const next = (x: number, up: boolean) => {
    const view = new DataView(new ArrayBuffer(8));
    view.setFloat64(0, x);
    view.setBigUint64(0, view.getBigUint64(0) + (up === x >= 0 ? 1n : -1n));
    return view.getFloat64(0);
  };

  it('agree with beyondTolerance and compareOthers’s rounding, at the boundaries too', async () => {
    const cases: Array<[number, number, number]> = [];
    let seed = 7;
    const random = () => {
      seed = (seed * 16807) % 2147483647;
      return seed / 2147483647;
    };
    for (let i = 0; i < 2000; i++) {
      const a = random() * 10 ** (1 + 7 * random());
      const b = random() * 10 ** (1 + 7 * random());
      const edge = toleranceM2(Math.min(a, b));
      cases.push([edge, a, b], [next(edge, true), a, b], [next(edge, false), a, b], [random() * 2 * edge, a, b]);
    }
    cases.push([0, 0, 0], [1, 0, 5], [0, -1, 4]);
    const m2s = [0, 49.99999999, 50, next(50, false), 150, 250, 1e6 + 50, 12345.5, ...cases.map(([o]) => o)];
    const { rows } = await sql<{ beyond: boolean[]; hundredths: number[] }>`
      select
        (select array_agg(${beyondToleranceSql(sql`o`, sql`a`, sql`b`)} order by n)
         from unnest(${cases.map((c) => c[0])}::float8[], ${cases.map((c) => c[1])}::float8[],
                     ${cases.map((c) => c[2])}::float8[]) with ordinality as t(o, a, b, n)) as beyond,
        (select array_agg(${hundredthsOfHaSql(sql`m`)} order by n)
         from unnest(${m2s}::float8[]) with ordinality as t(m, n)) as hundredths`.execute(db);
    expect(rows[0]!.beyond).toEqual(
      cases.map(([overlapM2, aM2, bM2]) => beyondTolerance({ a: 'a', b: 'b', overlapM2, aM2, bM2 })),
    );
    expect(rows[0]!.hundredths.map(Number)).toEqual(m2s.map((m) => Math.round(m / 100)));
  });
});
