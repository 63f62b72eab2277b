import type { Router } from 'express';
import { z } from 'zod';
import { MAIN_SESSION_KEY, sessionKeySchema, withTransaction, type Runtime } from '@assistant/shared';
import { apiRouter } from '../http/api-router';
import { userOf } from '../http/auth';
import { notFound } from '../http/errors';
import { defineRoutes } from '../openapi/api-route';
import * as shape from '../openapi/api-schemas';
import { resetSession } from '../sessions/reset-session';

const sessionKey = { key: sessionKeySchema };

export const sessionApi = defineRoutes({
  listSessions: {
    method: 'get',
    path: '/v1/sessions',
    tag: 'sessions',
    summary: "The user's sessions, most recently active first",
    auth: 'user',
    responses: { 200: { description: 'the sessions', schema: z.array(shape.sessionResponse) } },
  },
  listMessages: {
    method: 'get',
    path: '/v1/sessions/:key/messages',
    tag: 'sessions',
    summary: 'What the user and the assistant said in a session, oldest first',
    auth: 'user',
    params: sessionKey,
    responses: { 200: { description: 'the messages', schema: z.array(shape.sessionMessageResponse) } },
  },
  resetSession: {
    method: 'post',
    path: '/v1/sessions/:key/reset',
    tag: 'sessions',
    summary: 'Digest the session now and start a fresh one under the same key',
    auth: 'user',
    params: sessionKey,
    responses: { 202: { description: 'reset', schema: shape.sessionResetResponse } },
  },
});

export function sessionRoutes(runtime: Runtime): Router {
  const { db } = runtime;
  return apiRouter(sessionApi, {
    listSessions: async (req, res) => {
      const found = await db.query(
        `SELECT s.session_key, s.created_at, s.last_activity_at,
                (SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id AND m.role IN ('user', 'assistant') AND m.content <> '') AS message_count
         FROM sessions s WHERE s.user_id = $1 AND s.archived_at IS NULL ORDER BY s.last_activity_at DESC`,
        [userOf(req)],
      );
      res.json(found.rows);
    },

    /**
     * What the user and the assistant said, oldest first (tool traffic stays internal). Every
     * user has a main session: before their first message it is there, and empty.
     */
    listMessages: async (req, res, { params }) => {
      const session = await db.query<{ id: string }>(
        'SELECT id FROM sessions WHERE user_id = $1 AND session_key = $2 AND archived_at IS NULL',
        [userOf(req), params.key],
      );
      const sessionId = session.rows[0]?.id;
      if (!sessionId) {
        if (params.key !== MAIN_SESSION_KEY) throw notFound('session');
        res.json([]);
        return;
      }
      const found = await db.query(
        `SELECT id, role, content, turn_id, created_at FROM messages
         WHERE session_id = $1 AND role IN ('user', 'assistant') AND content <> '' ORDER BY id`,
        [sessionId],
      );
      res.json(found.rows);
    },

    resetSession: async (req, res, { params }) => {
      const reset = await withTransaction(db, (client) => resetSession(client, runtime.queues, userOf(req), params.key));
      // The main session before the user's first message is empty and fresh already.
      if (!reset && params.key !== MAIN_SESSION_KEY) throw notFound('session');
      res.status(202).json({ session_key: params.key, reset: true });
    },
  });
}
