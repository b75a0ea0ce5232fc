import type { InvalidRecord } from '../../schema/upstream.ts';
import type { RecordIssue } from './issues.ts';
import type { RequestCounts } from './page-ledger.ts';
import { presentIds, skippedIssues } from './plot-page.ts';
import type { PlotRows } from './rows.ts';
import { readStoredPlots, writePlotPage, type PageOutcome } from './plot-writer.ts';
import type { Warehouse } from '../database.ts';

/**
 * A page of a supplier's plots, or a batch of the own-plots stream, into the warehouse: read what
 * the warehouse holds of its plots (fingerprints, links), keep the plots whose fingerprint changed,
 * write in one transaction.
 */
export interface PlotBatch {
  runId: string;
  scope: string;
  /** Null for the business's own plots. */
  supplierId: string | null;
  page: number;
  /** Every valid plot of the page, mapped (plot-page.ts). */
  rows: readonly PlotRows[];
  /** Values stored as null, per plot (reported for the plots written). */
  issues: readonly RecordIssue[];
  invalid: readonly InvalidRecord[];
  requests: RequestCounts;
  /** Hash of the page's text, to remember for the next refresh (supplier pages). */
  sourceHash?: string;
}

export async function storePlotBatch(db: Warehouse, batch: PlotBatch): Promise<PageOutcome> {
  const ids = [...new Set(batch.rows.map((r) => r.plot.id))];
  const stored = await readStoredPlots(db, ids, batch.supplierId);
  const changed = batch.rows.filter((r) => {
    const s = stored.get(r.plot.id);
    return !s || s.deleted || s.hash !== r.plot.content_hash;
  });
  const changedIds = new Set(changed.map((r) => r.plot.id));
  return writePlotPage(db, {
    runId: batch.runId,
    scope: batch.scope,
    supplierId: batch.supplierId,
    page: batch.page,
    received: batch.rows.length + batch.invalid.length,
    ids,
    present: presentIds(ids, batch.invalid),
    rows: changed,
    existing: new Set([...changedIds].filter((id) => stored.has(id))),
    links: batch.supplierId === null ? [] : ids.filter((id) => !stored.get(id)?.linked),
    issues: [
      ...skippedIssues(batch.invalid, batch.page),
      ...batch.issues.filter((i) => i.recordId !== null && changedIds.has(i.recordId)),
    ],
    requests: batch.requests,
    ...(batch.sourceHash !== undefined ? { sourceHash: batch.sourceHash } : {}),
  });
}
