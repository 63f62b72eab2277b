import pg from 'pg';

export type Db = pg.Pool;
export type DbClient = pg.PoolClient;
/** Anything that can run a query: the pool or a client inside a transaction. */
export type Queryable = Pick<pg.Pool, 'query'>;

// COUNT(*) and BIGSERIAL come back as strings by default; our counts and sequences fit in a number.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

export function createDb(databaseUrl: string, options: { max?: number; application?: string } = {}): Db {
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: options.max ?? 10,
    application_name: options.application ?? 'assistant',
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
    // Every statement is bounded; tool transactions lower this further with SET LOCAL.
    statement_timeout: 30_000,
    keepAlive: true,
  });
  // An idle client losing its connection (a PostgreSQL restart) must not crash the process:
  // the pool drops it and opens a new one on the next query.
  pool.on('error', () => undefined);
  return pool;
}

/** Runs fn inside BEGIN/COMMIT, rolling back on any error. */
export async function withTransaction<T>(db: Db, fn: (client: DbClient) => Promise<T>): Promise<T> {
  const client = await db.connect();
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
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
