import { insertTestUser } from '../../../tests/helpers/db';
import { createDb, type Queryable } from './db';
import { finishedTurns } from './runtime';

const db = createDb(process.env.DATABASE_URL as string, { max: 2 });
afterAll(() => db.end());

async function turn(): Promise<string> {
  const { userId, sessionId } = await insertTestUser(db);
  const found = await db.query<{ id: string }>(
    `INSERT INTO turns (user_id, session_id, session_key, input, created_at)
     VALUES ($1, $2, 'agent:main:main', 'hi', NOW() - INTERVAL '3 seconds') RETURNING id`,
    [userId, sessionId],
  );
  return found.rows[0]?.id as string;
}

describe('finishedTurns', () => {
  it('reads the turns finished together in one statement: a duration and a log line each', async () => {
    const turns = [await turn(), await turn()];
    let statements = 0;
    const counting: Queryable = {
      query: ((...args: Parameters<Queryable['query']>) => {
        statements += 1;
        return db.query(...args);
      }) as Queryable['query'],
    };
    const durations: number[] = [];
    const lines: Record<string, unknown>[] = [];
    const logged = new Promise<void>((resolve) => {
      const finished = finishedTurns({ observe: (_name, _labels, seconds) => durations.push(seconds) }, counting, {
        info: (fields: Record<string, unknown>) => {
          lines.push(fields);
          if (lines.length === turns.length) resolve();
        },
      });
      finished(turns[0] as string, 'completed');
      finished(turns[1] as string, 'failed');
    });
    await logged;

    expect(statements).toBe(1);
    expect(lines.map(({ turnId, status, sessionKey }) => ({ turnId, status, sessionKey }))).toEqual(
      expect.arrayContaining([
        { turnId: turns[0], status: 'completed', sessionKey: 'agent:main:main' },
        { turnId: turns[1], status: 'failed', sessionKey: 'agent:main:main' },
      ]),
    );
    for (const seconds of durations) expect(seconds).toBeGreaterThanOrEqual(2.9);
  });
});
