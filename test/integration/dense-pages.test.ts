import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createPageLoader, PAGE_MEMORY_BYTES } from '../../activities/refresh/page-load.ts';
import type { PlotPageResult } from '../../activities/refresh/page-run.ts';
import { WORKER_NODE_FLAGS } from '../../infra/production.ts';
import { ByteBudget } from '../../platform/byte-budget.ts';
import { createUpstreamClient, parsedHeapEstimate } from '../../upstream/index.ts';
import { openWarehouse } from '../../warehouse/database.ts';
import { migrateToLatest } from '../../warehouse/migrate.ts';
import { beginRun } from '../../warehouse/refresh/run-ledger.ts';
import { createTestDatabase } from '../support/databases.ts';
import { fakeJwt, startServer, tokenRoute, type LocalServer } from '../unit/upstream/local-server.ts';
import { samplePlot } from '../unit/upstream/samples.ts';

// Pages that weigh little as bytes and much as objects (docs/refresh.md, "A page of any size"): each
// supplier's page holds two plots whose rings are written as short positions (`[0,0]`, six bytes
// each), 3.9 MB, under the 4 MB a page may have to be parsed whole. Parsed, such a page takes about
// 48 MB of heap; admitted by its bytes, four of them were held at once, past the production worker's
// heap, and V8 ended the process (on every retry). Weighed by what they parse to, they go one at a time.

const SUPPLIERS = ['dense-1', 'dense-2', 'dense-3', 'dense-4', 'dense-5', 'dense-6'];
const POSITIONS = 320_000;
/** What a production worker holds live besides pages (bench:worker-memory: about 45 MB of heap). */
const WORKER_LIVE_MB = 48;
const CHILD = fileURLToPath(new URL('./dense-pages-child.ts', import.meta.url));

/** A page memory budget that counts the pages it holds at once. */
class WatchedBudget extends ByteBudget {
  held = 0;
  mostHeld = 0;
  override async acquire(bytes: number, signal?: AbortSignal): Promise<() => void> {
    const giveBack = await super.acquire(bytes, signal);
    this.mostHeld = Math.max(this.mostHeld, ++this.held);
    let given = false;
    return () => {
      if (!given) this.held--;
      given = true;
      giveBack();
    };
  }
}

function densePage(supplier: string): Buffer {
  const plots = [0, 1].map((k) => {
    const i = SUPPLIERS.indexOf(supplier) * 2 + k;
    const plot = samplePlot(i, { suppliers: [{ id: supplier, name: supplier }] });
    // A closed ring of one point repeated: a valid shape for the contract, checked later (zero area).
    const ring = `[[${'[0,0],'.repeat(POSITIONS)}[0,0]]]`;
    return JSON.stringify({ ...plot, geometry: { type: 'Polygon', coordinates: 'RING' } }).replace('"RING"', ring);
  });
  return Buffer.from(`[${plots.join(',')}]`);
}

describe('pages of short positions, with the production heap', () => {
  let server: LocalServer;
  let url: string;
  const pages = new Map(SUPPLIERS.map((s) => [s, densePage(s)]));
  beforeAll(async () => {
    url = await createTestDatabase('dense_pages');
    server = await startServer((req, res) => {
      if (tokenRoute(req, res, () => fakeJwt(1))) return;
      const supplier = /^\/businesses\/([^/]+)\/plots$/.exec(req.path)?.[1];
      const body = supplier === undefined ? undefined : pages.get(supplier);
      if (!body) {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(body.byteLength) });
      res.end(body);
    });
  });
  afterAll(() => server?.close());

  it('weighs such a page by what it parses to, far above its bytes', () => {
    const page = pages.get('dense-1')!;
    expect(page.byteLength).toBeLessThan(4 * 1024 * 1024);
    expect(page.byteLength).toBeGreaterThan(3.5 * 1024 * 1024);
    expect(parsedHeapEstimate(page)).toBeGreaterThan(40 * 1024 * 1024);
  });

  it('parses and writes them one at a time', async () => {
    const db = openWarehouse(await createTestDatabase('dense_pages_budget'), 8);
    try {
      await migrateToLatest(db);
      const run = '00000000-0000-4000-8000-00000000d016';
      await beginRun(db, run, null);
      const api = createUpstreamClient({ baseUrl: server.url, clientId: 'c', clientSecret: 'secret' });
      const pageMemory = new WatchedBudget(PAGE_MEMORY_BYTES);
      const { loadPage } = createPageLoader({ db, api, pageMemory });
      const results = await Promise.all(
        SUPPLIERS.map(
          (supplier) => new MockActivityEnvironment().run(loadPage, run, supplier, 1) as Promise<PlotPageResult>,
        ),
      );
      expect(results.map((r) => r.received)).toEqual(SUPPLIERS.map(() => 2));
      // By their bytes (3.9 MB each), four of them would have been parsed and held at once.
      expect(pageMemory.mostHeld).toBe(1);
      expect(pageMemory.inUse).toBe(0);
    } finally {
      await db.destroy();
    }
  });

  it('loads six of them at once within the worker heap of production, every plot stored', async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [...WORKER_NODE_FLAGS, '--import', 'tsx', CHILD, url, server.url, SUPPLIERS.join(','), String(WORKER_LIVE_MB)],
      { maxBuffer: 1024 * 1024 },
    );
    const result = JSON.parse(stdout.trim().split('\n').pop()!) as { received: number[] };
    expect(result.received).toEqual(SUPPLIERS.map(() => 2));
    const db = openWarehouse(url, 1);
    try {
      const stored = await sql<{ n: number }>`select count(*)::int as n from plots where deleted_at is null`.execute(
        db,
      );
      expect(stored.rows[0]!.n).toBe(SUPPLIERS.length * 2);
    } finally {
      await db.destroy();
    }
  });
});
