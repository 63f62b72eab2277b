import type { Router, RequestHandler } from 'express';
import { z } from 'zod';
import { requestErasure, type Runtime } from '@assistant/shared';
import { apiRouter } from '../http/api-router';
import { requireAdmin, userOf } from '../http/auth';
import { notFound } from '../http/errors';
import { defineRoutes, failure } from '../openapi/api-route';
import * as shape from '../openapi/api-schemas';
import { erasureResponse } from '../openapi/operator-schemas';
import type { ApiKeyOwners } from '../users/api-key-owners';
import { createUser } from '../users/users.service';

const nullableText = (max: number) => z.string().trim().max(max).nullable().optional();

export const patchMeBody = z.strictObject({
  assistant_name: z.string().trim().min(1).max(100).optional(),
  assistant_emoji: nullableText(16),
  assistant_creature: nullableText(100),
  assistant_tone: nullableText(50),
  assistant_vibe: nullableText(500),
});

export const createUserBody = z.strictObject({ display_name: z.string().trim().min(1).max(200) });

const USER_COLUMNS =
  'id, display_name, assistant_name, assistant_emoji, assistant_creature, assistant_tone, assistant_vibe, created_at, updated_at';

export const userApi = defineRoutes({
  createUser: {
    method: 'post',
    path: '/v1/users',
    tag: 'users',
    summary: 'Create a user and its API key',
    auth: 'admin',
    body: createUserBody,
    example: { display_name: 'Ana' },
    responses: {
      201: { description: 'the user and its API key', schema: shape.createdUserResponse },
      503: failure('ADMIN_TOKEN is not set'),
    },
  },
  getMe: {
    method: 'get',
    path: '/v1/me',
    tag: 'users',
    summary: 'The signed-in user and its assistant personality',
    auth: 'user',
    responses: { 200: { description: 'the user', schema: shape.userResponse } },
  },
  patchMe: {
    method: 'patch',
    path: '/v1/me',
    tag: 'users',
    summary: "Change the assistant's name, emoji, creature, tone or vibe",
    auth: 'user',
    body: patchMeBody,
    example: { assistant_name: 'Nova', assistant_emoji: '✨' },
    responses: { 200: { description: 'the user', schema: shape.userResponse } },
  },
  eraseMe: {
    method: 'delete',
    path: '/v1/me',
    tag: 'users',
    summary: 'Erase the user and everything of theirs',
    description:
      'The keys stop working at once; rows, event streams, queued and scheduled jobs and channel identities are removed by a background job.',
    auth: 'user',
    responses: { 202: { description: 'erasure under way', schema: erasureResponse } },
  },
});

export function userRoutes(runtime: Runtime, authenticate: RequestHandler, keyOwners: ApiKeyOwners): Router {
  const { db } = runtime;
  return apiRouter(userApi, {
    createUser: {
      use: [requireAdmin(runtime.config.ADMIN_TOKEN)],
      handle: async (_req, res, { body }) => {
        res.status(201).json(await createUser(db, body.display_name, runtime.config.DEFAULT_TIMEZONE));
      },
    },

    getMe: {
      use: [authenticate],
      handle: async (req, res) => {
        const found = await db.query(`SELECT ${USER_COLUMNS} FROM users WHERE id = $1`, [userOf(req)]);
        if (!found.rows[0]) throw notFound('user');
        res.json(found.rows[0]);
      },
    },

    patchMe: {
      use: [authenticate],
      handle: async (req, res, { body }) => {
        const fields = Object.entries(body).filter(([, value]) => value !== undefined);
        const sets = fields.map(([column], i) => `${column} = $${i + 2}`);
        const found = await db.query(
          `UPDATE users SET ${[...sets, 'updated_at = NOW()'].join(', ')} WHERE id = $1 RETURNING ${USER_COLUMNS}`,
          [userOf(req), ...fields.map(([, value]) => (value === '' ? null : value))],
        );
        res.json(found.rows[0]);
      },
    },

    /** Erasure (docs/api.md#operators): the keys stop working now; a job removes everything else. */
    eraseMe: {
      use: [authenticate],
      handle: async (req, res) => {
        const userId = userOf(req);
        if (!(await requestErasure(runtime, userId))) throw notFound('user');
        await keyOwners.changed(userId);
        res.status(202).json({ id: userId, erasing: true });
      },
    },
  });
}
