/**
 * How long a warehouse statement may take, by what it does. Each bound is kept twice:
 *
 * - by the server (`statement_timeout`, `lock_timeout`, set on each connection of the pool): a live
 *   server that is only slow, or a statement waiting on a lock an analyst holds, is cancelled there with
 *   SQLSTATE 57014 / 55P03, and the connection stays usable;
 * - by the client, a little later (`clientMs`): a server that does not answer at all (a frozen host or
 *   VM, a black-holed network, a stopped process) cannot cancel anything, and the kernel still
 *   acknowledges TCP on its behalf, so keep-alives never notice. The client then destroys the connection
 *   (never returns it to the pool) and the statement fails as "the warehouse did not answer".
 *
 * The client's bound is the later one, so a live server always answers first (pgbouncer's rule for
 * `query_timeout` against the server's `statement_timeout`).
 *
 * Sized at ten times or more what the longest statement of each kind takes at a million plots on the
 * machine of docs/benchmarks.md, so a bound is never what a healthy refresh meets (a bound met by a
 * healthy statement would repeat it for ever: its retry meets the same bound):
 * - `work`: a page's transaction, a batch's step, a webhook event, a PDF: statements over at most one
 *   page (500 plots; 60 MB of detailed boundaries COPY in about 5 s) or a few rows. Two minutes.
 * - `long`: the end of a refresh (the sweep, planner statistics, the summaries, the spatial checks:
 *   79 s for all of them at a million plots, the longest single statement about 30 s) and whole-table
 *   reads (an export, a report). Fifteen minutes.
 * - `migration`: index and column changes over whole tables, and the migrator's advisory lock, which
 *   waits for another worker's migration. An hour.
 * - `read`: `ddsync status` and the metrics' figures: a few aggregate reads a monitor waits for. 30 s.
 */
export type StatementKind = 'read' | 'work' | 'long' | 'migration';

export interface StatementBounds {
  /** The server's statement_timeout, ms. */
  statementMs: number;
  /** The server's lock_timeout, ms: a lock wait ends before the statement's own bound. */
  lockMs: number;
  /** The client's bound, ms: slightly longer than the server's. */
  clientMs: number;
}

const SECOND = 1_000;
const MINUTE = 60 * SECOND;

function bounds(statementMs: number, lockMs: number): StatementBounds {
  // Slightly longer: 10 s or 5 %, whichever is more (a loaded server may take a moment to say it cancelled).
  return { statementMs, lockMs, clientMs: statementMs + Math.max(10 * SECOND, statementMs * 0.05) };
}

export const STATEMENT_BOUNDS: Readonly<Record<StatementKind, StatementBounds>> = {
  read: bounds(30 * SECOND, 10 * SECOND),
  work: bounds(2 * MINUTE, 1 * MINUTE),
  long: bounds(15 * MINUTE, 2 * MINUTE),
  migration: bounds(60 * MINUTE, 60 * MINUTE),
};

/**
 * The statement that gives a session a kind's server-side bounds, unless the server already gives it a
 * stricter one (a DBA's `alter role … set lock_timeout`, a database's): ddsync never loosens what an
 * operator set, it only bounds what was unbounded or bounded more loosely.
 */
export function serverBoundsSql(b: Pick<StatementBounds, 'statementMs' | 'lockMs'>): string {
  const bound = (setting: string, ms: number) =>
    `set_config('${setting}', (case when now.${setting} > interval '0' and now.${setting} < interval '${Math.round(ms)} ms' then extract(epoch from now.${setting}) * 1000 else ${Math.round(ms)} end)::bigint::text, false)`;
  return `select ${bound('statement_timeout', b.statementMs)}, ${bound('lock_timeout', b.lockMs)} from (select current_setting('statement_timeout')::interval as statement_timeout, current_setting('lock_timeout')::interval as lock_timeout) now`;
}

/**
 * DDSYNC_PG_TIMEOUT_SCALE (a positive number, default 1) scales every bound: tests make them
 * short enough to meet, an operator with a far slower warehouse may make them longer.
 */
export function scaledBounds(kind: StatementKind, scale: number): StatementBounds {
  const b = STATEMENT_BOUNDS[kind];
  if (scale === 1) return b;
  const statementMs = Math.max(1, Math.round(b.statementMs * scale));
  const lockMs = Math.max(1, Math.round(b.lockMs * scale));
  return {
    statementMs,
    lockMs,
    clientMs: statementMs + Math.max(1_000, Math.round((b.clientMs - b.statementMs) * scale)),
  };
}
