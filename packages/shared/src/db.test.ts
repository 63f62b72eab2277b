import type { Socket } from 'node:net';
import { begin, commitWith, createDb, isConnectionError, withTransaction } from './db';

describe('isConnectionError', () => {
  it('recognises a database that could not be reached', () => {
    expect(isConnectionError(Object.assign(new Error('sorry, too many clients already'), { code: '53300' }))).toBe(true);
    expect(isConnectionError(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }))).toBe(true);
    expect(isConnectionError(Object.assign(new Error('terminating connection'), { code: '57P01' }))).toBe(true);
    expect(isConnectionError(new Error('timeout exceeded when trying to connect'))).toBe(true);
    expect(isConnectionError(new Error('Connection terminated unexpectedly'))).toBe(true);
  });

  it('leaves errors of the work itself alone', () => {
    expect(isConnectionError(Object.assign(new Error('duplicate key value'), { code: '23505' }))).toBe(false);
    expect(isConnectionError(Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' }))).toBe(false);
    expect(isConnectionError(new Error('injected failure'))).toBe(false);
    expect(isConnectionError(undefined)).toBe(false);
  });
});

describe('createDb', () => {
  it('prepares a parameterised statement once per connection, and runs the others as they are', async () => {
    const db = createDb(process.env.DATABASE_URL as string, { max: 1 });
    try {
      const client = await db.connect();
      try {
        const twice = 'SELECT $1::int + 1 AS n';
        expect((await client.query<{ n: number }>(twice, [1])).rows[0]?.n).toBe(2);
        expect((await client.query<{ n: number }>(twice, [41])).rows[0]?.n).toBe(42);
        await client.query('SELECT 1');
        const prepared = await client.query<{ statement: string }>('SELECT statement FROM pg_prepared_statements');
        expect(prepared.rows.map((row) => row.statement)).toEqual([twice]);
      } finally {
        client.release();
      }
    } finally {
      await db.end();
    }
  });

  it('sends a pipelined transaction in one write', async () => {
    const db = createDb(process.env.DATABASE_URL as string, { max: 1 });
    try {
      const client = await db.connect();
      try {
        const socket = client.connection.stream as Socket;
        let writes = 0;
        const write = socket._write.bind(socket);
        const writev = socket._writev?.bind(socket);
        socket._write = (chunk, encoding, callback) => {
          writes += 1;
          write(chunk, encoding, callback);
        };
        socket._writev = (chunks, callback) => {
          writes += 1;
          writev?.(chunks, callback);
        };
        const begun = begin(client);
        const result = await commitWith<{ n: number }>(client, 'SELECT $1::int AS n', [7]);
        await begun;
        expect(result.rows[0]?.n).toBe(7);
        expect(writes).toBe(1);
      } finally {
        client.release();
      }
    } finally {
      await db.end();
    }
  });
});

describe('commitWith', () => {
  it("commits the transaction with its last statement, and keeps a failed one's earlier writes out", async () => {
    const db = createDb(process.env.DATABASE_URL as string, { max: 1 });
    try {
      await db.query('CREATE TEMP TABLE IF NOT EXISTS commit_with (n int PRIMARY KEY)');
      const inserted = await withTransaction(db, async (client) => {
        await client.query('INSERT INTO commit_with VALUES ($1)', [1]);
        return commitWith<{ n: number }>(client, 'INSERT INTO commit_with VALUES ($1) RETURNING n', [2]);
      });
      expect(inserted.rows).toEqual([{ n: 2 }]);

      // A duplicate key fails the last statement: PostgreSQL answers its COMMIT with a rollback.
      await expect(
        withTransaction(db, async (client) => {
          await client.query('INSERT INTO commit_with VALUES ($1)', [3]);
          return commitWith(client, 'INSERT INTO commit_with VALUES ($1)', [2]);
        }),
      ).rejects.toMatchObject({ code: '23505' });

      // One pooled connection: a transaction left open would show here as rows not yet committed.
      const client = await db.connect();
      try {
        expect(client.getTransactionStatus()).toBe('I');
        expect((await client.query<{ n: number }>('SELECT n FROM commit_with ORDER BY n')).rows).toEqual([{ n: 1 }, { n: 2 }]);
      } finally {
        client.release();
      }
    } finally {
      await db.end();
    }
  });
});
