import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { sql, type Kysely } from 'kysely';
import { packagePath } from '../platform/package-root.ts';

/**
 * The analyst views, kept as code: one file per view (`sql/views/<name>.sql`: its `create view`, its
 * comments and its grant), applied after the migrations by migrateToLatest in the migrations'
 * transaction. A view is re-created when its file differs from what the warehouse recorded
 * (view_checksums, migration 0027) or the view is missing, and so is every view that uses it; a view
 * whose file is gone is dropped. docs/development.md, "Views".
 */
export const VIEWS_DIR = packagePath('sql', 'views');
const VIEW_FILE = /^([a-z][a-z0-9_]*)\.sql$/;

export interface ViewFile {
  /** `bi_current_plots.sql` */
  file: string;
  /** `bi_current_plots`: the view the file creates. */
  name: string;
  /** Of the file's text with its line endings as \n: a checkout that converts them changes no view. */
  sha256: string;
  text: string;
  /** The other views of the folder its SQL names (comments and string literals left out), sorted. */
  uses: string[];
}

export class ViewFileError extends Error {
  override name = 'ViewFileError';
}

/** The SQL without its comments and string literals (each replaced by a space): what remains names relations. */
export function codeOf(text: string): string {
  return text.replace(/--[^\n]*|\/\*[\s\S]*?\*\/|'(?:[^']|'')*'/g, ' ');
}

/** The view files of a folder, read and checked: each creates the view it is named after, and no other. */
export async function readViewFiles(dir = VIEWS_DIR): Promise<ViewFile[]> {
  const names = (await readdir(dir)).filter((f) => f.endsWith('.sql')).sort();
  const read = await Promise.all(names.map(async (file) => ({ file, text: await readFile(join(dir, file), 'utf8') })));
  return viewFiles(read);
}

/** Checks the files and finds which views each one uses. */
export function viewFiles(read: ReadonlyArray<{ file: string; text: string }>): ViewFile[] {
  const names = new Set<string>();
  for (const { file } of read) {
    const m = VIEW_FILE.exec(file);
    if (!m) throw new ViewFileError(`sql/views/${file}: a view file is named <view>.sql, in lower case (a-z, 0-9, _)`);
    names.add(m[1]!);
  }
  return read.map(({ file, text: asRead }) => {
    const text = asRead.replace(/\r\n/g, '\n');
    const name = file.replace(/\.sql$/, '');
    const code = codeOf(text);
    const created = [...code.matchAll(/\bcreate\s+(?:or\s+replace\s+)?(?:temp(?:orary)?\s+)?view\s+("?)(\w+)\1/gi)].map(
      (m) => m[2]!,
    );
    if (created.length !== 1 || created[0] !== name)
      throw new ViewFileError(
        `sql/views/${file} must create the view ${name} and no other (create view ${name} as …); it creates ${created.length === 0 ? 'none' : created.join(', ')}`,
      );
    const words = new Set(code.toLowerCase().match(/\w+/g) ?? []);
    const uses = [...names].filter((other) => other !== name && words.has(other)).sort();
    return {
      file,
      name,
      sha256: createHash('sha256').update(text).digest('hex'),
      text,
      uses,
    };
  });
}

/** The files in an order that creates each view after the views it uses (by name where free to choose). */
export function inDependencyOrder(files: readonly ViewFile[]): ViewFile[] {
  const byName = new Map(files.map((f) => [f.name, f]));
  const done = new Set<string>();
  const visiting: string[] = [];
  const ordered: ViewFile[] = [];
  const visit = (f: ViewFile) => {
    if (done.has(f.name)) return;
    const at = visiting.indexOf(f.name);
    if (at >= 0)
      throw new ViewFileError(
        `the views in sql/views use each other in a circle: ${[...visiting.slice(at), f.name].join(' → ')}`,
      );
    visiting.push(f.name);
    for (const used of f.uses) visit(byName.get(used)!);
    visiting.pop();
    done.add(f.name);
    ordered.push(f);
  };
  for (const f of [...files].sort((a, b) => a.name.localeCompare(b.name))) visit(f);
  return ordered;
}

/**
 * The views to re-create: those whose file differs from what the warehouse recorded or that are
 * missing, and every view that uses one of them or one whose file is gone, as the files say and as
 * the warehouse has it (`dependencies`: view → a view it uses).
 */
export function viewsToRecreate(
  files: readonly ViewFile[],
  recorded: ReadonlyMap<string, string>,
  present: ReadonlySet<string>,
  dependencies: ReadonlyArray<{ view: string; uses: string }>,
): Set<string> {
  const managed = new Set(files.map((f) => f.name));
  const gone = [...recorded.keys()].filter((name) => !managed.has(name));
  const stale = new Set(
    files.filter((f) => recorded.get(f.name) !== f.sha256 || !present.has(f.name)).map((f) => f.name),
  );
  const changing = new Set([...stale, ...gone]);
  const uses = [...files.flatMap((f) => f.uses.map((u) => ({ view: f.name, uses: u }))), ...dependencies];
  for (let grew = true; grew; ) {
    grew = false;
    for (const d of uses)
      if (managed.has(d.view) && !changing.has(d.view) && changing.has(d.uses)) {
        changing.add(d.view);
        stale.add(d.view);
        grew = true;
      }
  }
  return stale;
}

/** Postgres's SQLSTATE when a drop would take objects that depend on it along. */
const DEPENDENT_OBJECTS_STILL_EXIST = '2BP01';

/**
 * Brings the warehouse's views to what the files say, in the caller's transaction (the migrations'):
 * drops the views to re-create and those whose file is gone in one statement, creates them again in
 * dependency order and records their checksums. Returns the views created, in the order created.
 */
// biome-ignore lint/suspicious/noExplicitAny: runs on any schema, inside the migrator's transaction
export async function applyViews(trx: Kysely<any>, files: readonly ViewFile[]): Promise<string[]> {
  const ordered = inDependencyOrder(files);
  const {
    rows: [table],
  } = await sql<{ present: boolean }>`select to_regclass('view_checksums') is not null as present`.execute(trx);
  if (!table?.present)
    throw new ViewFileError(
      'the views of sql/views are applied after migration 0027_view_checksums, which this warehouse lacks',
    );
  const recorded = new Map(
    (await sql<{ name: string; sha256: string }>`select name, sha256 from view_checksums`.execute(trx)).rows.map(
      (r) => [r.name, r.sha256],
    ),
  );
  const present = new Set(
    (
      await sql<{ name: string }>`select viewname as name from pg_views where schemaname = current_schema()`.execute(
        trx,
      )
    ).rows.map((r) => r.name),
  );
  // Which view uses which, as the warehouse has it (a view's rewrite rule depends on the relations it reads).
  const { rows: dependencies } = await sql<{ view: string; uses: string }>`
    select distinct v.relname as view, u.relname as uses
    from pg_depend d
    join pg_rewrite r on r.oid = d.objid
    join pg_class v on v.oid = r.ev_class
    join pg_class u on u.oid = d.refobjid
    where d.classid = 'pg_rewrite'::regclass and d.refclassid = 'pg_class'::regclass
      and v.oid <> u.oid and u.relkind = 'v'
      and u.relnamespace = current_schema()::regnamespace`.execute(trx);
  const stale = viewsToRecreate(files, recorded, present, dependencies);
  const managed = new Set(files.map((f) => f.name));
  const gone = [...recorded.keys()].filter((name) => !managed.has(name)).sort();
  const drop = [...stale, ...gone].filter((name) => present.has(name)).sort();
  if (drop.length > 0) {
    try {
      await sql`drop view ${sql.join(drop.map((name) => sql.id(name)))}`.execute(trx);
    } catch (error) {
      const e = error as { code?: string; message?: string; detail?: string };
      if (e.code !== DEPENDENT_OBJECTS_STILL_EXIST) throw error;
      throw new ViewFileError(
        `the views ${drop.join(', ')} are to be made again from sql/views, but objects outside sql/views use them (${(e.detail ?? e.message ?? '').replace(/\n/g, '; ')}): drop those, migrate, and create them again`,
      );
    }
  }
  const created: string[] = [];
  for (const f of ordered.filter((v) => stale.has(v.name))) {
    try {
      await sql.raw(f.text).execute(trx);
    } catch (error) {
      throw new ViewFileError(`sql/views/${f.file} failed: ${error instanceof Error ? error.message : String(error)}`);
    }
    created.push(f.name);
  }
  if (created.length > 0) {
    const sha256 = created.map((name) => files.find((f) => f.name === name)!.sha256);
    await sql`
      insert into view_checksums (name, sha256)
      select * from unnest(${created}::text[], ${sha256}::text[])
      on conflict (name) do update set sha256 = excluded.sha256, applied_at = now()`.execute(trx);
  }
  if (gone.length > 0) await sql`delete from view_checksums where name = any(${gone}::text[])`.execute(trx);
  return created;
}
