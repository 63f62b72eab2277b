import { Writable } from 'node:stream';
import { createDb, type Db } from '@assistant/shared';
import { insertTestUser } from '../../../../tests/helpers/db';
import { JsonStream } from './json-stream';
import { PAGE_BYTES, writeUserExport } from './user-export';

let db: Db;

beforeAll(() => {
  db = createDb(process.env.DATABASE_URL as string, { max: 2 });
});

afterAll(async () => {
  await db.end();
});

/** Exports the user into a string, noting the JSON size of every page of rows the database answered. */
async function exportOf(userId: string): Promise<{ text: string; pageBytes: number[] }> {
  const chunks: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString('utf8'));
      done();
    },
  });
  const query = jest.spyOn(db, 'query');
  try {
    await writeUserExport(db, userId, new JsonStream(sink));
    const results = await Promise.all(query.mock.results.map((result) => result.value as Promise<{ rows: { row?: unknown }[] }>));
    const pageBytes = results.map((result) => result.rows.reduce((sum, { row }) => sum + (row ? JSON.stringify(row).length : 0), 0));
    return { text: chunks.join(''), pageBytes };
  } finally {
    query.mockRestore();
  }
}

describe('writeUserExport', () => {
  it('reads large documents a few megabytes at a time, and every one of them whole', async () => {
    const { userId, sessionId } = await insertTestUser(db, 'export');
    const MEGABYTE = 1_000_000;
    const count = 8;
    await db.query(
      `INSERT INTO documents (id, user_id, title, title_key, content)
       SELECT gen_random_uuid(), $1, 'doc ' || n, 'doc ' || n, repeat(chr(97 + n), $2) FROM generate_series(1, $3) AS n`,
      [userId, MEGABYTE, count],
    );
    // Message ids are numbers: ten come after nine, not between one and two.
    await db.query(`INSERT INTO messages (session_id, role, content) SELECT $1, 'user', 'm' || n FROM generate_series(1, 12) AS n`, [
      sessionId,
    ]);

    const { text, pageBytes } = await exportOf(userId);
    expect(Math.max(...pageBytes)).toBeLessThan(PAGE_BYTES + 1.1 * MEGABYTE);
    const exported = JSON.parse(text) as {
      documents: { title: string; content: string }[];
      sessions: { messages: { content: string }[] }[];
    };
    expect(exported.documents.map((doc) => doc.content.length)).toEqual(Array(count).fill(MEGABYTE));
    expect(new Set(exported.documents.map((doc) => doc.title)).size).toBe(count);
    expect(exported.sessions[0]?.messages.map((message) => message.content)).toEqual(Array.from({ length: 12 }, (_, i) => `m${i + 1}`));
  });
});
