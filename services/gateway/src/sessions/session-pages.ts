import { z } from 'zod';
import type { Queryable } from '@assistant/shared';
import { invalidInput } from '../http/errors';
import { pageLimit, pageOf, timeIdCursor, timeIdPage, type Page } from '../http/pages';

export const sessionsPageQuery = z.object({
  limit: pageLimit,
  before: timeIdCursor.optional().meta({ description: "the cursor of the next page, from the previous page's Link header" }),
});

export const messagesPageQuery = z.object({
  limit: pageLimit,
  before: z
    .string()
    .regex(/^[0-9]{1,18}$/, 'a message id')
    .optional()
    .meta({ description: 'only messages older than this message id (the Link header of the previous page names it)' }),
});

/**
 * A user's sessions, most recently active first, ties by id so that pages neither repeat nor skip
 * one. The cursor is the last session's activity (microseconds since the epoch) and id: a session
 * active again while a client pages moves to the top, past the pages it already read.
 */
export async function sessionsPage(db: Queryable, userId: string, limit: number, before?: string): Promise<Page<object>> {
  const page = timeIdPage({ time: 's.last_activity_at', id: 's.id', past: '<' }, before, 2);
  const [, id] = page.params;
  // Sessions are deleted only with their user; one reset since (archived) still holds the cursor's place.
  if (id && (await db.query('SELECT 1 FROM sessions WHERE id = $1 AND user_id = $2', [id, userId])).rowCount === 0) {
    throw invalidInput(['before'], 'before names no session of yours: use the Link header of the page before');
  }
  const found = await db.query<{ cursor: string }>(
    `SELECT s.session_key, s.created_at, s.last_activity_at,
            (SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id AND m.role IN ('user', 'assistant') AND m.content <> '') AS message_count,
            ${page.cursorSql} AS cursor
     FROM sessions s WHERE s.user_id = $1 AND s.archived_at IS NULL
       AND ${page.pastSql}
     ORDER BY s.last_activity_at DESC, s.id DESC LIMIT $4`,
    [userId, ...page.params, limit + 1],
  );
  return pageOf(found.rows, limit);
}

/**
 * 400 unless `before` is a message of the user's session under `key`. One reset since (archived)
 * counts: its messages are no longer listed, so the pages after it end there.
 */
export async function checkMessagesCursor(db: Queryable, userId: string, key: string, before: string): Promise<void> {
  const found = await db.query(
    'SELECT 1 FROM messages m JOIN sessions s ON s.id = m.session_id WHERE m.id = $1 AND s.user_id = $2 AND s.session_key = $3',
    [before, userId, key],
  );
  if (found.rowCount === 0)
    throw invalidInput(['before'], 'before names no message of this session: use the Link header of the page before');
}

/**
 * What the user and the assistant said in a session (tool traffic stays internal): the newest
 * `limit` messages older than `before`, oldest first, as a chat shows its latest page.
 */
export async function messagesPage(db: Queryable, sessionId: string, limit: number, before?: string): Promise<Page<{ id: number }>> {
  const found = await db.query<{ id: number }>(
    `SELECT * FROM (
       SELECT id, role, content, turn_id, created_at FROM messages
       WHERE session_id = $1 AND role IN ('user', 'assistant') AND content <> '' AND ($2::bigint IS NULL OR id < $2)
       ORDER BY id DESC LIMIT $3) newest
     ORDER BY id`,
    [sessionId, before ?? null, limit + 1],
  );
  const rows = found.rows.slice(-limit);
  const next = found.rows.length > limit ? rows[0]?.id : undefined;
  return { rows, ...(next !== undefined ? { next: String(next) } : {}) };
}
