import { loadProfile, type Queryable } from '@assistant/shared';
import type { JsonStream } from './json-stream';

/** Rows per query at most: a user with 100,000 messages is read 1,000 at a time. */
const PAGE = 1_000;
/**
 * About the most JSON one page holds (it goes past by less than its last row): a document may hold
 * a million characters, and a thousand of them at once would be gigabytes in the gateway's memory.
 */
export const PAGE_BYTES = 4 * 1024 * 1024;

/** Tables of the user's own data, exported whole (minus the owner column and derived search data). */
const USER_TABLES = ['folders', 'documents', 'habits', 'reminders', 'goals', 'gotchas'] as const;

/**
 * Pages of one table's rows as JSON objects, by keyset pagination on `id`: each page is one
 * short query, so nothing holds a transaction or a cursor open while the client reads slowly.
 * A page ends at PAGE rows or once it holds PAGE_BYTES, whichever comes first.
 */
async function* pages(
  db: Queryable,
  table: string,
  where: string,
  value: string,
  idType: 'uuid' | 'bigint',
): AsyncGenerator<{ id: string; row: unknown }[]> {
  let after: string | null = null;
  for (;;) {
    const found: { rows: { id: string; row: unknown; read: number }[] } = await db.query(
      `SELECT id::text AS id, row, read FROM (
         SELECT id, row, COUNT(*) OVER () AS read,
           SUM(octet_length(row::text)) OVER (ORDER BY id ROWS UNBOUNDED PRECEDING) - octet_length(row::text) AS before
         FROM (SELECT t.id, to_jsonb(t) - 'user_id' - 'search_vector' AS row FROM ${table} t
               WHERE t.${where} = $1 AND ($2::${idType} IS NULL OR t.id > $2::${idType}) ORDER BY t.id LIMIT ${PAGE}) candidates
       ) sized WHERE before < ${PAGE_BYTES} ORDER BY sized.id`,
      [value, after],
    );
    if (found.rows.length === 0) return;
    yield found.rows;
    after = found.rows[found.rows.length - 1]?.id ?? null;
    // Every row read, and fewer than a page: there are no more.
    if (found.rows.length === Number(found.rows[0]?.read) && found.rows.length < PAGE) return;
  }
}

async function* rowsOf(source: AsyncGenerator<{ id: string; row: unknown }[]>): AsyncGenerator<unknown[]> {
  for await (const page of source) yield page.map((entry) => entry.row);
}

async function one(db: Queryable, sql: string, userId: string): Promise<unknown> {
  return (await db.query<{ row: unknown }>(sql, [userId])).rows[0]?.row ?? null;
}

/**
 * GET /v1/export (docs/api.md#operators): every row of the user's as one JSON object, written as it is read.
 * Sessions (archived ones too) carry their messages, tool traffic included.
 */
export async function writeUserExport(db: Queryable, userId: string, out: JsonStream): Promise<void> {
  await out.raw('{');
  await out.field('exported_at', new Date().toISOString(), true);
  await out.field('user', await one(db, `SELECT to_jsonb(u) - 'erasing_at' AS row FROM users u WHERE id = $1`, userId));
  await out.field('preferences', await one(db, `SELECT to_jsonb(p) - 'user_id' AS row FROM user_preferences p WHERE user_id = $1`, userId));
  // The six sections as GET /v1/profile shows them.
  await out.field('profile', await loadProfile(db, userId));
  for (const table of USER_TABLES) {
    await out.raw(`,${JSON.stringify(table)}:`);
    await out.array(rowsOf(pages(db, table, 'user_id', userId, 'uuid')));
  }
  await out.raw(',"sessions":[');
  let first = true;
  for await (const page of pages(db, 'sessions', 'user_id', userId, 'uuid')) {
    for (const { id, row } of page) {
      // The session's own fields, then its messages streamed into the same object.
      await out.raw(`${first ? '' : ','}${JSON.stringify(row).slice(0, -1)},"messages":`);
      await out.array(rowsOf(pages(db, 'messages', 'session_id', id, 'bigint')));
      await out.raw('}');
      first = false;
    }
  }
  await out.raw(']}');
}
