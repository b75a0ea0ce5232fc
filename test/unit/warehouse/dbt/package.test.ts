import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { buildDbtPackage, PROFILE_ENV, type DbtPackage } from '../../../../warehouse/dbt/package.ts';
import type { WarehouseCatalog } from '../../../../warehouse/dbt/catalog.ts';
import { column, fixtureCatalog } from './catalog-fixture.ts';

const SIX_HOURS = 6 * 3_600_000;
const build = (catalog: WarehouseCatalog = fixtureCatalog()) =>
  buildDbtPackage(catalog, { version: '9.8.7', refreshIntervalMs: SIX_HOURS });
const file = (pkg: DbtPackage, path: string) => {
  const found = pkg.files.find((f) => f.path === path);
  if (!found) throw new Error(`no ${path} in ${pkg.files.map((f) => f.path).join(', ')}`);
  return found.content;
};
// PyYAML, which dbt reads its files with, speaks YAML 1.1 (an unquoted no is false there).
const yaml11 = (text: string) => parse(text, { version: '1.1' }) as Record<string, unknown>;

interface Test {
  [name: string]: {
    description?: string;
    arguments?: Record<string, unknown>;
    config?: Record<string, unknown>;
    column_name?: string;
  };
}
interface Column {
  name: string;
  description?: string;
  data_type: string;
  quote?: boolean;
  data_tests?: Test[];
}
interface Table {
  name: string;
  identifier: string;
  description?: string;
  config: { meta: { ddsync_relation: string }; freshness?: null };
  data_tests?: Test[];
  columns: Column[];
}
interface Source {
  name: string;
  loader: string;
  database: string;
  schema: string;
  config: { enabled: string; freshness: Record<string, { count: number; period: string }>; loaded_at_query: string };
  tables: Table[];
}

const sourceOf = (pkg: DbtPackage) => (yaml11(file(pkg, 'models/sources.yml'))['sources'] as Source[])[0]!;
const tableOf = (pkg: DbtPackage, name: string) => {
  const table = sourceOf(pkg).tables.find((t) => t.name === name);
  if (!table) throw new Error(`no table ${name}`);
  return table;
};
/** `test` or `test:argument` of each test of a column, in order. */
const testsOf = (pkg: DbtPackage, table: string, name: string) =>
  (tableOf(pkg, table).columns.find((c) => c.name === name)?.data_tests ?? []).map((t) => {
    const [kind, body] = Object.entries(t)[0]!;
    const args = body.arguments ?? {};
    const detail = args['to'] ?? (args['values'] ? (args['values'] as string[]).join('|') : undefined);
    const severity = body.config?.['severity'] ? ` (${body.config['severity']})` : '';
    const where = body.config?.['where'] ? ` where ${body.config['where']}` : '';
    return `${kind}${detail ? `:${detail}` : ''}${severity}${where}`;
  });

/** What Jinja makes of text jinjaLiteral wrote: `{{ '{' }}` is the one tag it may hold, and renders `{`. */
const rendered = (text: string) => {
  const rest = text.replaceAll("{{ '{' }}", '');
  expect(rest).not.toMatch(/\{[{%#]/);
  return text.replaceAll("{{ '{' }}", '{');
};

describe('the dbt package made from a catalog', () => {
  it('is one source in the layout of Fivetran’s source packages, every relation listed by name with its identifier as a var', () => {
    const pkg = build();
    expect(pkg.files.map((f) => f.path)).toEqual([
      '.gitignore',
      'README.md',
      'dbt_project.yml',
      'models/sources.yml',
      'profiles.yml',
    ]);
    const project = yaml11(file(pkg, 'dbt_project.yml'));
    expect(project).toMatchObject({
      name: 'ddsync_source',
      version: '9.8.7',
      'config-version': 2,
      profile: 'ddsync',
      'require-dbt-version': ['>=1.10.8', '<2.0.0'],
    });
    const source = sourceOf(pkg);
    expect(source).toMatchObject({
      name: 'ddsync',
      loader: 'ddsync',
      database: "{{ var('ddsync_database', target.database) }}",
      schema: "{{ var('ddsync_schema', 'public') }}",
      config: { enabled: "{{ var('ddsync_sources_enabled', true) }}" },
    });
    expect(source.tables.map((t) => t.name)).toEqual([
      'analyses',
      'bi_current_plots',
      'bi_sync_health',
      'bi_transaction_pipeline',
      'bi_warehouse_totals',
      'plot_history',
      'plot_species',
      'plots',
      'submission_batches',
      'sync_runs',
      'transaction_status_events',
      'transactions',
    ]);
    expect(tableOf(pkg, 'plots').identifier).toBe("{{ var('ddsync_plots_identifier', 'plots') }}");
    expect(tableOf(pkg, 'bi_current_plots').config.meta).toEqual({ ddsync_relation: 'view' });
    expect(pkg.summary).toEqual({
      sources: 1,
      tables: 8,
      views: 4,
      tests: expect.any(Number),
      freshness: 8,
      skipped: [{ relation: 'Weird Name', reason: 'its name is not a plain lower-case identifier' }],
    });
  });

  it('carries the COMMENT ON text as descriptions, and each column’s type', () => {
    const catalog = fixtureCatalog();
    const plots = catalog.relations.find((r) => r.name === 'plots')!;
    plots.comment = 'Every plot reachable through a supplier: one row per plot.';
    plots.columns[1] = column('name', { comment: 'The plot’s name, as sent.' });
    plots.columns.push(column('note', { comment: null }));
    const pkg = build(catalog);
    const table = tableOf(pkg, 'plots');
    expect(table.description).toBe('Every plot reachable through a supplier: one row per plot.');
    expect(table.columns.map((c) => [c.name, c.description, c.data_type])).toEqual([
      ['id', 'The id.', 'text'],
      ['name', 'The plot’s name, as sent.', 'text'],
      ['risk_level', 'The risk_level.', 'text'],
      ['most_recent_analysis_id', 'The most_recent_analysis_id.', 'text'],
      ['note', undefined, 'text'],
    ]);
  });

  it('derives the tests from the keys, references and CHECKs, and passes value tests through views', () => {
    const pkg = build();
    // A primary key of one column; a reference declared not null, stated (no foreign key) or declared.
    expect(testsOf(pkg, 'plots', 'id')).toEqual(['not_null', 'unique']);
    expect(testsOf(pkg, 'analyses', 'plot_id')).toEqual(['not_null', "relationships:source('ddsync', 'plots')"]);
    expect(testsOf(pkg, 'plots', 'most_recent_analysis_id')).toEqual(["relationships:source('ddsync', 'analyses')"]);
    expect(testsOf(pkg, 'transactions', 'batch_id')).toEqual([
      'not_null',
      "relationships:source('ddsync', 'submission_batches')",
    ]);
    // A CHECK's values, and (no CHECK) the values ddsync writes.
    expect(testsOf(pkg, 'sync_runs', 'status')).toEqual(['accepted_values:running|succeeded|partial|failed']);
    expect(testsOf(pkg, 'transaction_status_events', 'source')).toEqual(['accepted_values:create|submit|poll|webhook']);
    expect(testsOf(pkg, 'transactions', 'state')).toEqual([]);
    // Composite keys: not_null on each column, unique on the row of them (quoted where SQL needs it).
    expect(testsOf(pkg, 'plot_species', 'position')).toEqual(['not_null']);
    expect(tableOf(pkg, 'plot_species').columns.find((c) => c.name === 'position')!.quote).toBe(true);
    expect(tableOf(pkg, 'plot_species').data_tests).toEqual([
      { unique: { description: 'Primary key plot_species_pkey.', column_name: '(plot_id, "position")' } },
    ]);
    // A partial unique index keeps its predicate.
    expect(testsOf(pkg, 'plot_history', 'plot_id')).toEqual([
      'not_null',
      'unique where is_current',
      "relationships:source('ddsync', 'plots')",
    ]);

    // Views: their stated keys; a column passed through keeps the value tests of its table column, never its key tests.
    expect(testsOf(pkg, 'bi_current_plots', 'plot_id')).toEqual(['not_null', 'unique']);
    expect(testsOf(pkg, 'bi_current_plots', 'most_recent_analysis_id')).toEqual([
      "relationships:source('ddsync', 'analyses')",
    ]);
    expect(testsOf(pkg, 'bi_sync_health', 'run_id')).toEqual(['not_null', 'unique']);
    expect(testsOf(pkg, 'bi_sync_health', 'status')).toEqual(['accepted_values:running|succeeded|partial|failed']);
    expect(testsOf(pkg, 'bi_transaction_pipeline', 'batch_id')).toEqual([
      'not_null',
      "relationships:source('ddsync', 'submission_batches')",
    ]);
    expect(tableOf(pkg, 'bi_transaction_pipeline').data_tests).toEqual([
      {
        unique: {
          description: expect.stringMatching(/^Stated key: grouped by/),
          column_name: '(batch_id, state, status_raw)',
        },
      },
    ]);
    // The statuses views normalise: the known values, normalised, warning only.
    expect(testsOf(pkg, 'bi_current_plots', 'risk_level')).toEqual(['accepted_values:high|medium|low|none (warn)']);
    expect(testsOf(pkg, 'bi_transaction_pipeline', 'status')).toEqual([
      'accepted_values:draft|to_submit|submitted|available|error|withdrawn (warn)',
    ]);
    // Each test says where it comes from.
    const [relationship] = tableOf(pkg, 'analyses')
      .columns.find((c) => c.name === 'plot_id')!
      .data_tests!.slice(1);
    expect(relationship!['relationships']!.description).toMatch(/^Stated reference: written in the same transaction/);
    expect(relationship!['relationships']!.arguments).toEqual({ to: "source('ddsync', 'plots')", field: 'id' });
  });

  it('checks freshness on the last successful refresh, in refresh intervals, where a refresh keeps the relation current', () => {
    const pkg = build();
    const source = sourceOf(pkg);
    expect(source.config.freshness).toEqual({
      warn_after: { count: 12, period: 'hour' },
      error_after: { count: 1, period: 'day' },
    });
    expect(source.config.loaded_at_query).toBe(
      "select max(finished_at) from {{ source('ddsync', 'sync_runs') }} where kind = 'refresh' and status = 'succeeded'",
    );
    const without = source.tables.filter((t) => t.config.freshness === null).map((t) => t.name);
    // The submission's tables change when a file is submitted, not at a refresh; a view over them too.
    expect(without).toEqual([
      'bi_transaction_pipeline',
      'submission_batches',
      'transaction_status_events',
      'transactions',
    ]);
    // A view over a view over plots is as fresh as plots.
    expect(tableOf(pkg, 'bi_warehouse_totals').config).not.toHaveProperty('freshness');
  });

  it('is the same bytes for the same catalog, whatever order its relations come in', () => {
    const first = build();
    const shuffled = fixtureCatalog();
    shuffled.relations.reverse();
    expect(build(shuffled)).toEqual(first);
    expect(build()).toEqual(first);
  });

  it('writes hostile comment text so that YAML reads it back and Jinja renders it as it was written', () => {
    const hostile = [
      'Quotes " and \' and a colon: here # not a comment',
      "{{ run_query('drop table plots') }} and {% if true %}x{% endif %} and {# hidden #}",
      '{{{ nested }}} {%- raw -%}{% endraw %}',
      'Line one\nline two: with colon\n  - not a list\n',
      'no',
      'yes',
      '- leading dash',
      '  leading spaces and a tab\there',
      '%YAML directive? ! tag & anchor * alias',
      'résumé → m², 100 % and `code`',
    ];
    const catalog = fixtureCatalog();
    const plots = catalog.relations.find((r) => r.name === 'plots')!;
    plots.comment = hostile[1]!;
    plots.columns = hostile.map((comment, i) => column(`c${i}`, { comment }));
    const pkg = build(catalog);
    const table = tableOf(pkg, 'plots');
    expect(rendered(table.description!)).toBe(hostile[1]);
    expect(table.columns.map((c) => rendered(c.description!))).toEqual(hostile);
    // And the file holds no Jinja but ddsync's own: vars, env_var, source() and the `{` expression.
    const text = file(pkg, 'models/sources.yml');
    const tags = [...text.matchAll(/\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}/g)].map((m) => m[0]);
    expect(
      tags.filter((t) => !/^\{\{ (var\('ddsync_[a-z_]+'[,)]|source\('ddsync', '[a-z_]+'\) |'\{' \}\}$)/.test(t)),
    ).toEqual([]);
  });

  it('writes accepted values as dbt quotes them in SQL (a quote doubled), and tests’ predicates as text', () => {
    const catalog = fixtureCatalog();
    const batches = catalog.relations.find((r) => r.name === 'submission_batches')!;
    batches.checks[0]!.definition = "CHECK ((status = ANY (ARRAY['it''s'::text, '{{ x }}'::text])))";
    const pkg = build(catalog);
    const values = tableOf(pkg, 'submission_batches').columns.find((c) => c.name === 'status')!.data_tests![0]![
      'accepted_values'
    ]!.arguments!['values'] as string[];
    expect(values.map(rendered)).toEqual(["it''s", '{{ x }}']);
  });

  it('puts no credential in any file: the profile reads each from the environment', () => {
    const pkg = build();
    const profile = yaml11(file(pkg, 'profiles.yml')) as {
      ddsync: { target: string; outputs: Record<string, Record<string, unknown>> };
    };
    const output = profile.ddsync.outputs[profile.ddsync.target]!;
    expect(output['type']).toBe('postgres');
    for (const key of ['host', 'user', 'password', 'dbname'] as const)
      expect(output[key]).toBe(`{{ env_var('${PROFILE_ENV[key]}') }}`);
    expect(output['port']).toBe(`{{ env_var('${PROFILE_ENV.port}', '5432') | as_number }}`);
    // dbt keeps the values of DBT_ENV_SECRET_* variables out of its logs.
    expect(PROFILE_ENV.password).toMatch(/^DBT_ENV_SECRET_/);
    const values = Object.entries(output).filter(([k]) => !['type', 'threads'].includes(k));
    expect(
      values.filter(([, v]) => !/^\{\{ env_var\('[A-Z_]+'(, '[a-z0-9_]+')?\)( \| as_number)? \}\}$/.test(String(v))),
    ).toEqual([]);
    // No connection string either (the catalog has none to give: test/integration/dbt-package.test.ts runs the command).
    for (const f of pkg.files) expect(f.content).not.toMatch(/postgres(ql)?:\/\//i);
  });

  it('says in its README what it holds and how to use and regenerate it', () => {
    const readme = file(build(), 'README.md');
    expect(readme).toContain('ddsync dbt --out');
    expect(readme).toContain('dbt test --profiles-dir .');
    expect(readme).toContain('| `bi_current_plots` | view | yes |');
    expect(readme).toContain('| `transactions` | table | no |');
    expect(readme).toContain('Left out (their names are not plain lower-case identifiers): `Weird Name`.');
  });
});
