import type { InvalidRecord, Plot } from '../../schema/upstream.ts';
import type { RecordIssue } from './issues.ts';
import type { RequestCounts } from './page-ledger.ts';
import { mapPlotsAt, presentIds, skippedIssues } from './plot-page.ts';
import { plotFingerprint } from './plot-fingerprint.ts';
import type { PlotRows } from './rows.ts';
import { readStoredPlots, writePlotPage, type PageOutcome, type StoredPlot } from './plot-writer.ts';
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
  const changed = batch.rows.filter((r) => isChanged(stored.get(r.plot.id), r.plot.content_hash));
  return writeChanged(db, batch, batch.rows.length, ids, stored, changed, batch.issues);
}

/** A page of parsed plots, mapped here: only the plots the warehouse does not hold as they are. */
export interface ParsedPlotBatch extends Omit<PlotBatch, 'rows' | 'issues'> {
  /** Every valid plot of the page, as parsed (their `suppliers` are cleared: see plotFingerprint). */
  plots: readonly Plot[];
  isOwn: boolean;
}

/**
 * As storePlotBatch, for a page not mapped yet: each plot's fingerprint first (a hash of what was
 * sent), then what the warehouse holds, then the mapping (area, bounding box, validity, findings,
 * row hashes: most of a plot's cost) of the plots new or changed only. A plot another supplier's page
 * brought earlier in the run, or one unchanged on a page that changed, is not mapped at all.
 */
export async function storeParsedPlots(db: Warehouse, batch: ParsedPlotBatch): Promise<PageOutcome> {
  const { plots, isOwn, runId, scope, supplierId, page, invalid, requests, sourceHash } = batch;
  const fingerprints = plots.map((p) => plotFingerprint(p, isOwn));
  const ids = [...new Set(plots.map((p) => p.id))];
  const stored = await readStoredPlots(db, ids, supplierId);
  const positions: number[] = [];
  for (let i = 0; i < plots.length; i++) if (isChanged(stored.get(plots[i]!.id), fingerprints[i]!)) positions.push(i);
  const { rows, issues } = mapPlotsAt(plots, positions, fingerprints, page, isOwn);
  // The write is handed the page's fields without the parsed plots, so the parse tree (several times
  // the page's text) dies here, not after the page's transaction: with pages of other suppliers in
  // flight, what survives a round trip is promoted and paid for again by the old generation's GC.
  const written = {
    runId,
    scope,
    supplierId,
    page,
    invalid,
    requests,
    ...(sourceHash !== undefined ? { sourceHash } : {}),
  };
  return writeChanged(db, written, plots.length, ids, stored, rows, issues);
}

/** Whether a plot must be written: not held, soft-deleted, or held with another fingerprint. */
function isChanged(stored: StoredPlot | undefined, fingerprint: string): boolean {
  return !stored || stored.deleted || stored.hash !== fingerprint;
}

async function writeChanged(
  db: Warehouse,
  batch: Omit<PlotBatch, 'rows' | 'issues'>,
  /** Valid plots on the page, a repeated id counted each time. */
  valid: number,
  ids: readonly string[],
  stored: ReadonlyMap<string, StoredPlot>,
  changed: readonly PlotRows[],
  issues: readonly RecordIssue[],
): Promise<PageOutcome> {
  const changedIds = new Set(changed.map((r) => r.plot.id));
  return writePlotPage(db, {
    runId: batch.runId,
    scope: batch.scope,
    supplierId: batch.supplierId,
    page: batch.page,
    received: valid + batch.invalid.length,
    ids,
    present: presentIds(ids, batch.invalid),
    rows: changed,
    existing: new Set([...changedIds].filter((id) => stored.has(id))),
    links: batch.supplierId === null ? [] : ids.filter((id) => !stored.get(id)?.linked),
    issues: [
      ...skippedIssues(batch.invalid, batch.page),
      ...issues.filter((i) => i.recordId !== null && changedIds.has(i.recordId)),
    ],
    requests: batch.requests,
    ...(batch.sourceHash !== undefined ? { sourceHash: batch.sourceHash } : {}),
  });
}
