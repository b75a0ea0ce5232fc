// Throughput of the simulator's hot path: 500-plot pages of GET /businesses/{id}/plots over real
// HTTP. Prints figures only; never passes or fails on time.
// Usage: npx tsx bench/simulator.ts [--plots 100000] [--pages 200] [--json]
import { startSimulator } from '../simulator/index.ts';
import { positiveFlag } from './support/figures.ts';

async function main(): Promise<void> {
  const plots = positiveFlag('plots', 100_000);
  const pages = positiveFlag('pages', 200);
  const sim = await startSimulator({ port: 0, plots, suppliers: 5, seed: 1 });
  try {
    const token = await fetch(`${sim.url}/auth/machine-to-machine-clients/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        client_id: 'ddsync-demo',
        client_secret: 'ddsync-demo-secret',
        grant_type: 'client_credentials',
      }),
    }).then(async (r) => ((await r.json()) as { access_token: string }).access_token);
    const supplier = sim.control.suppliers().reduce((a, b) => (a.plotsCount > b.plotsCount ? a : b));
    const lastPage = Math.max(1, Math.ceil(supplier.plotsCount / 500));
    let bytes = 0;
    let rows = 0;
    const started = performance.now();
    for (let i = 0; i < pages; i++) {
      // Walk pages across the whole list so deep pages count as much as shallow ones.
      const page = 1 + ((i * 7919) % lastPage);
      const res = await fetch(`${sim.url}/businesses/${supplier.id}/plots?limit=500&page=${page}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      const body = await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`page ${page}: HTTP ${res.status}`);
      bytes += body.byteLength;
      rows += page === lastPage ? supplier.plotsCount - (lastPage - 1) * 500 : 500;
    }
    const seconds = (performance.now() - started) / 1000;
    const pagesPerSec = pages / seconds;
    const mbPerSec = bytes / 1e6 / seconds;
    console.log(
      `simulator: ${plots} plots, supplier with ${supplier.plotsCount} plots, ${pages} pages of 500 in ${seconds.toFixed(2)} s`,
    );
    console.log(
      `  ${pagesPerSec.toFixed(1)} pages/s, ${(rows / seconds).toFixed(0)} plots/s, ${mbPerSec.toFixed(1)} MB/s, ${(bytes / pages / 1e6).toFixed(2)} MB/page`,
    );
    console.log(`  heap used: ${(process.memoryUsage().heapUsed / 1e6).toFixed(0)} MB`);
    if (process.argv.includes('--json')) console.log(JSON.stringify({ pagesPerSec, mbPerSec }));
  } finally {
    await sim.close();
  }
}

await main();
