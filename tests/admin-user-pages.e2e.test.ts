import type pg from 'pg';
import { Api, type ApiResponse } from '../scripts/lib/api';
import { TestSystem } from '../scripts/lib/system';
import { testDb } from './helpers/db';

/** GET /v1/admin/users comes in pages (docs/api.md#pages), oldest first, still a JSON array each. */
const system = new TestSystem();
let db: pg.Pool;
let admin: Api;

beforeAll(async () => {
  db = testDb();
  await system.start({ env: { LLM_PROVIDER: 'offline' }, services: ['gateway'] });
  admin = new Api(system.url, system.adminToken);
});

afterAll(async () => {
  await system.stop();
  await db.end();
});

interface Listed {
  id: string;
  display_name: string;
}

/** Every page from `path` on, following each answer's Link header; `each` runs after every page. */
async function allPages(path: string, each: (page: Listed[]) => Promise<void> = async () => {}): Promise<Listed[][]> {
  const pages: Listed[][] = [];
  for (let next: string | undefined = path; next;) {
    const res: ApiResponse<Listed[]> = await admin.get<Listed[]>(next);
    expect(res.status).toBe(200);
    pages.push(res.body);
    await each(res.body);
    next = /^<([^>]+)>; rel="next"$/.exec(res.headers.get('link') ?? '')?.[1];
  }
  return pages;
}

it('lists the users a page at a time, oldest first, ties in a fixed order, past a user erased meanwhile', async () => {
  // Up to 1,000 users, the answer is every user, with no Link (users made meanwhile come last).
  const columns = 'id, display_name, created_at, disabled_at IS NOT NULL AS disabled, daily_token_budget';
  const stored = await db.query<{ created_at: Date }>(`SELECT ${columns} FROM users WHERE erasing_at IS NULL ORDER BY created_at, id`);
  const today = await admin.get<Listed[]>('/v1/admin/users');
  expect(today.headers.get('link')).toBeNull();
  expect(today.body.slice(0, stored.rows.length)).toEqual(stored.rows.map((row) => ({ ...row, created_at: row.created_at.toISOString() })));

  // 1,001 users made before any other at one instant: only the tie-break orders them.
  const made = await db.query<{ id: string }>(
    `INSERT INTO users (display_name, created_at)
     SELECT 'Paged ' || n, TIMESTAMPTZ '2000-01-01 00:00:00.123456+00' FROM generate_series(1, 1001) AS n RETURNING id`,
  );
  const ids = made.rows.map((row) => row.id).sort();
  const first = await admin.get<Listed[]>('/v1/admin/users');
  expect(first.body.slice(0, 1000).map((user) => user.id)).toEqual(ids.slice(0, 1000));
  expect(first.headers.get('link')).toMatch(/^<\/v1\/admin\/users\?after=[^>]+>; rel="next"$/);

  // The last user of each page is erased before the next page is asked for.
  const erased: string[] = [];
  const pages = await allPages('/v1/admin/users?limit=400', async (page) => {
    const last = page.at(-1)?.id;
    if (last && ids.includes(last)) {
      erased.push(last);
      await db.query('DELETE FROM users WHERE id = $1', [last]);
    }
  });
  expect(pages.slice(0, 2).map((page) => page.length)).toEqual([400, 400]);
  const paged = pages.flat().filter((user) => user.display_name.startsWith('Paged '));
  expect(paged.map((user) => user.id)).toEqual(ids);
  expect(erased.length).toBeGreaterThanOrEqual(2);

  expect((await admin.get('/v1/admin/users?limit=0')).status).toBe(400);
  expect((await admin.get('/v1/admin/users?after=yesterday')).status).toBe(400);
});
