import { Kysely, PostgresDialect, type Selectable } from 'kysely';
import pg from 'pg';
import type { Database } from '../schema/database.ts';
import { STATEMENT_BOUNDS, scaledBounds, serverBoundsSql, type StatementKind } from './statement-bounds.ts';
import { StatementWatch, boundStatements, dropConnection, CONNECT_TIMEOUT_MS } from './statement-watch.ts';

// bigint and numeric come back as strings by default; counts fit in a JS number.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

export type Warehouse = Kysely<Database>;

/**
 * A table's (or view's) row as a select reads it: the generated types with the overlay. A hand-typed
 * result shape names the columns it reads as stored from it, e.g. `Pick<Row<'plots'>, 'id' | 'content_hash'>`.
 */
export type Row<T extends keyof Database> = Selectable<Database[T]>;

const pools = new WeakMap<Warehouse, pg.Pool>();

const guarded = new WeakSet<pg.ClientBase>();

/**
 * The one rule for every pg client ddsync makes, pooled or not: it has an 'error' listener from its
 * first moment. The server ends connections (a restart, a failover, `pg_terminate_backend`, a COPY cut
 * short); node-postgres then emits 'error' on the client as well as failing the statement in flight, and
 * an 'error' event nobody listens to ends the Node process. The pool listens only while a client is idle:
 * one checked out (every Kysely statement, every page transaction) had none, which is how a warehouse
 * restart killed the worker. Nothing is lost by ignoring the event here: the statement in flight, or the
 * next one, fails with the error, reaches its caller and is retried there; the pool drops the client.
 */
export function guardClient<C extends pg.ClientBase>(client: C): C {
  if (!guarded.has(client)) {
    guarded.add(client);
    client.on('error', () => undefined);
  }
  return client;
}

/**
 * A single connection, outside any pool, guarded like every other (guardClient), its statements bounded
 * by the client's bound of `work` (no server-side bounds are set: a caller sets its own).
 */
export function newClient(config: string | pg.ClientConfig): pg.Client {
  const client = guardClient(new pg.Client(config));
  boundStatements(client, STATEMENT_BOUNDS.work.clientMs);
  return client;
}

export interface WarehouseOptions {
  /** What the pool's statements do, which bounds them (warehouse/statement-bounds.ts); default `work`. */
  kind?: StatementKind;
  /** Every bound times this (DDSYNC_PG_TIMEOUT_SCALE); default 1. */
  timeoutScale?: number;
}

interface PoolFamily {
  url: string;
  poolSize: number;
  applicationName: string;
  timeoutScale: number;
  /** The statements in flight on every pool of the family, and who is told when the server falls silent. */
  watch: StatementWatch;
  /** The family's pool of each kind, made when first asked for (warehouseFor). */
  byKind: Map<StatementKind, Warehouse>;
}

const families = new WeakMap<Warehouse, PoolFamily>();

/** A probe of a silent server: a new connection and `select 1`, each within this. */
const PROBE_TIMEOUT_MS = 5_000;

/** Whether the server answers now, on a connection of its own (never a pooled one that may be stuck). */
async function probeAnswer(url: string, applicationName: string): Promise<void> {
  const client = newClient({
    connectionString: url,
    connectionTimeoutMillis: PROBE_TIMEOUT_MS,
    application_name: `${applicationName}-probe`,
  });
  try {
    await client.connect();
    await client.query({ text: 'select 1', query_timeout: PROBE_TIMEOUT_MS } as pg.QueryConfig);
    void client.end().catch(() => undefined);
  } catch (error) {
    // A frozen server never answers a goodbye either: the socket is dropped, not ended.
    dropConnection(client);
    throw error;
  }
}

/** One pool per process, shared by every activity. */
export function openWarehouse(
  url: string,
  poolSize: number,
  applicationName = 'ddsync',
  options: WarehouseOptions = {},
): Warehouse {
  const kind = options.kind ?? 'work';
  const family: PoolFamily = {
    url,
    poolSize,
    applicationName,
    timeoutScale: options.timeoutScale ?? 1,
    watch: new StatementWatch(() => probeAnswer(url, applicationName)),
    byKind: new Map(),
  };
  return openPool(family, kind, poolSize);
}

function openPool(family: PoolFamily, kind: StatementKind, poolSize: number): Warehouse {
  const bounds = scaledBounds(kind, family.timeoutScale);
  const pool = new pg.Pool({
    connectionString: family.url,
    max: poolSize,
    application_name: family.applicationName,
    // A warehouse that drops packets (a failover moving its address) fails a connect within this, not
    // after the operating system's TCP timeout; keep-alives find a dead connection the same way. A frozen
    // server (its kernel still accepts the connection) is met by the same bound: the startup never ends.
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    keepAlive: true,
  });
  // Every client the pool makes is guarded and bounded before anyone can check it out; its first
  // statement (queued before any of its user's) gives the session the kind's server-side bounds.
  pool.on('connect', (client) => {
    boundStatements(guardClient(client), bounds.clientMs, family.watch);
    client.query(serverBoundsSql(bounds)).catch(() => undefined);
  });
  // An idle client that loses its connection: the pool drops it and emits this; the next query reconnects.
  pool.on('error', () => undefined);
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  pools.set(db, pool);
  families.set(db, family);
  family.byKind.set(kind, db);
  if (family.byKind.size === 1) {
    // The first pool of a family ends the others with it: `db.destroy()` is the one call a command makes.
    const end = pool.end.bind(pool);
    pool.end = (async () => {
      family.watch.stop();
      await Promise.all([...family.byKind.values()].filter((other) => other !== db).map((other) => other.destroy()));
      return end();
    }) as typeof pool.end;
  }
  return db;
}

/**
 * The warehouse of `db`'s family whose statements are bounded for `kind` (a pool of its own, made on
 * first use and ended with `db`): the end of a refresh, an export or the migrations
 * run statements that may take minutes at a million plots, which a page's bound would cut short.
 */
export function warehouseFor(db: Warehouse, kind: StatementKind): Warehouse {
  const family = families.get(db);
  if (!family) throw new Error('warehouseFor needs a warehouse opened by openWarehouse');
  // As many connections as the family's first pool (made only when used): a caller waiting for a free
  // one longer than the connect timeout would fail as if the warehouse were away.
  return family.byKind.get(kind) ?? openPool(family, kind, family.poolSize);
}

/**
 * warehouseFor when `db` was opened by openWarehouse, else `db` itself (a Kysely a test or a tool made
 * otherwise, whose bounds are its maker's).
 */
// biome-ignore lint/suspicious/noExplicitAny: the migrator works on any schema
export function boundedFor<K extends Kysely<any>>(db: K, kind: StatementKind): K {
  return families.has(db as unknown as Warehouse)
    ? (warehouseFor(db as unknown as Warehouse, kind) as unknown as K)
    : db;
}

/** Told when the warehouse stops answering statements (a frozen server) and when it answers again. */
export interface SilenceListener {
  silent(reason: string): void;
  answering(): void;
}

/** `listener` hears of every silence of `db`'s server (StatementWatch); returns how to stop listening. */
export function watchSilence(db: Warehouse, listener: SilenceListener): () => void {
  const family = families.get(db);
  if (!family) throw new Error('watchSilence needs a warehouse opened by openWarehouse');
  return family.watch.listen(listener);
}

const onClients = new WeakMap<pg.PoolClient, Warehouse>();

/** Kysely over this one connection (made once per connection); releasing it keeps the connection out of the pool. */
function onClient(client: pg.PoolClient): Warehouse {
  let db = onClients.get(client);
  if (!db) {
    const connection = { query: client.query.bind(client), release: () => undefined };
    db = new Kysely<Database>({
      dialect: new PostgresDialect({
        pool: { connect: async () => connection, end: async () => undefined } as unknown as pg.Pool,
      }),
    });
    onClients.set(client, db);
  }
  return db;
}

/**
 * One transaction on one pooled connection, given both as Kysely (for ordinary statements) and as
 * the pg client itself (for COPY, which Kysely does not speak). `prepare` runs on the connection
 * before the transaction begins, so what it creates (temporary tables) outlives a rollback.
 */
export async function withClientTransaction<T>(
  db: Warehouse,
  prepare: (client: pg.PoolClient) => Promise<void>,
  work: (trx: Warehouse, client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const pool = pools.get(db);
  if (!pool) throw new Error('withClientTransaction needs a warehouse opened by openWarehouse');
  const client = await pool.connect();
  const trx = onClient(client);
  let broken: Error | undefined;
  try {
    try {
      await prepare(client);
    } catch (error) {
      // Whatever went wrong before the transaction, the connection is not trusted again.
      broken = error as Error;
      throw error;
    }
    try {
      await client.query('begin');
      const result = await work(trx, client);
      await client.query('commit');
      return result;
    } catch (error) {
      // A connection that cannot even roll back is dropped rather than reused.
      await client.query('rollback').catch((e: Error) => {
        broken = e;
      });
      throw error;
    }
  } finally {
    client.release(broken);
  }
}
