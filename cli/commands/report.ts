import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { connectWarehouse } from '../../infra/warehouse-connection.ts';
import { loadConfig } from '../../platform/config.ts';
import { UsageError } from '../usage.ts';
import { UnknownSupplierError, writeReport } from '../../report/write.ts';

/** The flags as commander hands them over. */
export interface ReportFlags {
  out: string;
  supplier?: string;
  json?: boolean;
}

/** Checks the flags before anything connects: each mistake names the flag and the rule. */
export function checkReportFlags(o: ReportFlags): { outDir: string; supplierId?: string } {
  const outDir = resolve(o.out);
  let kind: 'missing' | 'dir' | 'other' = 'missing';
  try {
    kind = statSync(outDir).isDirectory() ? 'dir' : 'other';
  } catch {
    // created when the report is written
  }
  if (kind === 'other')
    throw new UsageError(`--out must be a folder (or a path to create one), got a file: "${o.out}"`);
  if (o.supplier === undefined) return { outDir };
  const supplierId = o.supplier.trim();
  if (supplierId === '' || supplierId.length > 200 || /[\u0000-\u001f\u007f]/.test(supplierId))
    throw new UsageError('--supplier must be a supplier business id: 1 to 200 printable characters');
  return { outDir, supplierId };
}

export async function run(o: ReportFlags): Promise<number> {
  const flags = checkReportFlags(o);
  const config = loadConfig(['database']);
  const db = await connectWarehouse(config.database!, 2, 'ddsync-report', 'long');
  try {
    const report = await writeReport(db, flags);
    const t = report.model.totals;
    if (o.json)
      process.stdout.write(
        `${JSON.stringify({ report: report.path, bytes: report.bytes, plots: t.plots, plotsReady: t.ready, plotsNotReady: t.notReady, plotsUnknown: t.unknown, overlapChecked: report.model.overlapChecked })}\n`,
      );
    else {
      process.stderr.write(
        `${t.plots.toLocaleString('en-US')} plots: ${t.ready.toLocaleString('en-US')} ready, ${t.notReady.toLocaleString('en-US')} not ready${t.unknown ? `, ${t.unknown.toLocaleString('en-US')} unknown` : ''}; overlap check ${report.model.overlapChecked ? 'run' : 'not run (no PostGIS)'}; ${(report.bytes / 1e6).toFixed(1)} MB\n`,
      );
      process.stdout.write(`${report.path}\n`);
    }
    return 0;
  } catch (error) {
    if (error instanceof UnknownSupplierError) {
      process.stderr.write(`ddsync report: ${error.message}\n`);
      return 2;
    }
    // 42P01 undefined table, 42883 undefined function: a warehouse from before the readiness views;
    // 42703 undefined column: one from before their country risk columns (migration 0022).
    const code = (error as { code?: string }).code;
    if (code === '42P01' || code === '42883' || code === '42703')
      throw new Error(
        `the warehouse lacks the readiness views or their columns (${(error as Error).message}): run ddsync migrate, then a refresh`,
      );
    throw error;
  } finally {
    await db.destroy();
  }
}
