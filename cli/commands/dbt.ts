import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { connectWarehouse } from '../../infra/warehouse-connection.ts';
import { durationMs, loadConfig } from '../../platform/config.ts';
import { packagePath } from '../../platform/package-root.ts';
import { readWarehouseCatalog, type WarehouseCatalog } from '../../warehouse/dbt/catalog.ts';
import { buildDbtPackage, type PackageFile } from '../../warehouse/dbt/package.ts';
import { openVocabularyValues } from '../../warehouse/dbt/stated-facts.ts';
import { readMigrationFiles } from '../../warehouse/migrate.ts';
import { UsageError } from '../usage.ts';

/** The flags as commander hands them over. */
export interface DbtFlags {
  out: string;
  json?: boolean;
}

/** Checks the flags before anything connects: --out is a folder, or a path to create one. */
export function checkDbtFlags(o: DbtFlags): { outDir: string } {
  const outDir = resolve(o.out);
  let isFile = false;
  try {
    isFile = !statSync(outDir).isDirectory();
  } catch {
    // created when the package is written
  }
  if (isFile) throw new UsageError(`--out must be a folder (or a path to create one), got a file: "${o.out}"`);
  return { outDir };
}

/**
 * The package describes the schema it reads: a warehouse this ddsync has not migrated yet would give
 * sources without the newest tables and columns, which the next migration adds under the user's feet.
 */
async function refuseUnmigrated(catalog: WarehouseCatalog): Promise<void> {
  const applied = new Set(catalog.migrations);
  const pending = (await readMigrationFiles()).map((f) => f.name).filter((name) => !applied.has(name));
  if (pending.length > 0)
    throw new Error(
      `the warehouse has not applied ${pending.length} migration${pending.length === 1 ? '' : 's'} of this ddsync (${pending.join(', ')}): run ddsync migrate first, so the package describes the schema ddsync writes`,
    );
}

/** Each file whole or not at all: written beside its place, then moved there. */
function writePackage(outDir: string, files: PackageFile[]): void {
  for (const file of files) {
    const path = resolve(outDir, file.path);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(`${path}.tmp`, file.content);
    renameSync(`${path}.tmp`, path);
  }
}

export async function run(o: DbtFlags): Promise<number> {
  const { outDir } = checkDbtFlags(o);
  const config = loadConfig(['database', 'refresh']);
  const { version } = JSON.parse(readFileSync(packagePath('package.json'), 'utf8')) as { version: string };
  const db = await connectWarehouse(config.database!, 2, 'ddsync-dbt');
  try {
    const catalog = await readWarehouseCatalog(db, openVocabularyValues());
    await refuseUnmigrated(catalog);
    const { files, summary } = buildDbtPackage(catalog, {
      version,
      refreshIntervalMs: durationMs(config.refresh!.interval),
    });
    writePackage(outDir, files);
    if (o.json) {
      process.stdout.write(
        `${JSON.stringify({ path: outDir, files: files.map((f) => f.path), schema: catalog.schema, migration: catalog.migrations.at(-1) ?? null, ...summary })}\n`,
      );
    } else {
      const skipped =
        summary.skipped.length > 0 ? `; left out: ${summary.skipped.map((s) => s.relation).join(', ')}` : '';
      process.stderr.write(
        `dbt sources of schema ${catalog.schema}: ${summary.tables} tables, ${summary.views} views, ${summary.tests} tests, freshness on ${summary.freshness}${skipped}\n`,
      );
      process.stdout.write(`${outDir}\n`);
    }
    return 0;
  } finally {
    await db.destroy();
  }
}
