import type { Client } from '@temporalio/client';
import type { Config } from '../../platform/config.ts';
import { scrubSecrets } from '../../platform/secrets.ts';
import { openWarehouse } from '../../warehouse/database.ts';
import { readWarehouseStatus } from '../../warehouse/status/read-status.ts';
import { probeWrites } from '../../warehouse/write-probe.ts';
import { readTemporalFacts } from '../../infra/temporal-status.ts';
import { connectClient } from '../../infra/temporal-connection.ts';
import { networkReason, temporalEndpoint, warehouseEndpoint } from '../../infra/connection-failure.ts';
import type { ScheduleConfig } from '../../infra/schedules.ts';
import type { ReaderSetting, TemporalSight, WarehouseSight } from './judge.ts';

// The I/O of `ddsync status`: one look at the warehouse and one at Temporal, side by side. Whatever
// goes wrong becomes a sentence saying what could not be seen; nothing here throws.

/** Temporal gets this long to answer everything status asks it. */
const TEMPORAL_DEADLINE_MS = 20_000;

export async function lookAtWarehouse(url: string, via: ReaderSetting): Promise<WarehouseSight> {
  const where = warehouseEndpoint(url).where;
  const db = openWarehouse(url, 1, 'ddsync-status', { kind: 'read' });
  try {
    const status = await readWarehouseStatus(db);
    // Reads work on a disk that is full under the tables: only a write tells (warehouse/write-probe.ts).
    return { seen: true, where, via, status, writes: await probeWrites(db) };
  } catch (error) {
    return { seen: false, where, via, problem: scrubSecrets(warehouseProblem(error, where, via)) };
  } finally {
    await db.destroy().catch(() => undefined);
  }
}

type TemporalConfig = NonNullable<Config['temporal']>;

/** With a client of its own (connected and closed here) or one the caller keeps (the demo's). */
export async function lookAtTemporal(
  target: { config: TemporalConfig } | { client: Client; address: string },
  schedules: ScheduleConfig,
): Promise<TemporalSight> {
  const namespace = 'config' in target ? target.config.namespace : target.client.options.namespace;
  const address = 'config' in target ? target.config.address : target.address;
  const where = temporalEndpoint(address, namespace).where;
  let client: Client;
  try {
    client = 'config' in target ? await connectClient(target.config) : target.client;
  } catch (error) {
    // connectClient's ConnectionFailedError says where it looked, why it failed and what to do.
    return { seen: false, where, problem: scrubSecrets(error instanceof Error ? error.message : String(error)) };
  }
  try {
    const facts = await client.connection.withDeadline(Date.now() + TEMPORAL_DEADLINE_MS, () =>
      readTemporalFacts(client, schedules),
    );
    return { seen: true, where, facts };
  } catch (error) {
    return { seen: false, where, problem: scrubSecrets(temporalProblem(error, where)) };
  } finally {
    if ('config' in target) await client.connection.close().catch(() => undefined);
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Why the warehouse could not be read, in one sentence naming the setting to check. Pure. */
export function warehouseProblem(error: unknown, where: string, via: ReaderSetting): string {
  const code = (error as { code?: unknown } | null)?.code;
  const message = messageOf(error);
  switch (code) {
    case '28P01':
      return `the warehouse at ${where} refused the password of ${via}`;
    case '28000':
      return `the warehouse at ${where} refused the role of ${via} (${message})`;
    case '3D000':
      return `the database of ${via} does not exist at ${where}`;
    case '42P01':
    case '42883':
      return `the warehouse at ${where} lacks bi_sync_status (${message}): a ddsync older than this one migrated it; \`ddsync migrate\` or a worker's start brings it up to date`;
    case '42501':
      return `the role of ${via} may not read the warehouse's status (${message}): make it a member of ddsync_reader`;
    case '57014':
      return `the warehouse at ${where} did not answer within 30 s (statement_timeout)`;
    case '57P03':
      return `the warehouse at ${where} takes no connections now: it is starting, recovering or shutting down (${message})`;
  }
  // A server error carries a severity; without one, nothing answered.
  if (error instanceof Error && 'severity' in error) return `the warehouse at ${where} could not be read: ${message}`;
  // A frozen server (a stopped process, a frozen VM: its kernel still accepts the connection) never
  // finishes the startup: pg-pool and pg word the same timeout differently.
  const reason = /timeout exceeded when trying to connect|terminated due to connection timeout/i.test(message)
    ? 'no connection within 10 s (the server does not answer: stopped, frozen or unreachable)'
    : networkReason(error);
  // Refused: no server runs there. One that stopped by itself may have run out of disk for its WAL.
  const down = /ECONNREFUSED/.test(codesOf(error).join(' '))
    ? ': is its server running? (a PostgreSQL whose WAL disk filled stops itself, its log saying `PANIC: could not write to file "pg_wal/…": No space left on device`: free or grow that disk and start it)'
    : '';
  return `cannot reach the warehouse at ${where}: ${reason}${down}; check ${via}`;
}

/** The `code`s of an error and its causes and aggregated errors (a connection to several addresses fails as an AggregateError). */
function codesOf(error: unknown, depth = 0): string[] {
  if (!error || typeof error !== 'object' || depth > 4) return [];
  const code = (error as { code?: unknown }).code;
  const inner = error instanceof AggregateError ? error.errors : [(error as { cause?: unknown }).cause];
  return [...(typeof code === 'string' ? [code] : []), ...inner.flatMap((e) => codesOf(e, depth + 1))];
}

/** Why Temporal could not answer, once connected. Pure. */
export function temporalProblem(error: unknown, where: string): string {
  const code = (error as { code?: unknown } | null)?.code;
  // gRPC 4: DEADLINE_EXCEEDED; 14: UNAVAILABLE.
  if (code === 4) return `Temporal at ${where} did not answer within ${TEMPORAL_DEADLINE_MS / 1000} s`;
  if (code === 14) return `cannot reach Temporal at ${where}: ${messageOf(error)}`;
  return `Temporal at ${where} could not be read: ${messageOf(error)}`;
}
