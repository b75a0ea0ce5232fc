import { type RawBuilder, sql } from 'kysely';
import type pg from 'pg';
import { type Row, withClientTransaction, type Warehouse } from '../database.ts';
import type { HistoryRow, PlotRows } from './rows.ts';
import { jsonRecordset, type RecordsetColumns } from './json-recordset.ts';
import { copyRows } from './copy-text.ts';
import { addCounts, emptyCounts, type TableCounts } from './counts.ts';
import { jsonRows, uniqueSortedById, upsertCounted } from './hashed-upsert.ts';
import { ANALYSES, FINDINGS, HISTORY, PLOTS, REPLACED_HISTORY, SPECIES, STAGED } from './plot-tables.ts';
import { copyFreshPlots } from './fresh-plots.ts';
import { recordIssues, type RecordIssue } from './issues.ts';
import { OVERLAP_CODE_PREFIX } from '../../domain/eudr/finding.ts';
import { GEOMETRY_DUPLICATE_CODE } from '../../domain/eudr/geometry-duplicates.ts';
import { lockPageRecord, recordedCounts, recordPage, type RequestCounts } from './page-ledger.ts';

/**
 * The SQL side of a page of plots. First two indexed reads (what the warehouse holds of the page's
 * plots and links), so that only changed plots are sent; then one transaction that writes
 * those plots with their species, analyses, history and EUDR findings (new plots straight in,
 * fresh-plots.ts; the others through staging tables), the missing links, the issues, and the
 * page's record. Idempotent: a replayed page writes no data twice. A page whose plots are all
 * unchanged writes only its own record in sync_pages.
 */

/** What the warehouse holds of a plot: its fingerprint, whether it is soft-deleted, whether it is linked. */
export interface StoredPlot {
  hash: string;
  deleted: boolean;
  /** Linked (live) to the supplier the page was read through. */
  linked: boolean;
}

/** What the warehouse holds of the page's plots, in one indexed read. */
export async function readStoredPlots(
  db: Warehouse,
  ids: readonly string[],
  supplierId: string | null,
): Promise<Map<string, StoredPlot>> {
  if (ids.length === 0) return new Map();
  const { rows } = await sql<Pick<Row<'plots'>, 'id' | 'content_hash'> & { deleted: boolean; linked: boolean }>`
    select p.id, p.content_hash, p.deleted_at is not null as deleted,
           exists (select 1 from plot_suppliers l where l.supplier_id = ${supplierId} and l.plot_id = p.id and l.deleted_at is null) as linked
    from plots p where p.id = any(${ids}::text[])`.execute(db);
  return new Map(rows.map((r) => [r.id, { hash: r.content_hash, deleted: r.deleted, linked: r.linked }]));
}

/**
 * A page whose text hashes as the page last read completely (source_pages) is in the warehouse
 * already: the run records it as seen from that record, in one statement, without parsing it.
 * Returns undefined when the page differs (or was never read).
 */
export async function reuseUnchangedPage(
  db: Warehouse,
  page: { runId: string; scope: string; page: number; hash: string; requests: RequestCounts },
): Promise<{ received: number; signature: string } | undefined> {
  const { rows } = await sql<Pick<Row<'sync_pages'>, 'received'> & { first: string | null; last: string | null }>`
    insert into sync_pages (run_id, scope, entity, page, ids, received, reused, content_hash, counts, requests, retries, rate_limited)
    select ${page.runId}::uuid, s.scope, 'plots', s.page, s.ids, s.received, true, s.content_hash,
           jsonb_build_object('plots', jsonb_build_object('inserted', 0, 'updated', 0, 'unchanged', cardinality(s.ids), 'deleted', 0),
                              'plot_suppliers', jsonb_build_object('inserted', 0, 'updated', 0, 'unchanged', cardinality(s.ids), 'deleted', 0)),
           ${page.requests.requests}, ${page.requests.retries}, ${page.requests.rateLimited}
    from source_pages s where s.scope = ${page.scope} and s.page = ${page.page} and s.content_hash = ${page.hash}
    on conflict (run_id, scope, entity, page) do update set ids = excluded.ids, received = excluded.received, reused = true,
      content_hash = excluded.content_hash, requests = sync_pages.requests + excluded.requests, retries = sync_pages.retries + excluded.retries,
      rate_limited = sync_pages.rate_limited + excluded.rate_limited, written_at = now()
    returning received, ids[1] as first, ids[cardinality(ids)] as last`.execute(db);
  const r = rows[0];
  return r ? { received: r.received, signature: r.first === null ? '' : `${r.first}…${r.last}` } : undefined;
}

export interface PlotPageWrite {
  runId: string;
  /** A supplier's business id, or OWN_PLOTS_SCOPE. */
  scope: string;
  /** The direct supplier the page was read through; null for the business's own plots. */
  supplierId: string | null;
  page: number;
  /** Plots the service sent, valid or not. */
  received: number;
  /** Every valid plot id of the page. */
  ids: readonly string[];
  /** What the sweep counts as seen: `ids` and the invalid plots that carry an id (see presentIds). */
  present: readonly string[];
  /** Rows of the plots that are new or changed (the others are not mapped). */
  rows: readonly PlotRows[];
  /** Of `rows`, the plots the warehouse already held (they may have history, species, analyses). */
  existing: ReadonlySet<string>;
  /** Plot ids to link to the supplier (not yet linked, or linked and soft-deleted). */
  links: readonly string[];
  issues: readonly RecordIssue[];
  requests: RequestCounts;
  /** The hash of the page's text, remembered in source_pages (supplier pages only). */
  sourceHash?: string;
}

export interface PageOutcome {
  counts: TableCounts;
  /** Whether this page had been written before (a replay after a lost activity completion). */
  replayed: boolean;
}

type Tx = Warehouse;
const EMPTY: ReadonlySet<string> = new Set();

/**
 * A page's rows reach Postgres by COPY into these temporary tables (emptied at every commit), and the
 * statements below read them as `r`: COPY is the cheapest way in, for Postgres and for the worker
 * alike (copy-text.ts). Each page's transaction makes sure they exist (a no-op once they do): a
 * session can lose them between two pages (a pooler's DISCARD, transaction pooling handing over
 * another server session), so no connection is trusted to still have them. A warehouse role that may
 * not create temporary tables gets the same statements over one JSON parameter per table instead.
 * (bench:refresh's --ceiling COPYs the same columns.)
 */
type StagedTable = keyof typeof STAGED;
const STAGING_DDL = Object.entries(STAGED)
  .map(
    ([table, columns]) =>
      `create temp table if not exists stage_${table} on commit delete rows as select ${Object.keys(columns).join(', ')} from ${table} with no data;`,
  )
  .join('\n');
// Inside the page's transaction; "already exists, skipping" notices are not worth a message each.
const ENSURE_STAGING = `set local client_min_messages = warning;\n${STAGING_DDL}`;
/** Per warehouse: whether its role may create temporary tables, learned on its first page. */
const mayStage = new WeakMap<Warehouse, boolean>();
const INSUFFICIENT_PRIVILEGE = '42501';

/** Before the first page's transaction (a refusal there would abort it): may this role stage? */
async function learnStaging(db: Warehouse, client: pg.ClientBase): Promise<void> {
  if (mayStage.has(db)) return;
  try {
    await client.query(STAGING_DDL);
    mayStage.set(db, true);
  } catch (error) {
    if ((error as { code?: string }).code !== INSUFFICIENT_PRIVILEGE) throw error;
    mayStage.set(db, false);
  }
}

/** Where a statement reads a batch of rows as `r`: the staging table after a COPY, or one JSON parameter. */
type Stage = <Row extends object>(
  table: StagedTable,
  rows: readonly Row[],
  columns: RecordsetColumns<Row>,
) => Promise<RawBuilder<unknown>>;

/** The stage of one transaction; the temporary tables are made sure of only when a page needs them. */
function stagerFor(db: Warehouse, client: pg.ClientBase): Stage {
  if (!mayStage.get(db)) return async (_table, rows, columns) => jsonRows(rows, columns);
  let ensured: Promise<unknown> | undefined;
  return async (table, rows, columns) => {
    ensured ??= client.query(ENSURE_STAGING);
    await ensured;
    await copyRows(client, `stage_${table}`, rows, columns);
    return sql.raw(`stage_${table} as r`);
  };
}

export async function writePlotPage(db: Warehouse, page: PlotPageWrite): Promise<PageOutcome> {
  // A whole page is a split page of one part: the same transaction, locks, writes and record.
  let written = false;
  return writeSplitPlotPage(
    db,
    page,
    async () => (written ? undefined : ((written = true), page)),
    () => page,
  );
}

/** The plots of one part of a page split plot by plot (writeSplitPlotPage). */
export interface PlotPart {
  /** The part's valid plot ids not in an earlier part, once each. */
  ids: readonly string[];
  /** Rows of the part's plots that are new or changed. */
  rows: readonly PlotRows[];
  /** Of `rows`, the plots the warehouse already held. */
  existing: ReadonlySet<string>;
  /** Of `ids`, those to link to the supplier. */
  links: readonly string[];
}

/** What is known of a split page once all its parts are written: its record and its issues. */
export type SplitPageEnd = Pick<PlotPageWrite, 'received' | 'present' | 'issues'>;

/**
 * A page too large to hold as objects, written part by part in ONE transaction, as writePlotPage
 * writes a whole page: `nextPart` reads what the warehouse holds of the next plots (through `trx`, in
 * the transaction) and returns their rows, or undefined when no part is left; `end` then says what
 * the page's record and issues are. One transaction, so a page is stored whole or not at all, and a
 * replay finds every plot as it is and writes nothing twice, as for any page. Parts should come in
 * ascending id order: every page's transaction then takes its row locks in one order.
 */
export async function writeSplitPlotPage(
  db: Warehouse,
  page: Omit<PlotPageWrite, 'ids' | 'rows' | 'existing' | 'links' | 'received' | 'present' | 'issues'>,
  nextPart: (trx: Warehouse) => Promise<PlotPart | undefined>,
  end: () => SplitPageEnd,
): Promise<PageOutcome> {
  return withClientTransaction(
    db,
    (client) => learnStaging(db, client),
    async (trx, client) => {
      const before = await lockPageRecord(trx, { ...page, entity: 'plots' });
      const counts = emptyCounts();
      const stage = stagerFor(db, client);
      for (let part = await nextPart(trx); part; part = await nextPart(trx))
        await writePlotRows(trx, client, stage, { ...page, ...part }, counts);
      return recordWrittenPage(trx, { ...page, ...end() }, before, counts);
    },
  );
}

/** The plots (new or changed), their species, analyses, history, findings and links. */
async function writePlotRows(
  trx: Tx,
  client: pg.ClientBase,
  stage: Stage,
  page: Pick<PlotPageWrite, 'runId' | 'supplierId' | 'ids' | 'rows' | 'existing' | 'links'>,
  counts: TableCounts,
): Promise<void> {
  const rows = uniqueSortedById(page.rows, (r) => r.plot.id);
  const fresh = rows.filter((r) => !page.existing.has(r.plot.id));
  // New plots straight into their tables (fresh-plots.ts); the rest, and any another writer stored meanwhile, staged.
  const { copied, held } =
    fresh.length > 0
      ? await copyFreshPlots(client, page.runId, fresh, counts, page.supplierId)
      : { copied: EMPTY, held: EMPTY };
  const staged = copied.size > 0 ? rows.filter((r) => !copied.has(r.plot.id)) : rows;
  const existing = held.size > 0 ? new Set([...page.existing, ...held]) : page.existing;
  const plots = staged.map((r) => r.plot);
  const written = await upsertCounted(
    trx,
    PLOTS,
    plots,
    counts,
    page.ids.length - copied.size,
    plots.length > 0 ? await stage('plots', plots, PLOTS.columns) : undefined,
  );
  const writtenRows = staged.filter((r) => written.has(r.plot.id));
  // Plots seen for the first time have no species, analyses or history to replace or close.
  const replaced = writtenRows.filter((r) => existing.has(r.plot.id));
  if (writtenRows.length > 0) {
    await replaceSpecies(trx, stage, writtenRows, replaced, counts);
    await upsertAnalyses(trx, stage, writtenRows, replaced, counts);
    await advanceHistory(trx, stage, page.runId, writtenRows, replaced, counts);
    await advanceFindings(trx, stage, page.runId, writtenRows, replaced, counts);
  }
  if (page.supplierId !== null) {
    // The copied plots' links went in with them.
    const links = copied.size > 0 ? page.links.filter((id) => !copied.has(id)) : page.links;
    await linkSupplier(trx, links, page.supplierId, page.ids.length - copied.size, counts);
  }
}

/** The page's issues, its source text's hash, and its record (a replay's counts merged with the first's). */
async function recordWrittenPage(
  trx: Tx,
  page: Pick<PlotPageWrite, 'runId' | 'scope' | 'page' | 'issues' | 'sourceHash' | 'present' | 'received' | 'requests'>,
  before: { counts: TableCounts } | undefined,
  counts: TableCounts,
): Promise<PageOutcome> {
  await recordIssues(trx, page.runId, page.scope, page.issues);
  if (page.sourceHash !== undefined) {
    await sql`
        insert into source_pages (scope, page, content_hash, ids, received, read_at)
        values (${page.scope}, ${page.page}, ${page.sourceHash}, ${page.present}::text[], ${page.received}, now())
        on conflict (scope, page) do update set content_hash = excluded.content_hash, ids = excluded.ids, received = excluded.received, read_at = now()`.execute(
      trx,
    );
  }
  const replayed = before !== undefined;
  await recordPage(trx, {
    runId: page.runId,
    scope: page.scope,
    entity: 'plots',
    page: page.page,
    ids: page.present,
    received: page.received,
    counts: recordedCounts(before, counts),
    requests: page.requests,
    contentHash: page.sourceHash,
  });
  return { counts, replayed };
}

async function replaceSpecies(
  trx: Tx,
  stage: Stage,
  rows: PlotRows[],
  replaced: PlotRows[],
  counts: TableCounts,
): Promise<void> {
  let deleted = 0;
  if (replaced.length > 0) {
    const removed =
      await sql`delete from plot_species where plot_id = any(${replaced.map((r) => r.plot.id)}::text[])`.execute(trx);
    deleted = Number(removed.numAffectedRows ?? 0);
  }
  const species = rows.flatMap((r) => r.species);
  let added = 0;
  if (species.length > 0) {
    const columns = sql.raw(Object.keys(SPECIES).join(', '));
    const result = await sql`
      insert into plot_species (${columns})
      select ${columns} from ${await stage('plot_species', species, SPECIES)}`.execute(trx);
    added = Number(result.numAffectedRows ?? 0);
  }
  // A changed plot's species list is rewritten: its old rows count as deleted, its new ones as inserted.
  addCounts(counts, 'plot_species', { inserted: added, deleted });
}

async function upsertAnalyses(
  trx: Tx,
  stage: Stage,
  rows: PlotRows[],
  replaced: PlotRows[],
  counts: TableCounts,
): Promise<void> {
  const analyses = rows.flatMap((r) => r.analyses);
  if (replaced.length > 0) {
    // The analyses a plot no longer carries were replaced by newer ones: they stay, unmarked.
    const unmarked = await sql`
      update analyses set is_most_recent = false, is_most_recent_of_type = false, changed_at = now()
      where plot_id = any(${replaced.map((r) => r.plot.id)}::text[]) and (is_most_recent or is_most_recent_of_type)
        and not (id = any(${analyses.map((a) => a.id)}::text[]))`.execute(trx);
    addCounts(counts, 'analyses', { updated: Number(unmarked.numAffectedRows ?? 0) });
  }
  // Only changed plots get here, so their analyses are upserted without reading their hashes first.
  const unique = uniqueSortedById(analyses, (a) => a.id);
  await upsertCounted(trx, ANALYSES, unique, counts, unique.length, await stage('analyses', unique, ANALYSES.columns));
}

/** SCD type 2: close the current row when the tracked attributes changed, then open one where none is current. */
async function advanceHistory(
  trx: Tx,
  stage: Stage,
  runId: string,
  rows: PlotRows[],
  replaced: PlotRows[],
  counts: TableCounts,
): Promise<void> {
  const history = rows.map(
    (r): HistoryRow => ({ plot_id: r.plot.id, history_hash: r.plot.history_hash, ...r.history }),
  );
  let closed = 0;
  if (replaced.length > 0) {
    const changed = jsonRecordset(
      replaced.map((r) => ({ plot_id: r.plot.id, history_hash: r.plot.history_hash })),
      REPLACED_HISTORY,
      'c',
    );
    const result = await sql`
      update plot_history h set valid_to = now(), is_current = false
      from ${changed}
      where h.plot_id = c.plot_id and h.is_current and h.history_hash <> c.history_hash`.execute(trx);
    closed = Number(result.numAffectedRows ?? 0);
  }
  const opened = await sql`
    insert into plot_history (plot_id, valid_from, is_current, risk_assessment_status, risk_level, geometry_hash, commodities,
      most_recent_analysis_id, euforobs_analysis_id, precision_analysis_id, history_hash, run_id)
    select r.plot_id, now(), true, r.risk_assessment_status, r.risk_level, r.geometry_hash, coalesce(r.commodities, '{}'),
      r.most_recent_analysis_id, r.euforobs_analysis_id, r.precision_analysis_id, r.history_hash, ${runId}::uuid
    from ${await stage('plot_history', history, HISTORY)}
    where not exists (select 1 from plot_history h where h.plot_id = r.plot_id and h.is_current)
    on conflict (plot_id, valid_from) do nothing`.execute(trx);
  const opens = Number(opened.numAffectedRows ?? 0);
  addCounts(counts, 'plot_history', { inserted: opens, updated: closed, unchanged: rows.length - opens });
}

/**
 * SCD type 2 over each plot's EUDR readiness findings, keyed by (plot, code): a current finding of a
 * rewritten plot that is gone or differs (severity, message, details) is closed, and a finding with
 * no current row is opened. An unchanged finding stays as it is (its valid_from is when it was first
 * found). The overlap_* and geometry_duplicate findings are computed across plots at the end of the
 * refresh: never touched here, or a rewritten plot would lose its finding until then, and reopen it
 * with a new valid_from.
 */
async function advanceFindings(
  trx: Tx,
  stage: Stage,
  runId: string,
  rows: PlotRows[],
  replaced: PlotRows[],
  counts: TableCounts,
): Promise<void> {
  const findings = rows.flatMap((r) => r.findings);
  // Staged once, read by both statements (COPY: a temporary table; otherwise one JSON parameter, sent twice).
  const staged = findings.length > 0 ? await stage('eudr_findings', findings, FINDINGS) : null;
  let closed = 0;
  if (replaced.length > 0) {
    const ids = replaced.map((r) => r.plot.id);
    const stillFound = staged
      ? sql`and not exists (
          select 1 from ${staged}
          where r.plot_id = f.plot_id and r.code = f.code and r.severity = f.severity and r.message = f.message
            and r.details is not distinct from f.details)`
      : sql``;
    const result = await sql`
      update eudr_findings f set valid_to = now(), is_current = false
      where f.plot_id = any(${ids}::text[]) and f.is_current and left(f.code, ${OVERLAP_CODE_PREFIX.length}) <> ${OVERLAP_CODE_PREFIX}
        and f.code <> ${GEOMETRY_DUPLICATE_CODE}
        ${stillFound}`.execute(trx);
    closed = Number(result.numAffectedRows ?? 0);
  }
  let opened = 0;
  if (staged) {
    const result = await sql`
      insert into eudr_findings (plot_id, code, severity, message, details, valid_from, is_current, run_id)
      select r.plot_id, r.code, r.severity, r.message, r.details, now(), true, ${runId}::uuid
      from ${staged}
      where not exists (select 1 from eudr_findings f where f.plot_id = r.plot_id and f.code = r.code and f.is_current)
      on conflict (plot_id, code, valid_from) do nothing`.execute(trx);
    opened = Number(result.numAffectedRows ?? 0);
  }
  addCounts(counts, 'eudr_findings', { inserted: opened, updated: closed, unchanged: findings.length - opened });
}

/** Links the page's plots to the supplier it was read through; a link that was soft-deleted comes back. */
async function linkSupplier(
  trx: Tx,
  ids: readonly string[],
  supplierId: string,
  seen: number,
  counts: TableCounts,
): Promise<void> {
  if (ids.length === 0) {
    addCounts(counts, 'plot_suppliers', { unchanged: seen });
    return;
  }
  const links = await sql<{ inserted: boolean }>`
    insert into plot_suppliers (plot_id, supplier_id)
    select id, ${supplierId} from unnest(${[...ids].sort()}::text[]) as id
    on conflict (plot_id, supplier_id) do update set deleted_at = null, changed_at = now() where plot_suppliers.deleted_at is not null
    returning (xmax = 0) as inserted`.execute(trx);
  const inserted = links.rows.filter((r) => r.inserted).length;
  addCounts(counts, 'plot_suppliers', {
    inserted,
    updated: links.rows.length - inserted,
    unchanged: seen - links.rows.length,
  });
}
