import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';

/**
 * The import graph of ddsync's own sources, read from the files (no compiler): every relative
 * import, export-from and dynamic import, with whether it is type-only (erased at run time).
 */
export interface ImportEdge {
  from: string;
  to: string;
  typeOnly: boolean;
}

const SPECIFIER =
  /(?:^|[\s;])(import|export)\s+(type\s+)?([^'";]*?)\s*from\s*['"](\.{1,2}\/[^'"]+)['"]|import\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)|^\s*import\s+['"](\.{1,2}\/[^'"]+)['"]/gm;

/** Whether `import { type A, type B } from` names only types (so the import is erased). */
function onlyTypeNames(clause: string): boolean {
  const braces = /^\{([^}]*)\}$/.exec(clause.trim());
  if (!braces) return false;
  const names = braces[1]!
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean);
  return names.length > 0 && names.every((n) => n.startsWith('type '));
}

/** Packages the domain's pure rules may use: computation only, no file, network, database or clock of their own. */
export const PURE_PACKAGES = [/^@turf\//, /^zod$/, /^flatbush$/];

/**
 * The packages a file imports that do I/O or are not known to be pure: every bare specifier (a
 * package or a node: builtin) that PURE_PACKAGES does not name, as "file -> package" lines.
 */
export function ioImports(root: string, file: string): string[] {
  const text = readFileSync(join(root, file), 'utf8');
  const bare =
    /(?:^|[\s;])(?:import|export)\s+(?:type\s+)?[^'";]*?\s*from\s*['"]([^.'"][^'"]*)['"]|import\(\s*['"]([^.'"][^'"]*)['"]\s*\)|^\s*import\s+['"]([^.'"][^'"]*)['"]/gm;
  const out: string[] = [];
  for (const m of text.matchAll(bare)) {
    const spec = m[1] ?? m[2] ?? m[3]!;
    if (!PURE_PACKAGES.some((p) => p.test(spec))) out.push(`${file} -> ${spec}`);
  }
  return out;
}

/** Packages that speak SQL to Postgres (kysely's `sql` and query builder, pg, pg-copy-streams). */
export const SQL_PACKAGES = [/^kysely([-/]|$)/, /^pg([-/]|$)/];

/** Where SQL may be written: the warehouse layer, and the developer tooling (table types, migration release). */
const SQL_LAYERS = ['warehouse', 'tools'];

/**
 * Every SQL statement lives under warehouse/: the value imports of a SQL package (SQL_PACKAGES) in a
 * file of any other layer, as "file -> package" lines. A type-only import (`import type { Kysely }`,
 * `import { type ColumnType }`, `export type … from`) is erased at run time and runs no statement, so
 * it is allowed where a signature needs it.
 */
export function sqlImports(root: string, file: string): string[] {
  if (SQL_LAYERS.includes(layerOf(file))) return [];
  const text = readFileSync(join(root, file), 'utf8');
  const bare =
    /(?:^|[\s;])(?:import|export)\s+(type\s+)?([^'";]*?)\s*from\s*['"]([^.'"][^'"]*)['"]|import\(\s*['"]([^.'"][^'"]*)['"]\s*\)|^\s*import\s+['"]([^.'"][^'"]*)['"]/gm;
  const out: string[] = [];
  for (const m of text.matchAll(bare)) {
    const spec = m[3] ?? m[4] ?? m[5]!;
    if (!SQL_PACKAGES.some((p) => p.test(spec))) continue;
    const typeOnly = m[3] !== undefined && (m[1] !== undefined || onlyTypeNames(m[2] ?? ''));
    if (!typeOnly) out.push(`${file} -> ${spec}`);
  }
  return out;
}

export function importsOf(root: string, file: string): ImportEdge[] {
  const text = readFileSync(join(root, file), 'utf8');
  const edges: ImportEdge[] = [];
  for (const m of text.matchAll(SPECIFIER)) {
    const spec = m[4] ?? m[5] ?? m[6]!;
    const typeOnly = m[4] !== undefined && (m[2] !== undefined || onlyTypeNames(m[3] ?? ''));
    edges.push({ from: file, to: normalize(join(dirname(file), spec)), typeOnly });
  }
  return edges;
}

export function sourceFiles(root: string, folders: readonly string[]): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(join(root, dir))) {
      const path = join(dir, entry);
      if (statSync(join(root, path)).isDirectory()) walk(path);
      else if (/\.(ts|mts|js)$/.test(entry)) out.push(path);
    }
  };
  for (const f of folders) walk(f);
  return out.sort();
}

/** Strongly connected components of more than one file (import circles), by Tarjan's algorithm. */
export function circles(edges: readonly ImportEdge[]): string[][] {
  const next = new Map<string, string[]>();
  for (const e of edges) next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
  let index = 0;
  const indices = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    indices.set(v, index);
    low.set(v, index++);
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!indices.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, indices.get(w)!));
    }
    if (low.get(v) === indices.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const v of next.keys()) if (!indices.has(v)) visit(v);
  return found;
}

export const relativeTo = (root: string, path: string) => relative(root, path);

/**
 * The house's layers, from the top: a layer imports only from layers below it (to its right in
 * `tools → cli → infra → workflows → activities → upstream | warehouse → domain → schema → platform`). The
 * developer tooling (build, table types, migration release) may import any of the product, and
 * nothing of the product imports it. Workflows import activities as types only (workflow code is
 * bundled apart and must stay deterministic);
 * upstream and warehouse are siblings, neither imports the other; the simulator, a stand-in for the
 * service, imports only schema and platform, and only the CLI and process assembly start it; the
 * report (the HTML page of `ddsync report`) imports warehouse, domain, schema and platform, and only
 * the CLI imports it. The domain's pure rules (EUDR checks, geometry quality, shipment rules, ids)
 * sit below every layer that does I/O and import none (`ioImports`).
 */
export const LAYERS = [
  'tools',
  'cli',
  'infra',
  'report',
  'workflows',
  'activities',
  'upstream',
  'warehouse',
  'domain',
  'schema',
  'platform',
  'simulator',
] as const;
const RANK: Record<string, number> = {
  cli: 0,
  infra: 1,
  workflows: 2,
  activities: 3,
  upstream: 4,
  warehouse: 4,
  domain: 5,
  schema: 6,
  platform: 7,
};

export const layerOf = (path: string): string => path.split('/')[0]!;

/** The imports that run against the layers, as "from -> to" lines. */
export function layerViolations(edges: readonly ImportEdge[]): string[] {
  const bad: string[] = [];
  for (const e of edges) {
    const a = layerOf(e.from);
    const b = layerOf(e.to);
    if (a === b) continue;
    let ok: boolean;
    // Developer tooling sits above the product: it uses any of it; the product never imports it.
    if (a === 'tools') ok = b in RANK || b === 'report' || b === 'simulator';
    else if (b === 'tools') ok = false;
    else if (a === 'simulator') ok = b === 'schema' || b === 'platform';
    // The report reads the warehouse and draws a page: it imports warehouse, schema and platform, and
    // only the CLI imports it.
    else if (a === 'report') ok = b === 'warehouse' || b === 'domain' || b === 'schema' || b === 'platform';
    else if (b === 'report') ok = a === 'cli';
    else if (b === 'simulator') ok = a === 'cli' || a === 'infra';
    else if (RANK[a] === undefined || RANK[b] === undefined) ok = false;
    else if (a === 'workflows' && b === 'activities') ok = e.typeOnly;
    else ok = RANK[b]! > RANK[a]!;
    if (!ok) bad.push(`${e.from} -> ${e.to}${e.typeOnly ? ' (type only)' : ''}`);
  }
  return bad;
}
