// Loads supplier pages in a process of its own, so a test can give it the production worker's heap
// (test/integration/dense-pages.test.ts):
//   node --max-old-space-size=N --import tsx <this> <database url> <upstream url> <supplier ids, comma-separated> <ballast MB>
// Every supplier's page 1 is loaded at once, as the refresh's page activities would be, beside a
// ballast of live objects standing for what a worker always holds (its Temporal runtime and
// connections: about 45 MB of heap). Prints one JSON line.
import { MockActivityEnvironment } from '@temporalio/testing';
import { createPageLoader } from '../../activities/refresh/page-load.ts';
import type { PlotPageResult } from '../../activities/refresh/page-run.ts';
import { createUpstreamClient } from '../../upstream/index.ts';
import { openWarehouse } from '../../warehouse/database.ts';
import { migrateToLatest } from '../../warehouse/migrate.ts';
import { beginRun } from '../../warehouse/refresh/run-ledger.ts';

const [databaseUrl, upstreamUrl, supplierList, ballastMb] = process.argv.slice(2) as [string, string, string, string];
// Arrays of 128 KB of doubles each, alive until the end.
const ballast = Array.from({ length: Number(ballastMb) * 8 }, (_, i) => new Array<number>(16 * 1024).fill(i + 0.5));
const RUN = '00000000-0000-4000-8000-00000000d015';
let peakHeap = 0;
const sampler = setInterval(() => (peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed)), 5);
const db = openWarehouse(databaseUrl, 8);
try {
  await migrateToLatest(db);
  await beginRun(db, RUN, null);
  const api = createUpstreamClient({ baseUrl: upstreamUrl, clientId: 'c', clientSecret: 'secret' });
  const { loadPage } = createPageLoader({ db, api });
  const results = await Promise.all(
    supplierList
      .split(',')
      .map((supplier) => new MockActivityEnvironment().run(loadPage, RUN, supplier, 1) as Promise<PlotPageResult>),
  );
  clearInterval(sampler);
  console.log(
    JSON.stringify({
      written: results.map((r) => r.written),
      received: results.map((r) => r.received),
      peakHeapMb: Math.round(peakHeap / 1024 / 1024),
      ballast: ballast.length,
    }),
  );
} finally {
  await db.destroy();
}
