import type { Router } from 'express';
import { z } from 'zod';
import { MAIN_SESSION_KEY, sessionKeySchema, withTransaction, type Runtime } from '@assistant/shared';
import { apiRouter } from '../http/api-router';
import { userOf } from '../http/auth';
import { notFound } from '../http/errors';
import { DEFAULT_PAGE_LIMIT, nextPageLink } from '../http/pages';
import { defineRoutes } from '../openapi/api-route';
import * as shape from '../openapi/api-schemas';
import { resetSession } from '../sessions/reset-session';
import { checkMessagesCursor, messagesPage, messagesPageQuery, sessionsPage, sessionsPageQuery } from '../sessions/session-pages';

const sessionKey = { key: sessionKeySchema };

export const sessionApi = defineRoutes({
  listSessions: {
    method: 'get',
    path: '/v1/sessions',
    tag: 'sessions',
    summary: "The user's sessions, most recently active first",
    auth: 'user',
    query: sessionsPageQuery,
    responses: { 200: { description: 'the sessions; a Link header names the next page', schema: z.array(shape.sessionResponse) } },
  },
  listMessages: {
    method: 'get',
    path: '/v1/sessions/:key/messages',
    tag: 'sessions',
    summary: 'What the user and the assistant said in a session, oldest first',
    auth: 'user',
    params: sessionKey,
    query: messagesPageQuery,
    responses: {
      200: {
        description: 'the newest messages, oldest first; a Link header names the older ones',
        schema: z.array(shape.sessionMessageResponse),
      },
    },
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
    listSessions: async (req, res, { query }) => {
      const page = await sessionsPage(db, userOf(req), query.limit ?? DEFAULT_PAGE_LIMIT, query.before);
      if (page.next) res.set('Link', nextPageLink('/v1/sessions', { limit: query.limit, before: page.next }));
      res.json(page.rows);
    },

    /**
     * What the user and the assistant said, oldest first (tool traffic stays internal). Every
     * user has a main session: before their first message it is there, and empty.
     */
    listMessages: async (req, res, { params, query }) => {
      if (query.before) await checkMessagesCursor(db, userOf(req), params.key, query.before);
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
      const page = await messagesPage(db, sessionId, query.limit ?? DEFAULT_PAGE_LIMIT, query.before);
      if (page.next)
        res.set('Link', nextPageLink(`/v1/sessions/${encodeURIComponent(params.key)}/messages`, { limit: query.limit, before: page.next }));
      res.json(page.rows);
    },

    resetSession: async (req, res, { params }) => {
      const reset = await withTransaction(db, (client) => resetSession(client, runtime.queues, userOf(req), params.key));
      // The main session before the user's first message is empty and fresh already.
      if (!reset && params.key !== MAIN_SESSION_KEY) throw notFound('session');
      res.status(202).json({ session_key: params.key, reset: true });
    },
  });
}
