import { statSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { connectWarehouse } from '../../infra/warehouse-connection.ts';
import { loadConfig } from '../../platform/config.ts';
import { migrateToLatest } from '../../warehouse/migrate.ts';
import { plotFeature, splitFeatures, type Feature } from '../../domain/eudr/eu-geojson.ts';
import { acceptedRowComponents, plotsOfSuppliers } from '../../warehouse/export/statement-plots.ts';
import { printable } from '../../domain/submission/printable.ts';
import { UsageError } from '../usage.ts';

/** The flags as commander hands them over. */
export interface ExportFlags {
  supplier?: string;
  batch?: string;
  key?: string;
  out?: string;
  json?: boolean;
  /** Tests only: a smaller limit than the EU's 25 MB, to see the split without 25 MB of plots. */
  limitBytes?: number;
}

type Target = { supplierId: string } | { batchId: string; key: string };

const PRINTABLE_ID = /^[^\u0000-\u001f\u007f]{1,255}$/;

/** Checks the flags before anything connects: each mistake names the flag and the rule. */
export function checkExportFlags(o: ExportFlags): { target: Target; outDir: string } {
  const outDir = resolve(o.out ?? '.');
  let isFile = false;
  try {
    isFile = !statSync(outDir).isDirectory();
  } catch {
    // created when the files are written
  }
  if (isFile) throw new UsageError(`--out must be a folder (or a path to create one), got a file: "${o.out}"`);
  if (o.supplier !== undefined && (o.batch !== undefined || o.key !== undefined))
    throw new UsageError('--supplier goes alone: give either --supplier ID or --batch ID --key KEY');
  if (o.supplier !== undefined) {
    if (!PRINTABLE_ID.test(o.supplier.trim()))
      throw new UsageError('--supplier must be a supplier business id: 1 to 255 printable characters');
    return { target: { supplierId: o.supplier.trim() }, outDir };
  }
  if (o.batch === undefined && o.key === undefined)
    throw new UsageError('give either --supplier ID or --batch ID --key KEY');
  if (o.batch === undefined) throw new UsageError('--key goes with --batch: give --batch ID too');
  if (o.key === undefined) throw new UsageError('--batch needs --key: the key of a row of that batch');
  if (!PRINTABLE_ID.test(o.key)) throw new UsageError('--key must be a row key: 1 to 255 printable characters');
  return { target: { batchId: o.batch, key: o.key }, outDir };
}

export async function run(o: ExportFlags): Promise<number> {
  const { target, outDir } = checkExportFlags(o);
  const config = loadConfig(['database']);
  const db = await connectWarehouse(config.database!, 2, 'ddsync-export', 'long');
  try {
    await migrateToLatest(db);
    let plots: Awaited<ReturnType<typeof plotsOfSuppliers>>;
    let name: string;
    if ('supplierId' in target) {
      plots = await plotsOfSuppliers(db, [target.supplierId]);
      name = `supplier-${target.supplierId}`;
    } else {
      const components = await acceptedRowComponents(db, target.batchId, target.key);
      if (!components) {
        process.stderr.write(
          `ddsync export geojson: batch ${target.batchId} has no accepted row with key ${JSON.stringify(printable(target.key))}\n`,
        );
        return 1;
      }
      const all = await plotsOfSuppliers(db, [...new Set(components.flatMap((c) => c.supplierIds))]);
      // A component brings its suppliers' plots, or the ones it names.
      plots = all.filter((p) =>
        components.some((c) => c.supplierIds.includes(p.supplierId) && (!c.plotIds || c.plotIds.includes(p.id))),
      );
      name = `${target.batchId}-${target.key}`.replace(/[^A-Za-z0-9._-]/g, '_');
    }
    // A plot reached through two suppliers is carried once.
    const seen = new Set<string>();
    const features: Array<{ plotId: string; feature: Feature }> = [];
    const skipped: Array<{ plotId: string; reason: string }> = [];
    for (const p of plots) {
      if (seen.has(p.id)) continue;
      seen.add(p.id);
      const f = plotFeature(p);
      if (f.ok) features.push({ plotId: p.id, feature: f.feature });
      else skipped.push({ plotId: f.plotId, reason: f.reason });
    }
    if (plots.length === 0) {
      process.stderr.write(
        `ddsync export geojson: the warehouse has no plots for ${'supplierId' in target ? `supplier ${printable(target.supplierId)}` : `row ${printable(target.key)}`} (run ddsync refresh, or check the id)\n`,
      );
      return 1;
    }
    const files = splitFeatures(features, o.limitBytes);
    await mkdir(outDir, { recursive: true });
    const written = [];
    for (const [i, f] of files.entries()) {
      const path = resolve(
        outDir,
        files.length === 1 ? `${name}.geojson` : `${name}-${i + 1}-of-${files.length}.geojson`,
      );
      await writeFile(path, f.text);
      written.push({ path, plots: f.plotIds, bytes: f.bytes, base64Bytes: f.base64Bytes, overLimit: f.overLimit });
    }
    if (o.json) process.stdout.write(`${JSON.stringify({ files: written, skipped })}\n`);
    else {
      for (const w of written)
        process.stdout.write(
          `${w.path}: ${w.plots.length} plot(s), ${(w.base64Bytes / 1e6).toFixed(2)} MB as base64${w.overLimit ? ' (one plot alone passes the limit)' : ''}: ${w.plots.join(', ')}\n`,
        );
      for (const s of skipped) process.stdout.write(`not written: plot ${s.plotId}: ${s.reason}\n`);
    }
    return skipped.length > 0 || written.some((w) => w.overLimit) ? 1 : 0;
  } finally {
    await db.destroy();
  }
}
