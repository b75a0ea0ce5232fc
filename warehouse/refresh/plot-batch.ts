import type { InvalidRecord, Plot } from '../../schema/upstream.ts';
import type { RecordIssue } from './issues.ts';
import type { RequestCounts } from './page-ledger.ts';
import { mapPlotsAt, presentIds, skippedIssues } from './plot-page.ts';
import { plotFingerprint } from './plot-fingerprint.ts';
import type { PlotRows } from './rows.ts';
import {
  readStoredPlots,
  writePlotPage,
  writeSplitPlotPage,
  type PageOutcome,
  type PlotPart,
  type StoredPlot,
} from './plot-writer.ts';
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

/** A page split into its plots (upstream's SplitPlotPage): each plot parsed and checked only when asked for. */
export interface SplitPlots {
  /** Plots on the page, valid or not. */
  received: number;
  /** Per plot, the id its JSON carries at its top level, as scanned before any check. */
  ids: readonly (string | null)[];
  /** Bytes of JSON of plot `index`. */
  sizeOf(index: number): number;
  plotAt(index: number): { plot: Plot } | { invalid: InvalidRecord };
}

/**
 * Plots of a split page parsed, mapped and written at once: about 2 MB of their JSON, a few times
 * that as objects, rows and COPY text, whatever the page weighs. Measured on pages of 80 MB (parse
 * and map only, .ddsync/tmp): peak RSS 290 MB with parts of 4 MB, 267 with 2, 274 with 1 (noise).
 */
export const PART_BYTES = 2 * 1024 * 1024;

/**
 * As storeParsedPlots, for a page too large to hold as objects: its plots are parsed, checked,
 * fingerprinted, compared with the warehouse, mapped and written a part of about PART_BYTES at a time,
 * all in the page's one transaction (writeSplitPlotPage). The warehouse ends as the whole page would
 * leave it: the same plots written, the same issues, the same page record. Parts go in ascending id
 * order (the scanned ids), as a whole page's rows do, so pages that share plots lock them in one
 * order; a plot repeated on the page is written once, its last valid occurrence (as uniqueSortedById
 * keeps the last).
 */
export async function storeSplitPlots(
  db: Warehouse,
  batch: Omit<ParsedPlotBatch, 'plots' | 'invalid'>,
  split: SplitPlots,
  partBytes = PART_BYTES,
): Promise<{ outcome: PageOutcome; signature: string }> {
  const { isOwn, supplierId, page } = batch;
  const n = split.received;
  const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => {
    const ia = split.ids[a] ?? null;
    const ib = split.ids[b] ?? null;
    if (ia === ib) return a - b;
    if (ia === null) return 1;
    if (ib === null) return -1;
    return ia < ib ? -1 : 1;
  });
  /** Per position on the page: the plot's id when it is valid. */
  const validIds: (string | undefined)[] = new Array(n);
  const invalid: InvalidRecord[] = [];
  /** Values stored as null, with the position on the page of the plot they belong to. */
  const nulled: Array<{ issue: RecordIssue; position: number }> = [];
  let next = 0;
  const nextPart = async (trx: Warehouse): Promise<PlotPart | undefined> => {
    const plots: Plot[] = [];
    const positions: number[] = [];
    const byId = new Map<string, number>();
    let bytes = 0;
    while (next < n && (bytes < partBytes || plots.length === 0 || sameId(split, order, next))) {
      const position = order[next++]!;
      bytes += split.sizeOf(position);
      const checked = split.plotAt(position);
      if ('invalid' in checked) {
        invalid.push(checked.invalid);
        continue;
      }
      const { plot } = checked;
      validIds[position] = plot.id;
      const at = byId.get(plot.id);
      if (at === undefined) {
        byId.set(plot.id, plots.length);
        plots.push(plot);
        positions.push(position);
      } else {
        plots[at] = plot;
        positions[at] = position;
      }
    }
    if (plots.length === 0) return undefined;
    const fingerprints = plots.map((p) => plotFingerprint(p, isOwn));
    const ids = plots.map((p) => p.id);
    const stored = await readStoredPlots(trx, ids, supplierId);
    const changed: number[] = [];
    for (let i = 0; i < plots.length; i++) if (isChanged(stored.get(ids[i]!), fingerprints[i]!)) changed.push(i);
    const { rows, issues } = mapPlotsAt(plots, changed, fingerprints, page, isOwn);
    const positionOf = new Map(ids.map((id, i) => [id, positions[i]!]));
    for (const issue of issues) nulled.push({ issue, position: positionOf.get(issue.recordId!)! });
    return {
      ids,
      rows,
      existing: new Set(rows.map((r) => r.plot.id).filter((id) => stored.has(id))),
      links: supplierId === null ? [] : ids.filter((id) => !stored.get(id)?.linked),
    };
  };
  const end = () => {
    // Named as a whole page names them: a plot's place among the page's valid plots.
    const validIndex: number[] = new Array(n);
    let valid = 0;
    for (let i = 0; i < n; i++) if (validIds[i] !== undefined) validIndex[i] = valid++;
    invalid.sort((a, b) => a.index - b.index);
    const ids = [...new Set(validIds.filter((id): id is string => id !== undefined))];
    return {
      received: n,
      present: presentIds(ids, invalid),
      issues: [
        ...skippedIssues(invalid, page),
        ...nulled.map(({ issue, position }) => ({ ...issue, location: `page ${page} #${validIndex[position]}` })),
      ],
    };
  };
  const outcome = await writeSplitPlotPage(
    db,
    {
      runId: batch.runId,
      scope: batch.scope,
      supplierId,
      page,
      requests: batch.requests,
      ...(batch.sourceHash !== undefined ? { sourceHash: batch.sourceHash } : {}),
    },
    nextPart,
    end,
  );
  const first = validIds.find((id) => id !== undefined);
  const last = validIds.findLast((id) => id !== undefined);
  return { outcome, signature: first === undefined ? '' : `${first}…${last}` };
}

/** Whether the plot at `order[at]` has the id of the one before it: a part never ends between the two. */
function sameId(split: SplitPlots, order: readonly number[], at: number): boolean {
  const id = split.ids[order[at]!];
  return at > 0 && id !== null && id !== undefined && id === split.ids[order[at - 1]!];
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
