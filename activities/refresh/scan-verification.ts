import type { Warehouse } from '../../warehouse/database.ts';
import { hasMorePages, supplierPlotsPageIds, type RawPlotPage } from '../../upstream/index.ts';
import { presentIds } from '../../warehouse/refresh/plot-page.ts';
import {
  markedMissingLinks,
  scannedPageIds,
  scannedPages,
  unseenLinks,
  type ScannedPage,
  type VerificationOutcome,
} from '../../warehouse/refresh/scan-verification.ts';

export type { VerificationOutcome, VerifyStatus } from '../../warehouse/refresh/scan-verification.ts';

/**
 * Offset pages are not a snapshot. While a supplier's pages are read, the source may delete or insert
 * plots; a deletion in front of the read position moves a live plot onto a page already read, so one
 * scan never serves it. One scan therefore proves nothing about a plot it missed. This module decides,
 * at the end of a supplier's scan, what the sweep may conclude:
 *
 * - Nothing missing (the warehouse's live links of the supplier were all seen): nothing to prove.
 * - The scan was one response (a single short page): that response is the whole list at one moment,
 *   so what it lacks is gone.
 * - Otherwise every page is read a second time (the verification read). A plot the scan missed and
 *   this read finds had slid: it is seen. If every page of the second read holds the same plots in
 *   the same order as the first (same text, or same ids), the list did not move during either read
 *   (a deletion in front of a plot changes every page from the deleted plot's on, and a deleted id
 *   never returns), so what both missed is gone: `stable`. Otherwise `unstable`: what is still missing
 *   is deferred, kept live and marked, and the next refresh decides (see sweep.ts).
 *
 * Bounded: at most one verification read per supplier and run, of at most the scan's pages plus
 * EXTRA_PAGES, only when something is missing (never on a refresh that finds nothing gone), and it
 * stops as soon as every missing plot has been found.
 */

/** Pages a verification read may read beyond the scan's before it gives up (as `unstable`). */
const EXTRA_PAGES = 2;

export interface VerificationDeps {
  db: Warehouse;
  /** Reads page `page` of the supplier's plots (the same request as the scan's), hashed as the scan hashed it (raw.hash). */
  readPage(page: number): Promise<RawPlotPage>;
  /** Called after each page read (heartbeat). */
  onPage?(pages: number): void;
}

/**
 * What the warehouse alone decides at the end of a scan: the outcome when no page needs reading again
 * (nothing missing, or the scan was one response), else what the verification read must look for.
 */
export type VerificationPlan =
  | { decided: VerificationOutcome }
  | { decided?: undefined; scanned: Map<number, ScannedPage>; missing: { settled: string[]; all: number } };

export async function planVerification(db: Warehouse, runId: string, supplierId: string): Promise<VerificationPlan> {
  const scanned = await scannedPages(db, runId, supplierId);
  const missing = await missingLinks(db, runId, supplierId, scanned);
  const outcome: VerificationOutcome = { missing: missing.all, status: 'not_needed', pages: 0, found: [] };
  // Links written since the run began (another refresh's) are settled by the next refresh; nothing to prove now.
  if (missing.settled.length === 0) return { decided: outcome };
  if (scanned.size === 1) return { decided: { ...outcome, status: 'stable' } };
  return { scanned, missing };
}

export async function verifySupplierScan(
  deps: VerificationDeps,
  runId: string,
  supplierId: string,
): Promise<VerificationOutcome> {
  const { db } = deps;
  const plan = await planVerification(db, runId, supplierId);
  if (plan.decided) return plan.decided;
  const { scanned, missing } = plan;
  const outcome: VerificationOutcome = { missing: missing.all, status: 'not_needed', pages: 0, found: [] };
  // Only now the scan's ids (a refresh that finds nothing missing never reads them: 500 per page).
  const scannedIds = await scannedPageIds(db, runId, supplierId);

  const wanted = new Set(missing.settled);
  const found: string[] = [];
  let stable = true;
  let page = 1;
  for (; ; page++) {
    const raw = await deps.readPage(page);
    let more: boolean;
    try {
      deps.onPage?.(page);
      const first = scanned.get(page);
      if (first && first.hash !== null && first.hash === raw.hash) {
        // The same text as the scan's: the same plots, none of them missing.
        more = hasMorePages(first.received, raw.limit);
      } else {
        // Only ids are needed: a page too large to parse whole is read plot by plot.
        const parsed = supplierPlotsPageIds(raw);
        const ids = presentIds([...new Set(parsed.ids)], parsed.invalid);
        if (!first || !sameOrder(scannedIds.get(page) ?? [], ids)) stable = false;
        for (const id of ids) {
          if (wanted.delete(id)) found.push(id);
        }
        more = parsed.more;
      }
    } finally {
      raw.release();
    }
    // Every missing plot found: nothing is left to prove gone.
    if (wanted.size === 0 || !more) break;
    if (page >= scanned.size + EXTRA_PAGES) {
      stable = false;
      break;
    }
  }
  if (page !== scanned.size) stable = false;
  return { ...outcome, pages: page, found, status: wanted.size === 0 || stable ? 'stable' : 'unstable' };
}

function sameOrder(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((id, i) => id === b[i]);
}

/**
 * Live links of the supplier that the scan did not see, split by whether they were written before the
 * run began (`settled`: candidates for deletion) or since (by another refresh running meanwhile).
 * Skipped when every page was the same text as at the last complete read and no link is marked
 * missing: the pages then hold exactly the links that read left live.
 */
async function missingLinks(
  db: Warehouse,
  runId: string,
  supplierId: string,
  scanned: Map<number, ScannedPage>,
): Promise<{ settled: string[]; all: number }> {
  const allReused = [...scanned.values()].every((p) => p.reused);
  if (allReused && (await markedMissingLinks(db, supplierId)) === 0) return { settled: [], all: 0 };
  const rows = await unseenLinks(db, runId, supplierId);
  return { settled: rows.filter((r) => r.settled).map((r) => r.plot_id), all: rows.length };
}
