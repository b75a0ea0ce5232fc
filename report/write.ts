import { mkdir, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Warehouse } from '../warehouse/database.ts';
import {
  readReportHeader,
  readReportPlots,
  readReportSuppliers,
  supplierExists,
} from '../warehouse/report/read-report.ts';
import { readReportAssets } from './assets.ts';
import { type ReportModel, ReportModelBuilder } from './model.ts';
import { renderReport } from './render.ts';

// `ddsync report` and the demo: read the warehouse, draw the page, write the file. The reading is
// warehouse/report/, the drawing report/render.ts; this only joins them.

/** --supplier names a business the warehouse has no supplier row for. */
export class UnknownSupplierError extends Error {
  override name = 'UnknownSupplierError';
}

export async function collectReport(db: Warehouse, supplierId?: string, now = new Date()): Promise<ReportModel> {
  if (supplierId !== undefined && !(await supplierExists(db, supplierId)))
    throw new UnknownSupplierError(
      `--supplier: no supplier with business id "${supplierId}" in the warehouse (bi_eudr_supplier_readiness lists them)`,
    );
  const [header, supplierRows] = await Promise.all([readReportHeader(db), readReportSuppliers(db, supplierId)]);
  const names = new Map(supplierRows.map((s) => [s.supplierId, s.supplierName]));
  // With --supplier, a plot's other suppliers are named too.
  if (supplierId !== undefined)
    for (const s of await readReportSuppliers(db))
      if (!names.has(s.supplierId)) names.set(s.supplierId, s.supplierName);
  const builder = new ReportModelBuilder(names);
  await readReportPlots(db, supplierId, (page) => builder.add(page));
  const only = supplierRows[0];
  return builder.finish({
    generatedAt: now,
    header,
    supplierRows,
    supplier: supplierId === undefined || !only ? null : { id: only.supplierId, name: only.supplierName },
  });
}

/** The file name: one per supplier filter, so reports of several suppliers sit side by side. */
export function reportFileName(supplierId?: string): string {
  return supplierId === undefined
    ? 'ddsync-report.html'
    : `ddsync-report-${supplierId.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 80)}.html`;
}

export interface WrittenReport {
  path: string;
  bytes: number;
  model: ReportModel;
}

export async function writeReport(
  db: Warehouse,
  options: { outDir: string; supplierId?: string; fileName?: string },
): Promise<WrittenReport> {
  const [model, assets] = await Promise.all([collectReport(db, options.supplierId), readReportAssets()]);
  const html = renderReport(model, assets);
  await mkdir(options.outDir, { recursive: true });
  const path = resolve(options.outDir, options.fileName ?? reportFileName(options.supplierId));
  await writeFile(path, html);
  return { path, bytes: Buffer.byteLength(html), model };
}
