import type pg from 'pg';
import { Api, type ApiResponse } from '../scripts/lib/api';
import { TestSystem } from '../scripts/lib/system';
import { testDb } from './helpers/db';

/** GET /v1/sessions and a session's messages come in pages (docs/api.md#sessions), still a JSON array each. */
const system = new TestSystem();
let db: pg.Pool;
let api: Api;

beforeAll(async () => {
  db = testDb();
  await system.start({ env: { LLM_PROVIDER: 'offline' } });
  api = new Api(system.url);
});

afterAll(async () => {
  await system.stop();
  await db.end();
});

/** Every page from `path` on, following each answer's Link header. */
async function allPages<T>(user: Api, path: string): Promise<T[][]> {
  const pages: T[][] = [];
  for (let next: string | undefined = path; next;) {
    const res: ApiResponse<T[]> = await user.get<T[]>(next);
    expect(res.status).toBe(200);
    pages.push(res.body);
    next = /^<([^>]+)>; rel="next"$/.exec(res.headers.get('link') ?? '')?.[1];
  }
  return pages;
}

describe('session pages', () => {
  it('lists a user of many sessions a page at a time, ties in a fixed order, none repeated or left out', async () => {
    const user = await api.createUser(system.adminToken, { name: 'Many sessions' });
    // 450 sessions all active at the same instant: only the tie-break orders them.
    await db.query(
      `INSERT INTO sessions (user_id, session_key, last_activity_at)
       SELECT $1, 'agent:main:api:direct:peer' || n, TIMESTAMPTZ '2026-01-01 00:00:00.123456+00' FROM generate_series(1, 450) AS n`,
      [user.userId],
    );
    expect((await user.get<unknown[]>('/v1/sessions')).body).toHaveLength(450);
    const pages = await allPages<{ session_key: string }>(user, '/v1/sessions?limit=200');
    expect(pages.map((page) => page.length)).toEqual([200, 200, 50]);
    const keys = pages.flat().map((session) => session.session_key);
    expect(new Set(keys).size).toBe(450);
    const again = await allPages<{ session_key: string }>(user, '/v1/sessions?limit=450');
    expect(again.flat().map((session) => session.session_key)).toEqual(keys);
    expect((await user.get('/v1/sessions?limit=0')).status).toBe(400);
    expect((await user.get('/v1/sessions?before=yesterday')).status).toBe(400);
  });

  it("answers 400 for a cursor that names no session or message of the user's, and pages on past a reset one", async () => {
    const user = await api.createUser(system.adminToken, { name: 'Paging while resetting' });
    await db.query(
      `WITH s AS (INSERT INTO sessions (user_id, session_key) SELECT $1, 'agent:main:api:direct:peer' || n FROM generate_series(1, 3) AS n RETURNING id)
       INSERT INTO messages (session_id, role, content) SELECT s.id, 'user', 'message ' || n FROM s, generate_series(1, 3) AS n`,
      [user.userId],
    );
    const first = await user.get<{ session_key: string }[]>('/v1/sessions?limit=1');
    const key = first.body[0]?.session_key;
    const messages = `/v1/sessions/${key}/messages`;
    const [sessionCursor, messageCursor] = [first, await user.get(`${messages}?limit=1`)].map(
      (page) => /before=([^&>]+)/.exec(page.headers.get('link') ?? '')?.[1],
    );

    const other = await api.createUser(system.adminToken, { name: 'Someone else' });
    for (const path of [`/v1/sessions?before=${sessionCursor}`, `/v1/sessions/agent:main:main/messages?before=${messageCursor}`]) {
      const res = await other.get(path);
      expect([res.status, res.body.error]).toEqual([
        400,
        expect.objectContaining({ code: 'validation_failed', details: [expect.objectContaining({ path: ['before'] })] }),
      ]);
    }
    expect((await user.get(`/v1/sessions/agent:main:api:direct:peer9/messages?before=${messageCursor}`)).status).toBe(400);

    // The session the cursors came from is reset: the sessions page on past it, its messages end.
    expect((await user.post(`/v1/sessions/${key}/reset`)).status).toBe(202);
    const rest = await allPages<{ session_key: string }>(user, `/v1/sessions?limit=1&before=${sessionCursor}`);
    expect(rest.flat()).toHaveLength(2);
    const older = await user.get(`${messages}?before=${messageCursor}`);
    expect([older.status, older.body, older.headers.get('link')]).toEqual([200, [], null]);
  });

  it("gives a session's newest messages first page, oldest first, and the older ones behind its Link", async () => {
    const user = await api.createUser(system.adminToken, { name: 'Many messages' });
    await db.query(
      `WITH s AS (INSERT INTO sessions (user_id, session_key) VALUES ($1, 'agent:main:main') RETURNING id)
       INSERT INTO messages (session_id, role, content) SELECT s.id, 'user', 'message ' || n FROM s, generate_series(1, 250) AS n ORDER BY n`,
      [user.userId],
    );
    const pages = await allPages<{ content: string }>(user, '/v1/sessions/agent:main:main/messages?limit=200');
    expect(pages.map((page) => page.length)).toEqual([200, 50]);
    expect(pages[0]?.[0]?.content).toBe('message 51');
    expect(pages[0]?.at(-1)?.content).toBe('message 250');
    const oldestFirst = pages.reverse().flat();
    expect(oldestFirst.map((message) => message.content)).toEqual(Array.from({ length: 250 }, (_, i) => `message ${i + 1}`));
    const latest = await user.get<{ content: string }[]>('/v1/sessions/agent:main:main/messages?limit=2');
    expect(latest.body.map((message) => message.content)).toEqual(['message 249', 'message 250']);
  });
});
