import { Router } from 'express';
import { z } from 'zod';
import { requestErasure, type Runtime } from '@assistant/shared';
import { apiRouter } from '../http/api-router';
import { requireAdmin } from '../http/auth';
import { notFound, notFoundRoute } from '../http/errors';
import { DEFAULT_PAGE_LIMIT, nextPageLink, pageLimit, pageOf, timeIdCursor, timeIdPage } from '../http/pages';
import { uuidParam } from '../http/validate';
import { defineRoutes, failure } from '../openapi/api-route';
import { adminUserResponse, erasureResponse } from '../openapi/operator-schemas';
import type { ApiKeyOwners } from '../users/api-key-owners';

export const patchAdminUserBody = z.strictObject({
  disabled: z.boolean().optional(),
  daily_token_budget: z
    .number()
    .int()
    .min(0)
    .max(Number.MAX_SAFE_INTEGER)
    .nullable()
    .optional()
    .meta({ description: 'model tokens per UTC day; null = DAILY_TOKEN_BUDGET, 0 = no limit' }),
});

export const listAdminUsersQuery = z.object({
  limit: pageLimit,
  after: timeIdCursor.optional().meta({ description: "the cursor of the next page, from the previous page's Link header" }),
});

const userId = { id: uuidParam };
const adminDisabled = failure('ADMIN_TOKEN is not set');

export const adminApi = defineRoutes({
  listUsers: {
    method: 'get',
    path: '/v1/admin/users',
    tag: 'admin',
    summary: 'Every user (oldest first)',
    auth: 'admin',
    query: listAdminUsersQuery,
    responses: {
      200: { description: 'the users; a Link header names the next page', schema: z.array(adminUserResponse) },
      503: adminDisabled,
    },
  },
  patchUser: {
    method: 'patch',
    path: '/v1/admin/users/:id',
    tag: 'admin',
    summary: 'Disable or enable a user, or set their daily token budget',
    description: "A disabled user's keys answer 403 `user_disabled` and their chat messages get a short reply.",
    auth: 'admin',
    params: userId,
    notFound: 'user',
    body: patchAdminUserBody,
    example: { disabled: false, daily_token_budget: 200000 },
    responses: { 200: { description: 'the user', schema: adminUserResponse }, 503: adminDisabled },
  },
  eraseUser: {
    method: 'delete',
    path: '/v1/admin/users/:id',
    tag: 'admin',
    summary: 'Erase a user, as DELETE /v1/me does',
    auth: 'admin',
    params: userId,
    notFound: 'user',
    responses: { 202: { description: 'erasure under way', schema: erasureResponse }, 503: adminDisabled },
  },
});

// Users being erased are gone as far as anyone can tell.
const ADMIN_USER_COLUMNS = 'SELECT id, display_name, created_at, disabled_at IS NOT NULL AS disabled, daily_token_budget';
const ADMIN_USER = `${ADMIN_USER_COLUMNS} FROM users`;

/** The operator's view of users (admin token): list, disable, budget, erase. */
export function adminRoutes(runtime: Runtime, keyOwners: ApiKeyOwners): Router {
  const router = Router();
  const { db } = runtime;
  router.use('/v1/admin', requireAdmin(runtime.config.ADMIN_TOKEN));
  router.use(
    apiRouter(adminApi, {
      // The cursor holds its own place: a user erased meanwhile does not end the pages.
      listUsers: async (_req, res, { query }) => {
        const limit = query.limit ?? DEFAULT_PAGE_LIMIT;
        const order = timeIdPage({ time: 'created_at', id: 'id', past: '>' }, query.after, 1);
        const found = await db.query<{ cursor: string }>(
          `${ADMIN_USER_COLUMNS}, ${order.cursorSql} AS cursor FROM users WHERE erasing_at IS NULL AND ${order.pastSql}
           ORDER BY created_at, id LIMIT $3`,
          [...order.params, limit + 1],
        );
        const page = pageOf(found.rows, limit);
        if (page.next) res.set('Link', nextPageLink('/v1/admin/users', { limit: query.limit, after: page.next }));
        res.json(page.rows);
      },

      patchUser: async (_req, res, { params, body }) => {
        const updated = await db.query(
          `UPDATE users SET
             disabled_at = CASE WHEN $2::boolean IS NULL THEN disabled_at WHEN $2 THEN COALESCE(disabled_at, NOW()) END,
             daily_token_budget = CASE WHEN $3::boolean THEN $4::bigint ELSE daily_token_budget END,
             updated_at = NOW()
           WHERE id = $1 AND erasing_at IS NULL RETURNING id`,
          [params.id, body.disabled ?? null, body.daily_token_budget !== undefined, body.daily_token_budget ?? null],
        );
        if (updated.rowCount !== 1) throw notFound('user');
        if (body.disabled !== undefined) await keyOwners.changed(params.id);
        res.json((await db.query(`${ADMIN_USER} WHERE id = $1`, [params.id])).rows[0]);
      },

      eraseUser: async (_req, res, { params }) => {
        if (!(await requestErasure(runtime, params.id))) throw notFound('user');
        await keyOwners.changed(params.id);
        res.status(202).json({ id: params.id, erasing: true });
      },
    }),
  );
  // Past the admin token, an unknown admin path is a 404: /v1's user auth would call the token an invalid API key.
  router.use('/v1/admin', notFoundRoute);
  return router;
}
