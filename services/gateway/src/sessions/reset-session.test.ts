import { createDb, withTransaction, type Db, type Queues } from '@assistant/shared';
import { insertTestUser } from '../../../../tests/helpers/db';
import { resetSession } from './reset-session';

let db: Db;

beforeAll(() => {
  db = createDb(process.env.DATABASE_URL as string, { max: 3 });
});

afterAll(async () => {
  await db.end();
});

const KEY = 'agent:main:main';

/** A Redis that records the digest jobs queued. */
function digestQueue(): { queues: Pick<Queues, 'session-digests'>; added: jest.Mock } {
  const added = jest.fn(() => Promise.resolve());
  return { queues: { 'session-digests': { add: added } } as unknown as Pick<Queues, 'session-digests'>, added };
}

const sessionsOf = async (userId: string) =>
  (
    await db.query<{ id: string; archived: boolean }>(
      'SELECT id, archived_at IS NOT NULL AS archived FROM sessions WHERE user_id = $1 AND session_key = $2 ORDER BY created_at, archived_at',
      [userId, KEY],
    )
  ).rows;

describe('resetSession', () => {
  it('takes two resets of a session in turn: the second finds the fresh session, and the session is digested and archived once', async () => {
    const { userId, sessionId } = await insertTestUser(db);
    await db.query("INSERT INTO messages (session_id, role, content) VALUES ($1, 'user', 'my sister visits in June')", [sessionId]);
    const { queues, added } = digestQueue();
    const [first, second] = [await db.connect(), await db.connect()];
    try {
      await first.query('BEGIN');
      expect(await resetSession(first, queues, userId, KEY)).toBe(true);
      // The second starts while the first has not committed: it waits for it, then sees its fresh session.
      await second.query('BEGIN');
      const later = resetSession(second, queues, userId, KEY);
      await first.query('COMMIT');
      expect(await later).toBe(true);
      await second.query('COMMIT');
    } finally {
      first.release();
      second.release();
    }
    expect(added).toHaveBeenCalledTimes(1);
    expect(added).toHaveBeenCalledWith(
      'digest',
      { sessionId, reason: 'reset' },
      expect.objectContaining({ jobId: `digest-reset.${sessionId}` }),
    );
    const sessions = await sessionsOf(userId);
    expect(sessions.map((session) => session.archived).sort()).toEqual([false, true]);
    expect(sessions.find((session) => session.archived)?.id).toBe(sessionId);
  });

  it('leaves a fresh session as it is, and answers false for a key with none', async () => {
    const { userId, sessionId } = await insertTestUser(db);
    const { queues, added } = digestQueue();
    expect(await withTransaction(db, (client) => resetSession(client, queues, userId, KEY))).toBe(true);
    expect(added).not.toHaveBeenCalled();
    expect(await sessionsOf(userId)).toEqual([{ id: sessionId, archived: false }]);
    expect(await withTransaction(db, (client) => resetSession(client, queues, userId, 'agent:main:api:direct:none'))).toBe(false);
  });
});
