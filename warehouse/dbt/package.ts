import { Document } from 'yaml';
import type { CatalogColumn, CatalogRelation, WarehouseCatalog } from './catalog.ts';
import { countDataTests, type DataTest, deriveDataTests, type RelationTests, type RowTest } from './data-tests.ts';
import { type FreshnessAge, freshnessThresholds, lastRefreshQuery, refreshedRelations } from './freshness.ts';
import { jinjaLiteral, jinjaString, sqlQuoted } from './jinja-text.ts';

// The dbt package of a warehouse, made from its catalog: no I/O, the same catalog always gives the same
// bytes. It follows the layout of the source packages Fivetran ships for its connectors: one source
// (`loader`, `config: enabled`, freshness and its query in `config`), one YAML file of sources (theirs is
// `models/src_<name>.yml`, ours `models/sources.yml`, the name dbt's docs use),
// the database and schema overridable with vars, and each table's identifier through
// `var('<source>_<table>_identifier', '<table>')`. Only dbt's built-in generic tests: no dbt packages,
// so nothing to download (`dbt deps`). docs/dbt.md says what is in it and why.

export const SOURCE_NAME = 'ddsync';
export const PACKAGE_NAME = 'ddsync_source';
export const PROFILE_NAME = 'ddsync';
/** `arguments:` under a generic test, which this package writes, is read from dbt 1.10.8 on. */
export const REQUIRED_DBT_VERSION = ['>=1.10.8', '<2.0.0'];
/** The environment variables of the profile. The password's prefix makes dbt scrub it from its logs. */
export const PROFILE_ENV = {
  host: 'DDSYNC_DBT_HOST',
  port: 'DDSYNC_DBT_PORT',
  user: 'DDSYNC_DBT_USER',
  password: 'DBT_ENV_SECRET_DDSYNC_DBT_PASSWORD',
  dbname: 'DDSYNC_DBT_DBNAME',
  schema: 'DDSYNC_DBT_SCHEMA',
  sslmode: 'DDSYNC_DBT_SSLMODE',
} as const;

export interface PackageOptions {
  /** ddsync's version: the package's. */
  version: string;
  /** DDSYNC_REFRESH_INTERVAL in milliseconds: freshness thresholds are counted in intervals. */
  refreshIntervalMs: number;
}

export interface PackageFile {
  /** Relative to the package's folder, with `/`. */
  path: string;
  content: string;
}

export interface DbtPackage {
  files: PackageFile[];
  summary: {
    sources: number;
    tables: number;
    views: number;
    tests: number;
    /** Tables and views with a freshness check. */
    freshness: number;
    /** Relations left out, each with why. */
    skipped: Array<{ relation: string; reason: string }>;
  };
}

/** A name dbt can use as a source table name and inside a var name, as Postgres needs no quotes for. */
const PLAIN_NAME = /^[a-z_][a-z0-9_]*$/;
/** The name the issue and dbt's own docs use; Fivetran's packages call it src_<name>.yml. */
const SOURCES_FILE = 'models/sources.yml';

const yamlText = (value: unknown, comment: string): string => {
  // YAML 1.1: the dialect dbt's PyYAML reads, in which an unquoted no, on or y is a boolean.
  const doc = new Document(value, { version: '1.1' });
  doc.commentBefore = comment;
  return doc.toString({ lineWidth: 0 });
};

const quoted = (name: string, column?: CatalogColumn) =>
  column?.needsQuoting ? `"${name.replaceAll('"', '""')}"` : name;

const identifierVar = (relation: string) => `{{ var('${SOURCE_NAME}_${relation}_identifier', '${relation}') }}`;

/** A test's description: where it comes from, as a sentence. */
const sentence = (why: string) => jinjaLiteral(`${why.charAt(0).toUpperCase()}${why.slice(1)}.`);

function testEntry(t: DataTest): Record<string, unknown> {
  const description = sentence(t.why);
  switch (t.test) {
    case 'not_null':
      return { not_null: { description } };
    case 'unique':
      return { unique: t.where ? { description, config: { where: jinjaLiteral(t.where) } } : { description } };
    case 'accepted_values':
      return {
        accepted_values: {
          description,
          arguments: { values: t.values.map((v) => jinjaLiteral(sqlQuoted(v))) },
          ...(t.severity === 'warn' ? { config: { severity: 'warn' } } : {}),
        },
      };
    case 'relationships':
      return {
        relationships: {
          description,
          arguments: { to: `source('${SOURCE_NAME}', '${t.to}')`, field: t.field },
        },
      };
  }
}

function rowTestEntry(t: RowTest, relation: CatalogRelation): Record<string, unknown> {
  const columns = t.columns.map((c) =>
    quoted(
      c,
      relation.columns.find((x) => x.name === c),
    ),
  );
  return {
    unique: {
      description: sentence(t.why),
      // The row of the columns: Postgres compares rows, and `row is not null` (the test's filter) holds
      // when every column is set, so a composite key is tested without concatenating text.
      column_name: `(${columns.join(', ')})`,
      ...(t.where ? { config: { where: jinjaLiteral(t.where) } } : {}),
    },
  };
}

function columnEntry(column: CatalogColumn, tests: DataTest[]): Record<string, unknown> {
  return {
    name: jinjaLiteral(column.name),
    ...(column.comment ? { description: jinjaLiteral(column.comment) } : {}),
    data_type: column.dataType,
    ...(column.needsQuoting ? { quote: true } : {}),
    ...(tests.length > 0 ? { data_tests: tests.map(testEntry) } : {}),
  };
}

function tableEntry(relation: CatalogRelation, tests: RelationTests, fresh: boolean): Record<string, unknown> {
  return {
    name: relation.name,
    identifier: identifierVar(relation.name),
    ...(relation.comment ? { description: jinjaLiteral(relation.comment) } : {}),
    config: {
      meta: { ddsync_relation: relation.kind },
      // The source's freshness is the last refresh's; what a refresh does not keep current has none.
      ...(fresh ? {} : { freshness: null }),
    },
    ...(tests.rows.length > 0 ? { data_tests: tests.rows.map((t) => rowTestEntry(t, relation)) } : {}),
    columns: relation.columns.map((c) => columnEntry(c, tests.columns.get(c.name) ?? [])),
  };
}

function sourcesFile(
  catalog: WarehouseCatalog,
  relations: CatalogRelation[],
  tests: Map<string, RelationTests>,
  fresh: Set<string>,
  options: PackageOptions,
): string {
  const { warnAfter, errorAfter } = freshnessThresholds(options.refreshIntervalMs);
  const migration = catalog.migrations.at(-1) ?? 'none';
  const source = {
    name: SOURCE_NAME,
    description: jinjaLiteral(
      `The ddsync warehouse: a supply-chain due-diligence (EUDR) service mirrored into PostgreSQL (schema ${catalog.schema}, migrated to ${migration}). Tables keep statuses as the service sent them; views (bi_*) are for analysts. A relation is as fresh as the last successful refresh when a refresh keeps it current.`,
    ),
    database: `{{ var('${SOURCE_NAME}_database', target.database) }}`,
    schema: `{{ var('${SOURCE_NAME}_schema', ${jinjaString(catalog.schema)}) }}`,
    loader: 'ddsync',
    config: {
      enabled: `{{ var('${SOURCE_NAME}_sources_enabled', true) }}`,
      freshness: { warn_after: warnAfter, error_after: errorAfter },
      loaded_at_query: lastRefreshQuery(SOURCE_NAME),
    },
    tables: relations.map((r) => tableEntry(r, tests.get(r.name)!, fresh.has(r.name))),
  };
  return yamlText(
    { version: 2, sources: [source] },
    ` Written by \`ddsync dbt\` from the warehouse's own catalog (schema ${catalog.schema}, migrated to ${migration}).\n Regenerate it after an upgrade of ddsync rather than editing it: see README.md.`,
  );
}

function projectFile(options: PackageOptions): string {
  return yamlText(
    {
      name: PACKAGE_NAME,
      version: options.version,
      'config-version': 2,
      'require-dbt-version': REQUIRED_DBT_VERSION,
      profile: PROFILE_NAME,
      'model-paths': ['models'],
      'clean-targets': ['target'],
    },
    ' The dbt package of the ddsync warehouse, written by `ddsync dbt`: sources only (models/sources.yml).',
  );
}

function profileFile(): string {
  const env = (name: string, fallback?: string) =>
    fallback === undefined ? `{{ env_var('${name}') }}` : `{{ env_var('${name}', '${fallback}') }}`;
  return yamlText(
    {
      [PROFILE_NAME]: {
        target: 'warehouse',
        outputs: {
          warehouse: {
            type: 'postgres',
            host: env(PROFILE_ENV.host),
            port: `{{ env_var('${PROFILE_ENV.port}', '5432') | as_number }}`,
            user: env(PROFILE_ENV.user),
            password: env(PROFILE_ENV.password),
            dbname: env(PROFILE_ENV.dbname),
            schema: env(PROFILE_ENV.schema, 'ddsync_dbt'),
            sslmode: env(PROFILE_ENV.sslmode, 'prefer'),
            threads: 4,
          },
        },
      },
    },
    ` Connects with what the environment says, never with a value written here (no secret is in this file).\n Use a login in the read-only role ddsync_reader: sources are read, never written.\n ${PROFILE_ENV.password} starts with DBT_ENV_SECRET_, so dbt keeps it out of its logs.`,
  );
}

function readme(
  catalog: WarehouseCatalog,
  relations: CatalogRelation[],
  tests: Map<string, RelationTests>,
  fresh: Set<string>,
  summary: DbtPackage['summary'],
  options: PackageOptions,
): string {
  const { warnAfter, errorAfter } = freshnessThresholds(options.refreshIntervalMs);
  const age = (a: FreshnessAge) => `${a.count} ${a.period}${a.count === 1 ? '' : 's'}`;
  const rows = relations.map((r) => {
    const t = tests.get(r.name)!;
    const n = t.rows.length + [...t.columns.values()].reduce((s, l) => s + l.length, 0);
    return `| \`${r.name}\` | ${r.kind} | ${fresh.has(r.name) ? 'yes' : 'no'} | ${n} |`;
  });
  const skipped =
    summary.skipped.length > 0
      ? `\nLeft out (their names are not plain lower-case identifiers): ${summary.skipped.map((s) => `\`${s.relation}\``).join(', ')}.\n`
      : '';
  return `# ${PACKAGE_NAME}: dbt sources for the ddsync warehouse

Written by \`ddsync dbt\` from the warehouse's own catalog (schema \`${catalog.schema}\`, migrated to
\`${catalog.migrations.at(-1) ?? 'none'}\`): every table and view with its \`COMMENT ON\` text as its
description, data tests derived from the schema, and source freshness on the time of the last
successful refresh. Do not edit it: run \`ddsync dbt --out <this folder>\` again after upgrading ddsync.

## Use it

Standalone, from this folder (the profile reads the connection from the environment only):

\`\`\`sh
export ${PROFILE_ENV.host}=db.example.com ${PROFILE_ENV.dbname}=ddsync ${PROFILE_ENV.user}=metabase
export ${PROFILE_ENV.password}=…   # a login in the read-only role ddsync_reader
dbt parse --profiles-dir .
dbt test --profiles-dir .
dbt source freshness --profiles-dir .
\`\`\`

In your own dbt project, as a package (\`packages.yml\`), then \`dbt deps\`:

\`\`\`yaml
packages:
  - local: path/to/this/folder
\`\`\`

and select from \`{{ source('${SOURCE_NAME}', 'bi_current_plots') }}\`. Variables your project may set:
\`${SOURCE_NAME}_database\` (default: the target's), \`${SOURCE_NAME}_schema\` (default \`${catalog.schema}\`),
\`${SOURCE_NAME}_<table>_identifier\` (a table or view under another name), \`${SOURCE_NAME}_sources_enabled\`
(false leaves the sources out).

## Tests

${summary.tests} tests, dbt's built-in generic ones only (no other package to install). Each says where it comes
from in its description: a primary key, a unique constraint or index, a foreign key, a CHECK, the values
ddsync writes, a key or reference stated by ddsync (views have no constraints), or a table column a view
passes through. The known values of the statuses the views normalise are tested with severity \`warn\`:
the service may add a status, which ddsync keeps.

## Freshness

Warn after ${age(warnAfter)}, error after ${age(errorAfter)} (two and four refresh intervals), on the
tables and views a refresh keeps current: each is as fresh as the last successful refresh
(\`sync_runs\`), since ddsync rewrites a row only when its content changes. Override a table's thresholds in your project's \`dbt_project.yml\`:
\`sources: { ${PACKAGE_NAME}: { ${SOURCE_NAME}: { plots: { +freshness: { warn_after: …, error_after: … } } } } }\`
(it replaces the whole block; set above the tables, it gives freshness to those left without it too).

| Relation | Kind | Freshness | Tests |
|---|---|---|---|
${rows.join('\n')}
${skipped}`;
}

/** The package's files and what they hold. */
export function buildDbtPackage(catalog: WarehouseCatalog, options: PackageOptions): DbtPackage {
  const skipped = catalog.relations
    .filter((r) => !PLAIN_NAME.test(r.name))
    .map((r) => ({ relation: r.name, reason: 'its name is not a plain lower-case identifier' }));
  // By name, compared by code point: the same relations give the same file whatever order they came in.
  const relations = catalog.relations
    .filter((r) => PLAIN_NAME.test(r.name))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const kept = { ...catalog, relations };
  const tests = deriveDataTests(kept);
  const fresh = refreshedRelations(kept);
  const summary = {
    sources: 1,
    tables: relations.filter((r) => r.kind === 'table').length,
    views: relations.filter((r) => r.kind === 'view').length,
    tests: countDataTests(tests),
    freshness: relations.filter((r) => fresh.has(r.name)).length,
    skipped,
  };
  return {
    files: [
      { path: '.gitignore', content: 'target/\nlogs/\ndbt_packages/\n' },
      { path: 'README.md', content: readme(kept, relations, tests, fresh, summary, options) },
      { path: 'dbt_project.yml', content: projectFile(options) },
      { path: SOURCES_FILE, content: sourcesFile(kept, relations, tests, fresh, options) },
      { path: 'profiles.yml', content: profileFile() },
    ],
    summary,
  };
}
