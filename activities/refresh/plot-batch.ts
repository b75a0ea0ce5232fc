import type { Kysely } from 'kysely';
import type { Database } from '../../schema/database.ts';
import type { Plot } from '../../schema/upstream.ts';
import type { InvalidRecord } from '../api/index.ts';
import type { RequestCounts } from './page-ledger.ts';
import type { PlotEntry } from './plot-fingerprint.ts';
import { mapPlots, skippedIssues } from './plot-page.ts';
import { readStoredPlots, writePlotPage, type PageOutcome } from './plot-writer.ts';

/**
 * A page of a supplier's plots, or a batch of the own-plots stream, into the warehouse: read what
 * the warehouse holds of its plots, map only those whose fingerprint changed, write in one
 * transaction.
 */
export interface PlotBatch {
  runId: string;
  scope: string;
  /** Null for the business's own plots. */
  supplierId: string | null;
  page: number;
  entries: readonly PlotEntry[];
  invalid: readonly InvalidRecord[];
  requests: RequestCounts;
  /** Hash of the page's text, to remember for the next refresh (supplier pages). */
  sourceHash?: string;
}

export async function storePlotBatch(db: Kysely<Database>, batch: PlotBatch): Promise<PageOutcome> {
  const isOwn = batch.supplierId === null;
  const ids = batch.entries.map((e) => e.id);
  const stored = await readStoredPlots(db, ids, batch.supplierId);
  const changed = batch.entries.filter((e) => {
    const s = stored.get(e.id);
    return !s || s.deleted || s.hash !== e.hash;
  });
  const plots = changed.map((e) => JSON.parse(e.text) as Plot);
  const { rows, issues } = mapPlots(plots, batch.page, isOwn, new Map(changed.map((e) => [e.id, e.hash])));
  return writePlotPage(db, {
    runId: batch.runId, scope: batch.scope, supplierId: batch.supplierId, page: batch.page,
    received: batch.entries.length + batch.invalid.length, ids, rows,
    existing: new Set(changed.filter((e) => stored.has(e.id)).map((e) => e.id)),
    links: batch.supplierId === null ? [] : ids.filter((id) => !stored.get(id)?.linked),
    issues: [...skippedIssues(batch.invalid, batch.page), ...issues],
    requests: batch.requests,
    ...(batch.sourceHash !== undefined ? { sourceHash: batch.sourceHash } : {}),
  });
}
