import { createDb, type Db, type Queryable } from '../db';
import type { StoredMessage } from './history';
import { SessionHistories } from './session-histories';

/** A session's latest messages, read once whole and then only what was added, always as the database has them. */
let db: Db;

beforeAll(() => {
  db = createDb(process.env.DATABASE_URL as string, { max: 2 });
});

afterAll(async () => {
  await db.end();
});

async function newSession(): Promise<string> {
  const user = await db.query<{ id: string }>(`INSERT INTO users (display_name) VALUES ('histories') RETURNING id`);
  const session = await db.query<{ id: string }>(
    `INSERT INTO sessions (user_id, session_key) VALUES ($1, 'agent:main:main') RETURNING id`,
    [user.rows[0]?.id],
  );
  return session.rows[0]?.id as string;
}

async function say(sessionId: string, ...texts: string[]): Promise<number[]> {
  const ids: number[] = [];
  for (const text of texts) {
    const { rows } = await db.query<{ id: number }>(
      `INSERT INTO messages (session_id, role, content) VALUES ($1, 'user', $2) RETURNING id`,
      [sessionId, text],
    );
    ids.push(rows[0]?.id as number);
  }
  return ids;
}

/** The database as it is: what a process without anything kept reads. */
const whole = (sessionId: string, rows: number) => new SessionHistories(rows, 1_000_000).latest(db, sessionId);
const texts = (messages: readonly StoredMessage[]) => messages.map((message) => message.content);

/** Counts the message rows each read brings back (a row with no message is the window's count only). */
function counting(): { db: Queryable; sent: number[] } {
  const sent: number[] = [];
  return {
    sent,
    db: {
      query: (async (text: string, values: unknown[]) => {
        const result = await db.query<{ role: string | null }>(text, values);
        sent.push(result.rows.filter((row) => row.role !== null).length);
        return result;
      }) as Queryable['query'],
    },
  };
}

it('reads the window whole once, then only the messages added since, sliding as it grows', async () => {
  const sessionId = await newSession();
  await say(sessionId, 'one', 'two', 'three');
  const histories = new SessionHistories(4, 1_000_000);
  const probe = counting();

  expect(texts(await histories.latest(probe.db, sessionId))).toEqual(['one', 'two', 'three']);
  await say(sessionId, 'four', 'five');
  expect(texts(await histories.latest(probe.db, sessionId))).toEqual(['two', 'three', 'four', 'five']);
  expect(texts(await histories.latest(probe.db, sessionId))).toEqual(['two', 'three', 'four', 'five']);
  expect(probe.sent).toEqual([3, 2, 0]);
});

it('reads the window again when a message older than the newest one held was committed since', async () => {
  const sessionId = await newSession();
  await say(sessionId, 'one');
  // A transaction takes its id before "three" is written, and commits after the read.
  const { rows } = await db.query<{ id: number }>(`SELECT nextval(pg_get_serial_sequence('messages', 'id')) AS id`);
  await say(sessionId, 'three');
  const histories = new SessionHistories(10, 1_000_000);
  expect(texts(await histories.latest(db, sessionId))).toEqual(['one', 'three']);
  await db.query(`INSERT INTO messages (id, session_id, role, content) OVERRIDING SYSTEM VALUE VALUES ($1, $2, 'user', 'two')`, [
    rows[0]?.id,
    sessionId,
  ]);

  expect(texts(await histories.latest(db, sessionId))).toEqual(['one', 'two', 'three']);
  expect(await histories.latest(db, sessionId)).toEqual(await whole(sessionId, 10));
});

it('reads the window again when messages held were deleted, and keeps only what fits its characters', async () => {
  const sessionId = await newSession();
  await say(sessionId, 'one', 'two');
  const histories = new SessionHistories(10, 1_000_000);
  await histories.latest(db, sessionId);
  await db.query(`DELETE FROM messages WHERE session_id = $1 AND content = 'two'`, [sessionId]);
  await say(sessionId, 'three');
  expect(texts(await histories.latest(db, sessionId))).toEqual(['one', 'three']);

  const small = new SessionHistories(10, 8);
  const other = await newSession();
  await say(other, 'a long enough text');
  const probe = counting();
  await small.latest(probe.db, sessionId);
  await small.latest(probe.db, other);
  // The second session's text alone is over the limit, so neither is kept: both are read whole again.
  await small.latest(probe.db, sessionId);
  await small.latest(probe.db, other);
  expect(probe.sent).toEqual([2, 1, 2, 1]);
});

it('reaches back to the newest user message, however many messages came after it', async () => {
  const sessionId = await newSession();
  // With no user message at all (only reminders, say), the window keeps its size.
  for (const n of [1, 2, 3, 4]) {
    await db.query(`INSERT INTO messages (session_id, role, content) VALUES ($1, 'assistant', $2)`, [sessionId, `reminder ${n}`]);
  }
  expect(texts(await whole(sessionId, 3))).toEqual(['reminder 2', 'reminder 3', 'reminder 4']);
  await say(sessionId, 'earlier');
  const histories = new SessionHistories(3, 1_000_000);
  await histories.latest(db, sessionId);
  await say(sessionId, 'the question');
  // A turn's steps: many answers (tool calls and results) after the question.
  for (const n of [1, 2, 3, 4, 5]) {
    await db.query(`INSERT INTO messages (session_id, role, content) VALUES ($1, 'assistant', $2)`, [sessionId, `step ${n}`]);
  }
  const expected = ['the question', 'step 1', 'step 2', 'step 3', 'step 4', 'step 5'];
  expect(texts(await histories.latest(db, sessionId))).toEqual(expected);
  expect(texts(await whole(sessionId, 3))).toEqual(expected);
  // Once a newer question comes, the window is its usual size again.
  await say(sessionId, 'next');
  expect(texts(await histories.latest(db, sessionId))).toEqual(['step 4', 'step 5', 'next']);
});
