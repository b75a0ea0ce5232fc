import { NETWORK_WORDS } from '../platform/network-words.ts';

/**
 * What a failed warehouse statement says about the warehouse, decided from the error alone (no I/O).
 *
 * - `unavailable`: the warehouse cannot take work now, whatever the statement: it is down, restarting,
 *   failing over, read-only, out of connections, or the connection was cut. Waiting until it answers a
 *   probe again and then doing the same work again is right: every ddsync write is idempotent.
 * - `contended`: the warehouse is up but this statement lost a race or a wait (a lock or statement
 *   timeout while an analyst holds a lock, a deadlock, a serialization failure): back off and repeat.
 * - `fatal`: waiting cannot help (credentials refused, the database gone, the schema not what
 *   ddsync's migrations made): an operator must act. The sentence says what to do.
 * - undefined: not the warehouse's state (a bug, a bad value): the caller's own retry rules decide.
 */
export type WarehouseTrouble =
  | { kind: 'unavailable'; reason: string }
  | { kind: 'contended'; reason: string }
  | { kind: 'fatal'; reason: string };

/** SQLSTATEs (PostgreSQL, appendix A) and what they mean for ddsync. */
const UNAVAILABLE_STATES: Record<string, string> = {
  '57P01': 'the server is shutting down (administrator command, restart or failover)',
  '57P02': 'the server crashed and is restarting',
  '57P03': 'the server is starting up or shutting down and takes no connections',
  '57P05': 'the connection was idle too long and the server closed it',
  '53300': 'all connections are taken (max_connections)',
  '53100': 'the server is out of disk space',
  '53200': 'the server is out of memory',
  '25006': 'the warehouse is read-only (default_transaction_read_only or a standby after failover)',
  '58030': 'the server had an I/O error',
};
const CONTENDED_STATES: Record<string, string> = {
  '55P03': 'a lock could not be taken in time (lock_timeout): another session holds it',
  '57014': 'a statement was cancelled (statement_timeout, or cancelled by an administrator)',
  '40001': 'a serialization failure',
  '40P01': 'a deadlock with another session',
  '55006': 'an object is in use by another session',
};
const FATAL_STATES: Record<string, string> = {
  '28P01': 'the warehouse refuses the password of DATABASE_URL: correct DATABASE_URL and start again',
  '28000':
    'the warehouse refuses the role of DATABASE_URL (pg_hba.conf or a role without login): correct DATABASE_URL or the server and start again',
  '3D000': 'the database of DATABASE_URL does not exist: create it or correct DATABASE_URL, then start again',
  '42P01':
    "a table ddsync's migrations made is missing: another tool changed the warehouse's schema; restore it from a backup or migrate a new database",
  '42703':
    "a column ddsync's migrations made is missing: another tool changed the warehouse's schema; restore it from a backup or migrate a new database",
  '42883':
    "a function ddsync's migrations made is missing: another tool changed the warehouse's schema; restore it from a backup or migrate a new database",
  '42501':
    'the role of DATABASE_URL lacks a privilege ddsync needs: grant it (ddsync needs to own its tables) or use the role that migrated the warehouse',
};

/** node-postgres's own words for a connection it lost or could not make (it gives them no code). */
const LOST_CONNECTION = [
  /^Connection terminated/i,
  /not queryable/i,
  /timeout exceeded when trying to connect/i,
  /Query read timeout/i,
  /Client was closed/i,
  /Connection terminated due to connection timeout/i,
];

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * The trouble an error shows, looking through `cause` chains and aggregate errors (a connection
 * attempt to several addresses fails as an AggregateError of socket errors).
 */
export function classifyWarehouseError(error: unknown): WarehouseTrouble | undefined {
  const seen = new Set<unknown>();
  const queue: unknown[] = [error];
  while (queue.length > 0 && seen.size < 10) {
    const current = queue.shift();
    if (!current || typeof current !== 'object' || seen.has(current)) continue;
    seen.add(current);
    const code = codeOf(current);
    const message = current instanceof Error ? current.message : '';
    // A SQLSTATE is five characters; Node's socket codes start with E and are longer.
    if (code && /^[0-9A-Z]{5}$/.test(code)) {
      if (code in FATAL_STATES) return { kind: 'fatal', reason: `${FATAL_STATES[code]} (${code}: ${message})` };
      if (code in UNAVAILABLE_STATES) return { kind: 'unavailable', reason: UNAVAILABLE_STATES[code]! };
      if (code.startsWith('08')) return { kind: 'unavailable', reason: `the connection failed (${code}: ${message})` };
      if (code in CONTENDED_STATES) return { kind: 'contended', reason: CONTENDED_STATES[code]! };
    }
    if (code && code in NETWORK_WORDS) return { kind: 'unavailable', reason: NETWORK_WORDS[code]! };
    // The client's own bound on a statement (warehouse/statement-watch.ts): the server did not answer at all.
    if (current instanceof Error && current.name === 'WarehouseSilentError')
      return { kind: 'unavailable', reason: message };
    if (LOST_CONNECTION.some((pattern) => pattern.test(message)))
      return { kind: 'unavailable', reason: `the connection was lost (${message})` };
    if (current instanceof AggregateError) queue.push(...current.errors);
    queue.push((current as { cause?: unknown }).cause);
  }
  return undefined;
}
