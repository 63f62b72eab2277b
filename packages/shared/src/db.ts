import { createHash } from 'node:crypto';
import { Socket } from 'node:net';
import pg from 'pg';
import { coalesceWrites } from './socket-writes';

export type Db = pg.Pool;
export type DbClient = pg.PoolClient;
/** Anything that can run a query: the pool or a client inside a transaction. */
export type Queryable = Pick<pg.Pool, 'query'>;

// COUNT(*) and BIGSERIAL come back as strings by default; our counts and sequences fit in a number.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

/**
 * How long a query waits for a free pooled connection before failing. Under load, waiting for
 * a connection is backpressure, not an error: this bound only catches a pool that never frees.
 */
export const DB_CONNECT_WAIT_MS = 120_000;

/** Statements one connection keeps prepared at most; past it, new texts run unprepared. */
const PREPARED_PER_CONNECTION = 1_000;

const statementNames = new Map<string, string>();

/** A statement's name: a hash of its text, remembered for the few hundred texts the code has. */
function statementName(text: string): string {
  let name = statementNames.get(text);
  if (name === undefined) {
    name = `s${createHash('sha1').update(text).digest('base64url')}`;
    if (statementNames.size < PREPARED_PER_CONNECTION) statementNames.set(text, name);
  }
  return name;
}

/**
 * Prepares every parameterised statement once per connection (named by a hash of its text),
 * so PostgreSQL parses and plans the hot path's few dozen statements once instead of on every
 * call. Statements without parameters (BEGIN, SET LOCAL …) run as they are.
 */
function prepareStatements(client: pg.PoolClient): void {
  const prepared = new Set<string>();
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  (client as { query: unknown }).query = (config: unknown, values?: unknown, callback?: unknown) => {
    if (typeof config === 'string' && Array.isArray(values) && values.length > 0) {
      const name = statementName(config);
      if (prepared.has(name) || prepared.size < PREPARED_PER_CONNECTION) {
        prepared.add(name);
        return query({ name, text: config, values }, callback);
      }
    }
    return query(config, values, callback);
  };
}

export function createDb(databaseUrl: string, options: { max?: number; application?: string } = {}): Db {
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: options.max ?? 10,
    application_name: options.application ?? 'assistant',
    connectionTimeoutMillis: DB_CONNECT_WAIT_MS,
    // Idle connections stay open: a message after a quiet spell would otherwise wait for new ones,
    // each a PostgreSQL backend that loads its catalogs and plans its statements again (a turn
    // after 35 s of quiet took 174–206 ms with idle connections closed after 30 s, 63–101 ms with
    // them kept). TCP keepalive probes a connection after a minute of quiet, which keeps a NAT's
    // mapping of it alive and finds a peer that is gone (the pool then drops that client).
    idleTimeoutMillis: 0,
    keepAlive: true,
    keepAliveInitialDelayMillis: 60_000,
    // A client sends a query without waiting for the one before it to be answered; see begin().
    pipeline: true,
    // Every statement is bounded; tool transactions lower this further with SET LOCAL.
    statement_timeout: 30_000,
    // A pipelined transaction's messages leave in one write.
    stream: () => {
      const socket = new Socket();
      socket.once('connect', () => coalesceWrites(socket));
      return socket;
    },
  });
  // A client losing its connection (a PostgreSQL restart, a network cut) must not crash the
  // process. An idle one is the pool's to drop (its 'error'); one checked out has no listener of
  // the pool's while it is out, so each client gets its own: the query in flight fails with the
  // error, which its caller handles, and the pool drops the client when it comes back.
  pool.on('error', () => undefined);
  pool.on('connect', (client) => {
    client.on('error', () => undefined);
    prepareStatements(client);
  });
  return pool;
}

/**
 * A WHERE condition that lets its statement's own transaction commit without waiting for its
 * WAL flush (`synchronous_commit` off for that transaction alone; the next synchronous commit
 * flushes it anyway). Only for autocommit statements whose loss in a database crash leaves a
 * state the system already recovers from, as after a process killed just before them.
 */
export const UNFLUSHED_COMMIT = `set_config('synchronous_commit', 'off', true) IS NOT NULL`;

/**
 * Opens a transaction without waiting for it: on a pipelined client BEGIN goes out with the
 * transaction's first statement, one round trip for both. Await the result before COMMIT; a
 * BEGIN that failed (a lost connection) fails the statements behind it as well.
 */
export function begin(client: DbClient, text = 'BEGIN'): Promise<unknown> {
  const begun = client.query(text);
  // Seen by the caller before its COMMIT, or moot when a statement behind it failed first.
  begun.catch(() => undefined);
  return begun;
}

/**
 * Runs independent queries on one connection, issued in the order given without waiting for
 * each other: the pool's clients are pipelined, so they cost one round trip together. Answers
 * their results in order, or throws the first one's error once all have settled.
 */
export async function together<T extends readonly unknown[]>(
  db: Db,
  ...queries: { [K in keyof T]: (client: DbClient) => Promise<T[K]> }
): Promise<T> {
  const client = await db.connect();
  try {
    const settled = await Promise.allSettled(queries.map((query) => query(client)));
    const failed = settled.find((outcome) => outcome.status === 'rejected');
    if (failed) throw failed.reason;
    return settled.map((outcome) => (outcome as PromiseFulfilledResult<unknown>).value) as unknown as T;
  } finally {
    client.release();
  }
}

/**
 * Runs the transaction's last statement with COMMIT right behind it: on a pipelined client both
 * go out together, one round trip instead of two. Nothing may run in the transaction after it.
 * In a transaction that already failed PostgreSQL answers the COMMIT with a rollback, and the
 * statement's own error is what is thrown.
 */
export async function commitWith<R extends pg.QueryResultRow>(
  client: DbClient,
  text: string,
  values: unknown[],
): Promise<pg.QueryResult<R>> {
  const [result] = await Promise.all([client.query<R>(text, values), client.query('COMMIT')]);
  return result;
}

/**
 * For code that takes a Queryable and runs one statement: when `last`, that statement is the
 * transaction's last and is committed with it (commitWith); otherwise the client itself.
 */
export function committingLast(client: DbClient, last = true): Queryable {
  return last ? { query: ((text: string, values: unknown[]) => commitWith(client, text, values)) as Queryable['query'] } : client;
}

/** Commits the client's transaction, unless its last statement already did (commitWith). */
export async function commit(client: DbClient): Promise<void> {
  if (client.getTransactionStatus() !== 'I') await client.query('COMMIT');
}

/** Runs fn inside BEGIN/COMMIT, rolling back on any error. */
export async function withTransaction<T>(db: Db, fn: (client: DbClient) => Promise<T>): Promise<T> {
  const client = await db.connect();
  try {
    const begun = begin(client);
    const result = await fn(client);
    await begun;
    await commit(client);
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

/** SQLSTATE classes and codes of a connection that could not be had or was lost, not of a query. */
const CONNECTION_SQLSTATES = ['53300', '57P01', '57P02', '57P03'];
const CONNECTION_ERRNOS = ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE'];

/**
 * True when the database could not be reached (too many clients, a restart, a dropped socket, a
 * pool wait that ran out): worth retrying later, never the fault of the work itself.
 */
export function isConnectionError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && (code.startsWith('08') || CONNECTION_SQLSTATES.includes(code) || CONNECTION_ERRNOS.includes(code))) {
    return true;
  }
  const message = error instanceof Error ? error.message : '';
  return /timeout exceeded when trying to connect|Connection terminated/i.test(message);
}

/** Answers within timeoutMs or throws: used by /readyz. */
export async function pingDb(db: Db, timeoutMs = 1_000): Promise<void> {
  await withTimeout(db.query('SELECT 1'), timeoutMs, 'PostgreSQL did not answer');
}

export function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
