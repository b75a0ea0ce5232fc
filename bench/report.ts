// The HTML report at scale: a warehouse of N hand-made plots (default 100,000: polygons of 6–11
// positions, some points, a third not ready) written into an embedded Postgres in the shape the
// readiness views read; then `ddsync report` as a person runs it (a child process), and the file
// opened in headless Chromium (Debian's, as the browser test): file size, generation time, time to
// the map drawn, and the time of a redraw when zooming in. Prints figures; never asserts on time.
// Usage: npm run bench:report [-- --plots 100000] [--suppliers 10] [--json]
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { sql } from 'kysely';
import { startEmbeddedPostgres } from '../infra/embedded-postgres.ts';
import { packagePath } from '../platform/package-root.ts';
import { openWarehouse, type Warehouse } from '../warehouse/database.ts';
import { migrateToLatest } from '../warehouse/migrate.ts';
import { type Drawn, drawn, focusPlot, launchChromium, openReport } from '../test/support/report-browser.ts';
import { reportData } from '../test/support/report-html.ts';
import { readFileSync } from 'node:fs';
import { median, positiveFlag } from './support/figures.ts';
import { handMadeReportRows } from './support/report-rows.ts';
import { phase, progressTo, Teardown } from './support/stack.ts';

const plots = positiveFlag('plots', 100_000);
const suppliers = positiveFlag('suppliers', 10);
const say = progressTo('bench:report');
const seconds: Record<string, number> = {};
const teardown = new Teardown(say);

/** The hand-made plots as rows of businesses, connections, plots, links and current findings. */
async function seed(db: Warehouse): Promise<{ notReadyPolygon: string }> {
  const rows = handMadeReportRows(plots, suppliers);
  await sql`insert into businesses (id, name, is_caller, content_hash) values ('C', 'Caller', true, 'h')`.execute(db);
  for (const s of rows.suppliers) {
    await sql`insert into businesses (id, name, is_caller, content_hash) values (${s.supplierId}, ${s.supplierName}, false, 'h')`.execute(
      db,
    );
    await sql`insert into business_connections (id, source_business_id, target_business_id, partner_business_id, role, content_hash)
              values (${`c-${s.supplierId}`}, ${s.supplierId}, 'C', ${s.supplierId}, 'supplier', 'h')`.execute(db);
  }
  const CHUNK = 5_000;
  for (let start = 0; start < rows.plots.length; start += CHUNK) {
    const chunk = rows.plots.slice(start, start + CHUNK);
    await sql`
      insert into plots (id, name, owner_id, country_code, commodities, area_ha, geometry, geometry_valid, content_hash, history_hash)
      select id, name, owner, country, '{cocoa}', area, geometry::jsonb, true, 'h', 'h'
      from unnest(${chunk.map((p) => p.plotId)}::text[], ${chunk.map((p) => p.plotName)}::text[],
                  ${chunk.map((p) => p.supplierIds[0]!)}::text[], ${chunk.map((p) => p.countryCode)}::text[],
                  ${chunk.map((p) => p.areaHa)}::float8[], ${chunk.map((p) => JSON.stringify(p.geometry))}::text[])
             as t(id, name, owner, country, area, geometry)`.execute(db);
    await sql`
      insert into plot_suppliers (plot_id, supplier_id)
      select * from unnest(${chunk.map((p) => p.plotId)}::text[], ${chunk.map((p) => p.supplierIds[0]!)}::text[])`.execute(
      db,
    );
    const findings = chunk.flatMap((p) => p.findings.map((f) => ({ plot: p.plotId, ...f })));
    if (findings.length > 0)
      await sql`
        insert into eudr_findings (plot_id, code, severity, message, valid_from)
        select plot, code, severity, message, now()
        from unnest(${findings.map((f) => f.plot)}::text[], ${findings.map((f) => f.code)}::text[],
                    ${findings.map((f) => f.severity)}::text[], ${findings.map((f) => f.message)}::text[])
               as t(plot, code, severity, message)`.execute(db);
  }
  await sql`analyze`.execute(db);
  const target = rows.plots.find((p) => p.ready === false && (p.geometry as { type: string }).type === 'Polygon')!;
  return { notReadyPolygon: target.plotId };
}

/** `ddsync report` in a child process, as a person runs it; its wall time and its JSON line. */
function runReport(databaseUrl: string, out: string): Promise<{ seconds: number; result: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [packagePath('bin', 'ddsync.js'), 'report', '--out', out, '--json'], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, DATABASE_URL: databaseUrl },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
    });
    child.once('exit', (code) => {
      if (code !== 0) return reject(new Error(`ddsync report exited with ${code}`));
      resolve({
        seconds: (performance.now() - started) / 1000,
        result: JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, unknown>,
      });
    });
  });
}

try {
  // .ddsync/bench does not exist on a fresh checkout: mkdtemp makes only the last part.
  await mkdir(packagePath('.ddsync', 'bench'), { recursive: true });
  const dir = await mkdtemp(packagePath('.ddsync', 'bench', 'report-'));
  teardown.add('the bench folder', () => rm(dir, { recursive: true, force: true }));
  const postgres = await phase(say, seconds, 'start Postgres', () =>
    startEmbeddedPostgres({ dataDir: join(dir, 'postgres'), persistent: false }),
  );
  teardown.add('Postgres', () => postgres.stop());
  const db = openWarehouse(postgres.url, 4, 'bench-report');
  teardown.add('the pool', () => db.destroy());
  await migrateToLatest(db);
  const { notReadyPolygon } = await phase(say, seconds, `write ${plots.toLocaleString('en-US')} plots`, () => seed(db));

  const generated = await phase(say, seconds, 'ddsync report', () => runReport(postgres.url, join(dir, 'out')));
  const file = generated.result['report'] as string;
  const bytes = generated.result['bytes'] as number;
  const html = readFileSync(file, 'utf8');
  const dataBytes = Buffer.byteLength(JSON.stringify(reportData(html)));

  const browser = await launchChromium();
  teardown.add('Chromium', () => browser.close());
  const opened = await phase(say, seconds, 'open in Chromium', () => openReport(browser, file));
  const first = await drawn(opened.page);
  // The plot layer's own drawing time, as the page measures it (median of 5 draws at each zoom).
  const zoomTo = async (zoom: number) => {
    const times: number[] = [];
    let last: Drawn | undefined;
    for (let i = 0; i < 5; i++) {
      await focusPlot(opened.page, notReadyPolygon, zoom);
      last = await drawn(opened.page);
      times.push(last.ms);
    }
    return { ms: median(times), drawn: last! };
  };
  const cells = await zoomTo(4);
  const points = await zoomTo(9);
  const polygons = await zoomTo(15);
  const heap = (await opened.page.evaluate('(performance.memory && performance.memory.usedJSHeapSize) || 0')) as number;

  const figures = {
    plots,
    fileMB: Math.round(bytes / 1e5) / 10,
    embeddedDataMB: Math.round(dataBytes / 1e5) / 10,
    generateSeconds: Math.round(generated.seconds * 10) / 10,
    firstDrawSeconds: Math.round(opened.drawMs / 100) / 10,
    firstDraw: first,
    redrawCellsMs: Math.round(cells.ms),
    redrawPointsMs: Math.round(points.ms),
    redrawPolygonsMs: Math.round(polygons.ms),
    pageHeapMB: Math.round(heap / 1e6),
    networkRequests: opened.networkRequests.length,
    pageErrors: opened.pageErrors.length,
  };
  console.log(`ddsync report at ${plots.toLocaleString('en-US')} plots (${suppliers} suppliers)`);
  console.log(`  file:                    ${figures.fileMB} MB (embedded plot data ${figures.embeddedDataMB} MB)`);
  console.log(`  ddsync report (process): ${figures.generateSeconds} s`);
  console.log(
    `  Chromium, open to drawn: ${figures.firstDrawSeconds} s (${first.mode}: ${first.plots.toLocaleString('en-US')} plots in ${first.cells} discs)`,
  );
  console.log(
    `  plot layer draw, zoom 4 (discs):     ${figures.redrawCellsMs} ms (${cells.drawn.plots.toLocaleString('en-US')} plots in ${cells.drawn.cells} discs)`,
  );
  console.log(
    `  plot layer draw, zoom 9 (dots):      ${figures.redrawPointsMs} ms (${points.drawn.plots} plots in view)`,
  );
  console.log(
    `  plot layer draw, zoom 15 (polygons): ${figures.redrawPolygonsMs} ms (${polygons.drawn.plots} in view)`,
  );
  console.log(`  page JS heap:            ${figures.pageHeapMB} MB`);
  console.log(`  network requests:        ${figures.networkRequests}; page errors: ${figures.pageErrors}`);
  if (opened.pageErrors.length > 0) console.log(opened.pageErrors.join('\n'));
  if (process.argv.includes('--json')) console.log(JSON.stringify({ ...figures, seconds }));
} finally {
  await teardown.run();
}
