import { Router } from 'express';
import { sessionKeySchema, type Runtime } from '@assistant/shared';
import { userOf } from '../http/auth';
import { notFound } from '../http/errors';
import { parse } from '../http/validate';
import { resetSession } from '../sessions/reset-session';

export function sessionRoutes(runtime: Runtime): Router {
  const router = Router();
  const { db } = runtime;

  router.get('/v1/sessions', async (req, res) => {
    const found = await db.query(
      `SELECT s.session_key, s.created_at, s.last_activity_at,
              (SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id AND m.role IN ('user', 'assistant') AND m.content <> '') AS message_count
       FROM sessions s WHERE s.user_id = $1 AND s.archived_at IS NULL ORDER BY s.last_activity_at DESC`,
      [userOf(req)],
    );
    res.json(found.rows);
  });

  /** What the user and the assistant said, oldest first (tool traffic stays internal). */
  router.get('/v1/sessions/:key/messages', async (req, res) => {
    const key = parse(sessionKeySchema, req.params.key);
    const session = await db.query<{ id: string }>(
      'SELECT id FROM sessions WHERE user_id = $1 AND session_key = $2 AND archived_at IS NULL',
      [userOf(req), key],
    );
    const sessionId = session.rows[0]?.id;
    if (!sessionId) throw notFound('session');
    const found = await db.query(
      `SELECT id, role, content, turn_id, created_at FROM messages
       WHERE session_id = $1 AND role IN ('user', 'assistant') AND content <> '' ORDER BY id`,
      [sessionId],
    );
    res.json(found.rows);
  });

  router.post('/v1/sessions/:key/reset', async (req, res) => {
    const key = parse(sessionKeySchema, req.params.key);
    if (!(await resetSession(db, runtime.queues, userOf(req), key))) throw notFound('session');
    res.status(202).json({ session_key: key, reset: true });
  });

  return router;
}
