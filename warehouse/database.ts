import { Kysely, PostgresDialect, type Selectable } from 'kysely';
import pg from 'pg';
import type { Database } from '../schema/database.ts';

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

/** A single connection, outside any pool, guarded like every other (guardClient). */
export function newClient(config: string | pg.ClientConfig): pg.Client {
  return guardClient(new pg.Client(config));
}

/** One pool per process, shared by every activity. */
export function openWarehouse(url: string, poolSize: number, applicationName = 'ddsync'): Warehouse {
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    application_name: applicationName,
    // A warehouse that drops packets (a failover moving its address) fails a connect within this, not
    // after the operating system's TCP timeout; keep-alives find a dead connection the same way.
    connectionTimeoutMillis: 10_000,
    keepAlive: true,
  });
  // Every client the pool makes is guarded before anyone can check it out.
  pool.on('connect', (client) => guardClient(client));
  // An idle client that loses its connection: the pool drops it and emits this; the next query reconnects.
  pool.on('error', () => undefined);
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  pools.set(db, pool);
  return db;
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
