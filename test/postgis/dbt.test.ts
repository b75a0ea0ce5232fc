import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { inject } from 'vitest';
import { startWorkerHarness, type WorkerHarness } from '../support/worker-harness.ts';
import { ddsyncEnv, lastJsonLine, runDdsync } from '../support/processes.ts';
import { shipmentRow } from '../support/shipments.ts';
import { dbtExecutable, dbtProject, type DbtProject, type DbtResult } from '../support/dbt.ts';
import { readWarehouseCatalog } from '../../warehouse/dbt/catalog.ts';

// The package `ddsync dbt` writes, checked by the real dbt (dbt-core 1.11 with dbt-postgres, from PyPI:
// .ci/run installs them) over a warehouse refreshed from the simulator on the extra suite's PostgreSQL 15
// with PostGIS: dbt parses it without a warning, every test passes, freshness passes, and a row that
// breaks a rule, or a refresh too old, fails the matching check. dbt connects as a login of the
// read-only role ddsync_reader, through the package's own profiles.yml (credentials from the environment).

const layout = { ownPlots: 3, suppliers: [{ plots: 40 }, { plots: 25 }, { plots: 15 }] };
// Text dbt must show as it is, not run: quotes, a colon, lines, and Jinja of every kind.
const HOSTILE = `The plot's "name": as sent.\nSecond line {{ run_query('drop table plots') }} {% if true %}x{% endif %} {# hidden #}`;

/** A file tree's text, to search for what must not be there. */
function textUnder(dir: string): string {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((path) => join(dir, path))
    .filter((path) => statSync(path).isFile())
    .map((path) => readFileSync(path, 'utf8'))
    .join('\n');
}

const named = (results: DbtResult[], status: string) =>
  results
    .filter((r) => r.status === status)
    .map((r) => r.unique_id)
    .sort();

describe('the dbt package of a refreshed warehouse, in the real dbt', () => {
  let h: WorkerHarness;
  let work: string;
  let packageDir: string;
  let dbt: DbtProject;
  let summary: Record<string, unknown>;
  const role = `dbt_reader_${randomBytes(4).toString('hex')}`;
  const password = `dbt-secret-${randomBytes(8).toString('hex')}`;

  beforeAll(async () => {
    // dbt first: when it is missing, the test says so before a refresh is spent.
    dbtExecutable();
    h = await startWorkerHarness({ seed: 21, layout, timeScale: 0.001, transactionErrorRatio: 0.3 }, 'dbt');
    expect((await h.refresh()).status).toBe('succeeded');
    // A second refresh over changes: history, a soft-deleted plot and link, a new analysis.
    const { control } = h.sim;
    const ids = [...control.plots()].filter((p) => p.supplierIds.length === 1).map((p) => p.plot['id'] as string);
    control.setRiskStatus(ids[3]!, 'EUDR_NON_COMPLIANT', 'high');
    control.addAnalysis(ids[4]!, { type: 'PRECISION', status: 'succeeded', riskOfDeforestation: 0.4 });
    control.removePlot(ids[5]!);
    expect((await h.refresh()).status).toBe('succeeded');
    // Transactions, some rejected by the EU system.
    work = mkdtempSync(join(inject('scratchDir'), 'dbt-'));
    const supplier = control.suppliers()[0]!.id;
    const shipments = join(work, 'shipments.ndjson');
    writeFileSync(
      shipments,
      Array.from({ length: 8 }, (_, i) => JSON.stringify(shipmentRow(`dbt-${role}-${i}`, supplier))).join('\n'),
    );
    const { progress } = await h.submit(shipments);
    expect(progress).toMatchObject({ started: 8, pending: 0 });
    // What the tests run over: history beyond the first versions, a soft-deleted plot, transactions.
    const { rows } = await sql<{ versions: number; plots: number; removed: number; transactions: number }>`
      select (select count(*)::int from plot_history) as versions, (select count(*)::int from plots) as plots,
             (select count(*)::int from plots where deleted_at is not null) as removed,
             (select count(*)::int from transactions) as transactions`.execute(h.db);
    expect(rows[0]!.versions).toBeGreaterThan(rows[0]!.plots);
    expect(rows[0]).toMatchObject({ removed: 1, transactions: 8 });

    // A comment dbt must not run, and a login of the read-only role for dbt.
    await sql.raw(`comment on column plots.name is '${HOSTILE.replaceAll("'", "''")}'`).execute(h.db);
    await sql.raw(`create role ${role} login password '${password}' in role ddsync_reader`).execute(h.db);
    packageDir = join(work, 'ddsync_dbt');
    const { hostname, port, pathname } = new URL(h.databaseUrl);
    dbt = dbtProject(packageDir, work, {
      DDSYNC_DBT_HOST: hostname,
      DDSYNC_DBT_PORT: port,
      DDSYNC_DBT_USER: role,
      DBT_ENV_SECRET_DDSYNC_DBT_PASSWORD: password,
      DDSYNC_DBT_DBNAME: pathname.slice(1),
    });
  });
  afterAll(async () => {
    if (h) await sql.raw(`drop role if exists ${role}`).execute(h.db);
    await h?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('is written by ddsync dbt, parsed by dbt with no warning, each description the warehouse’s comment', async () => {
    const command = runDdsync(
      ['dbt', '--out', packageDir, '--json'],
      ddsyncEnv({ upstreamUrl: h.sim.url, databaseUrl: h.databaseUrl, taskQueue: h.temporal.taskQueue }),
    );
    expect(await command.exited, command.output()).toBe(0);
    summary = lastJsonLine(command.output());
    expect(summary).toMatchObject({ path: packageDir, sources: 1, skipped: [] });

    // --warn-error: a deprecated property or any other warning fails the parse.
    const parse = await dbt.run(['parse', '--warn-error']);
    expect(parse.code, parse.output).toBe(0);
    const sources = Object.values(dbt.manifest().sources);
    const catalog = await readWarehouseCatalog(h.db);
    expect(sources.map((s) => s.name).sort()).toEqual(catalog.relations.map((r) => r.name).sort());
    expect(catalog.relations.some((r) => r.columns.some((c) => c.name === 'geom'))).toBe(true);
    for (const relation of catalog.relations) {
      const source = sources.find((s) => s.name === relation.name)!;
      expect([relation.name, source.description]).toEqual([relation.name, relation.comment ?? '']);
      for (const column of relation.columns)
        expect([relation.name, column.name, source.columns[column.name]?.description]).toEqual([
          relation.name,
          column.name,
          column.comment ?? '',
        ]);
    }
    expect(sources.find((s) => s.name === 'plots')!.columns['name']!.description).toBe(HOSTILE);
  });

  it('passes dbt test on the refreshed warehouse: every key, reference and value rule holds', async () => {
    const run = await dbt.run(['test']);
    expect(run.code, run.output).toBe(0);
    const results = dbt.testResults();
    expect(results.length).toBe(summary['tests']);
    expect(results.filter((r) => r.status !== 'pass').map((r) => [r.unique_id, r.status, r.message])).toEqual([]);
  });

  it('passes dbt source freshness after the refresh, and fails it once the last successful refresh is too old', async () => {
    const fresh = await dbt.run(['source', 'freshness']);
    expect(fresh.code, fresh.output).toBe(0);
    const results = dbt.freshnessResults();
    expect(results.length).toBe(summary['freshness']);
    expect(results.filter((r) => r.status !== 'pass')).toEqual([]);
    expect(named(results, 'pass')).toEqual(
      expect.arrayContaining([
        'source.ddsync_source.ddsync.plots',
        'source.ddsync_source.ddsync.sync_runs',
        'source.ddsync_source.ddsync.bi_current_plots',
      ]),
    );
    expect(named(results, 'pass')).not.toContain('source.ddsync_source.ddsync.transactions');

    // Two days without a successful refresh: past error_after (four intervals of the default 6h).
    const { rows } = await sql<{ id: string; finished_at: Date }>`
      select id, finished_at from sync_runs where status = 'succeeded'`.execute(h.db);
    await sql`update sync_runs set finished_at = finished_at - interval '2 days' where status = 'succeeded'`.execute(
      h.db,
    );
    try {
      const stale = await dbt.run(['source', 'freshness']);
      expect(stale.code).toBe(1);
      expect(dbt.freshnessResults().map((r) => r.status)).toEqual(results.map(() => 'error'));
    } finally {
      for (const r of rows)
        await sql`update sync_runs set finished_at = ${r.finished_at} where id = ${r.id}::uuid`.execute(h.db);
    }
  });

  it('fails the matching test, and only it, when a row breaks a rule', async () => {
    // A species of a plot that is not there: the reference no foreign key declares.
    await sql`insert into plot_species (plot_id, position, scientific_name) values ('no-such-plot', 0, 'Theobroma cacao')`.execute(
      h.db,
    );
    try {
      const run = await dbt.run(['test']);
      expect(run.code).toBe(1);
      const results = dbt.testResults();
      expect(named(results, 'fail')).toEqual([
        expect.stringMatching(
          /^test\.ddsync_source\.source_relationships_ddsync_plot_species_plot_id__id__source_ddsync_plots_\./,
        ),
      ]);
      expect(results.find((r) => r.status === 'fail')!.failures).toBe(1);
      expect(named(results, 'warn')).toEqual([]);
    } finally {
      await sql`delete from plot_species where plot_id = 'no-such-plot'`.execute(h.db);
    }

    // A risk level the service never sent before: kept, normalised, and a warning, not a failure.
    const { rows } = await sql<{ id: string; risk_level: string | null }>`
      select id, risk_level from plots where deleted_at is null order by id limit 1`.execute(h.db);
    await sql`update plots set risk_level = 'Extreme' where id = ${rows[0]!.id}`.execute(h.db);
    try {
      const run = await dbt.run(['test']);
      expect(run.code, run.output).toBe(0);
      const results = dbt.testResults();
      expect(named(results, 'fail')).toEqual([]);
      expect(named(results, 'warn')).toEqual([
        expect.stringMatching(
          /^test\.ddsync_source\.source_accepted_values_ddsync_bi_current_plots_risk_level__high__medium__low__none\./,
        ),
      ]);
    } finally {
      await sql`update plots set risk_level = ${rows[0]!.risk_level} where id = ${rows[0]!.id}`.execute(h.db);
    }
  });

  it('keeps the profile’s password out of the package, dbt’s target and its logs', () => {
    expect(readFileSync(join(packageDir, 'profiles.yml'), 'utf8')).toContain(
      'password: "{{ env_var(\'DBT_ENV_SECRET_DDSYNC_DBT_PASSWORD\') }}"',
    );
    for (const dir of [packageDir, join(work, 'target'), join(work, 'logs')]) {
      const text = textUnder(dir);
      expect(text.length).toBeGreaterThan(0);
      expect([dir, text.includes(password)]).toEqual([dir, false]);
    }
  });
});
