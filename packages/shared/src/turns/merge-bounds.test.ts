import { randomBytes } from 'node:crypto';
import { insertTestUser, testDb } from '../../../../tests/helpers/db';
import { withTransaction } from '../db';
import { createTurn, MERGE_MAX_CHARS, MERGE_MAX_MESSAGES, mergeIntoQueued } from './starting';

const db = testDb();
afterAll(() => db.end());

const lane = { maxActiveTurnsPerUser: 3, sessionIdleSeconds: 600 };
const origin = { channel: 'telegram' as const, chat_id: '42' };

/**
 * A chat flood over the message rate: each message joins the session's queued turn (if_busy=merge) or,
 * with none that may take it, queues one, as the gateway's insertTurn does. Answers the bytes of
 * merged_inputs each message's statement wrote.
 */
async function flood(userId: string, sessionId: string, texts: string[]): Promise<number> {
  let written = 0;
  for (const text of texts) {
    written += await withTransaction(db, async (client) => {
      const message = { text, origin, startAfterMs: 60_000 };
      const merged = await mergeIntoQueued(client, sessionId, message);
      if (!merged) {
        await createTurn(client, lane, { userId, sessionId, sessionKey: 'agent:main:main', ...message });
        return 0;
      }
      const row = await client.query<{ bytes: number }>('SELECT pg_column_size(merged_inputs) AS bytes FROM turns WHERE id = $1', [merged]);
      return row.rows[0]?.bytes ?? 0;
    });
  }
  return written;
}

describe('a chat flood merged into queued turns', () => {
  it('writes a bounded row per message and keeps every message, in order, in turns of bounded size', async () => {
    const { userId, sessionId } = await insertTestUser(db);
    const running = await withTransaction(db, (client) =>
      createTurn(client, lane, { userId, sessionId, sessionKey: 'agent:main:main', text: 'the running one', origin }),
    );
    expect(running.owed.some((entry) => entry.kind === 'event' && entry.event.type === 'turn_started')).toBe(true);

    // 300 chat messages of 4 KB that do not compress: merged all into one turn, each would rewrite
    // the whole array so far, some 135 MB in all, and the turn would send 300 messages in one model call.
    const texts = Array.from({ length: 300 }, () => randomBytes(3_000).toString('base64'));
    const written = await flood(userId, sessionId, texts);
    expect(written).toBeLessThan(texts.length * (MERGE_MAX_CHARS + 8_000));

    const queued = await db.query<{ inputs: string[] }>(
      `SELECT ARRAY[input] || merged_inputs AS inputs FROM turns WHERE session_id = $1 AND status = 'queued' ORDER BY lane_seq`,
      [sessionId],
    );
    expect(queued.rows.flatMap((row) => row.inputs)).toEqual(texts);
    for (const { inputs } of queued.rows) {
      expect(inputs.length).toBeLessThanOrEqual(MERGE_MAX_MESSAGES);
      expect(inputs.join('').length).toBeLessThanOrEqual(MERGE_MAX_CHARS);
    }
  });

  it('still merges a normal burst into the one queued turn', async () => {
    const { userId, sessionId } = await insertTestUser(db);
    await withTransaction(db, (client) =>
      createTurn(client, lane, { userId, sessionId, sessionKey: 'agent:main:main', text: 'busy', origin }),
    );
    const texts = Array.from({ length: MERGE_MAX_MESSAGES }, (_, i) => `message ${i}`);
    await flood(userId, sessionId, texts);
    const queued = await db.query<{ inputs: string[] }>(
      `SELECT ARRAY[input] || merged_inputs AS inputs FROM turns WHERE session_id = $1 AND status = 'queued'`,
      [sessionId],
    );
    expect(queued.rows.map((row) => row.inputs)).toEqual([texts]);
  });
});
