import { NARROWED_COLUMNS } from '../../schema/database.ts';
import type { CatalogColumn, CatalogRelation, WarehouseCatalog } from './catalog.ts';
import { checkedValues } from './check-values.ts';
import { OPEN_VOCABULARIES, STATED_REFERENCES, VIEW_KEYS } from './stated-facts.ts';

// The data tests of each table and view, derived from the catalog: no I/O. Each test says where it
// comes from (`why`), and is true of every warehouse ddsync writes (docs/dbt.md says why, kind by kind):
// - keys: not_null on each primary-key column, unique on the key (on the row of its columns when there
//   are several) and on every unique constraint or unique index (a partial one with its predicate);
// - references: relationships for each foreign key and each stated reference (stated-facts.ts), with
//   not_null when the column is declared not null;
// - values: accepted_values for a column a CHECK enumerates (or whose values ddsync alone writes,
//   NARROWED_COLUMNS in schema/database.ts), and, warning only, for the statuses the views normalise;
// - views: their stated keys, and the value tests (accepted_values, relationships) of the table column
//   a view column passes through unchanged: its values are that column's, or null, which neither
//   test counts. Key tests never pass through a view: a join may repeat a row or add nulls.

export type DataTest =
  | { test: 'not_null'; why: string }
  | { test: 'unique'; where: string | null; why: string }
  | { test: 'accepted_values'; values: string[]; severity: 'error' | 'warn'; why: string }
  | { test: 'relationships'; to: string; field: string; why: string };

/** A test of a relation over several columns: unique on the row of them. */
export interface RowTest {
  test: 'unique';
  columns: string[];
  where: string | null;
  why: string;
}

export interface RelationTests {
  /** By column name; a column without tests is absent. */
  columns: Map<string, DataTest[]>;
  rows: RowTest[];
}

const split = (path: string) => {
  const dot = path.indexOf('.');
  return { relation: path.slice(0, dot), column: path.slice(dot + 1) };
};

/** The values a table column may hold: its CHECK's, else those ddsync alone writes; null when open. */
function closedValues(relation: CatalogRelation, column: CatalogColumn): { values: string[]; why: string } | null {
  for (const check of relation.checks) {
    if (check.columns.length !== 1 || check.columns[0] !== column.name) continue;
    const values = checkedValues(check.definition, column.name);
    if (values) return { values, why: `CHECK ${check.name}` };
  }
  const written = (NARROWED_COLUMNS as Record<string, readonly string[]>)[`${relation.name}.${column.name}`];
  return written
    ? { values: [...written], why: 'the values ddsync writes (NARROWED_COLUMNS, schema/database.ts)' }
    : null;
}

/** Tests of a table column that hold for its values wherever they are copied: accepted values, references. */
function valueTests(catalog: WarehouseCatalog, relation: CatalogRelation, column: CatalogColumn): DataTest[] {
  const tests: DataTest[] = [];
  const closed = closedValues(relation, column);
  if (closed) tests.push({ test: 'accepted_values', values: closed.values, severity: 'error', why: closed.why });
  for (const fk of relation.foreignKeys) {
    if (fk.columns.length === 1 && fk.columns[0] === column.name)
      tests.push({
        test: 'relationships',
        to: fk.references.relation,
        field: fk.references.columns[0]!,
        why: `foreign key ${fk.name}`,
      });
  }
  for (const ref of STATED_REFERENCES) {
    const from = split(ref.from);
    const to = split(ref.to);
    if (from.relation !== relation.name || from.column !== column.name) continue;
    if (!catalog.relations.some((r) => r.name === to.relation && r.columns.some((c) => c.name === to.column))) continue;
    tests.push({ test: 'relationships', to: to.relation, field: to.column, why: `stated reference: ${ref.why}` });
  }
  return tests;
}

function add(map: Map<string, DataTest[]>, column: string, test: DataTest): void {
  const list = map.get(column) ?? [];
  // The same test twice (a unique constraint on the primary key, say) would be one test named twice.
  const same = (t: DataTest) => JSON.stringify({ ...t, why: '' }) === JSON.stringify({ ...test, why: '' });
  if (!list.some(same)) list.push(test);
  map.set(column, list);
}

function tableTests(catalog: WarehouseCatalog, relation: CatalogRelation): RelationTests {
  const columns = new Map<string, DataTest[]>();
  const rows: RowTest[] = [];
  const pk = relation.primaryKey?.columns;
  const declaredNotNull = new Set(relation.columns.filter((c) => c.notNull).map((c) => c.name));
  if (pk) {
    const why = `primary key ${relation.primaryKey!.name}`;
    for (const c of pk) add(columns, c, { test: 'not_null', why });
    if (pk.length === 1) add(columns, pk[0]!, { test: 'unique', where: null, why });
    else rows.push({ test: 'unique', columns: pk, where: null, why });
  }
  for (const u of relation.uniques) {
    const samePk = pk && u.predicate === null && u.columns.join() === pk.join();
    if (samePk) continue;
    const why = u.predicate ? `unique index ${u.name} (where ${u.predicate})` : `unique ${u.name}`;
    if (u.columns.length === 1) add(columns, u.columns[0]!, { test: 'unique', where: u.predicate, why });
    else rows.push({ test: 'unique', columns: u.columns, where: u.predicate, why });
  }
  for (const column of relation.columns) {
    const tests = valueTests(catalog, relation, column);
    // A reference that is a key: its column is declared not null too (a nullable one may be absent).
    if (tests.some((t) => t.test === 'relationships') && declaredNotNull.has(column.name))
      add(columns, column.name, { test: 'not_null', why: 'a reference declared not null' });
    for (const t of tests) add(columns, column.name, t);
  }
  return { columns, rows };
}

function viewTests(
  catalog: WarehouseCatalog,
  relation: CatalogRelation,
  tables: Map<string, RelationTests>,
): RelationTests {
  const columns = new Map<string, DataTest[]>();
  const rows: RowTest[] = [];
  for (const key of VIEW_KEYS.filter((k) => k.view === relation.name)) {
    for (const c of key.notNull) add(columns, c, { test: 'not_null', why: `stated key: ${key.why}` });
    if (key.columns.length === 1)
      add(columns, key.columns[0]!, { test: 'unique', where: null, why: `stated key: ${key.why}` });
    else rows.push({ test: 'unique', columns: key.columns, where: null, why: `stated key: ${key.why}` });
  }
  for (const column of relation.columns) {
    const origin = column.origin;
    if (origin) {
      const passed = tables.get(origin.relation)?.columns.get(origin.column) ?? [];
      for (const t of passed)
        if (t.test === 'accepted_values' || t.test === 'relationships')
          add(columns, column.name, {
            ...t,
            why: `passed through from ${origin.relation}.${origin.column} (${t.why})`,
          });
    }
    for (const vocabulary of OPEN_VOCABULARIES) {
      if (!vocabulary.columns.includes(`${relation.name}.${column.name}`)) continue;
      const values = [...new Set(vocabulary.values.map((v) => catalog.normalised[v] ?? null))].filter(
        (v): v is string => v !== null,
      );
      add(columns, column.name, {
        test: 'accepted_values',
        values,
        severity: 'warn',
        why: 'the known values of a status the view normalises; the service may add one, which is kept: a warning to look at',
      });
    }
  }
  return { columns, rows };
}

/** The tests of every relation of the catalog, by relation name. */
export function deriveDataTests(catalog: WarehouseCatalog): Map<string, RelationTests> {
  const tests = new Map<string, RelationTests>();
  for (const r of catalog.relations) if (r.kind === 'table') tests.set(r.name, tableTests(catalog, r));
  for (const r of catalog.relations) if (r.kind === 'view') tests.set(r.name, viewTests(catalog, r, tests));
  return tests;
}

/** How many tests dbt will run for these. */
export function countDataTests(tests: Map<string, RelationTests>): number {
  let n = 0;
  for (const t of tests.values()) {
    n += t.rows.length;
    for (const list of t.columns.values()) n += list.length;
  }
  return n;
}
