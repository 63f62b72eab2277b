import type { Router } from 'express';
import { z } from 'zod';
import { withTransaction, type DbClient, type Runtime } from '@assistant/shared';
import { apiRouter } from '../http/api-router';
import { userOf } from '../http/auth';
import { HttpError, notFound } from '../http/errors';
import { rateLimit } from '../http/rate-limit';
import { uuidParam } from '../http/validate';
import { defineRoutes, failure } from '../openapi/api-route';
import { apiKeyResponse, createdApiKeyResponse } from '../openapi/operator-schemas';
import type { ApiKeyOwners } from '../users/api-key-owners';
import { issueApiKey } from '../users/users.service';

export const createApiKeyBody = z.strictObject({ name: z.string().trim().min(1).max(100).optional() });

/** Plenty for every device and script of one person; a bound keeps a leaked key from minting thousands. */
const MAX_KEYS_PER_USER = 50;
/**
 * Keys made per hour, revoked ones included: a revoked key's row stays (it names the key in
 * logs and exports), so creating and revoking in a loop would grow the table without end.
 */
export const KEYS_PER_HOUR = 100;

export const apiKeyApi = defineRoutes({
  listKeys: {
    method: 'get',
    path: '/v1/api-keys',
    tag: 'api keys',
    summary: "The user's live API keys, without their secrets",
    auth: 'user',
    responses: { 200: { description: 'oldest first', schema: z.array(apiKeyResponse) } },
  },
  createKey: {
    method: 'post',
    path: '/v1/api-keys',
    tag: 'api keys',
    summary: 'Create an API key (the secret is shown once)',
    auth: 'user',
    body: createApiKeyBody,
    example: { name: 'laptop' },
    responses: {
      201: { description: 'the new key', schema: createdApiKeyResponse },
      409: failure('the user already has the most keys allowed'),
      429: failure(`over ${KEYS_PER_HOUR} keys made in an hour; see Retry-After`),
    },
  },
  revokeKey: {
    method: 'delete',
    path: '/v1/api-keys/:id',
    tag: 'api keys',
    summary: 'Revoke an API key: it stops working at once',
    auth: 'user',
    params: { id: uuidParam },
    notFound: 'API key',
    responses: { 204: { description: 'revoked' }, 409: failure("the user's last key cannot be revoked") },
  },
});

/** Several named keys per user, listed without their secrets; the last one cannot be revoked. */
export function apiKeyRoutes(runtime: Runtime, keyOwners: ApiKeyOwners): Router {
  const { db } = runtime;
  const limit = rateLimit(runtime.redis, runtime.config.QUEUE_PREFIX, 'api-keys', KEYS_PER_HOUR, 60 * 60_000, 'API keys');
  return apiRouter(apiKeyApi, {
    listKeys: async (req, res) => {
      const found = await db.query(
        `SELECT id, name, prefix, created_at, last_used_at FROM api_keys
         WHERE user_id = $1 AND revoked_at IS NULL ORDER BY created_at, id`,
        [userOf(req)],
      );
      res.json(found.rows);
    },

    createKey: async (req, res, { body }) => {
      const userId = userOf(req);
      await limit(req);
      const created = await withTransaction(db, async (client) => {
        const live = await liveKeys(client, userId);
        if (live.length >= MAX_KEYS_PER_USER) {
          throw new HttpError(409, 'too_many_keys', `a user can have at most ${MAX_KEYS_PER_USER} keys: revoke one first`);
        }
        return issueApiKey(client, userId, body.name ?? `key ${live.length + 1}`);
      });
      res.status(201).json(created);
    },

    revokeKey: async (req, res, { params }) => {
      const userId = userOf(req);
      await withTransaction(db, async (client) => {
        const live = await liveKeys(client, userId);
        if (!live.includes(params.id)) throw notFound('API key');
        if (live.length === 1) {
          throw new HttpError(409, 'last_api_key', 'this is your only key: create another one before revoking it');
        }
        await client.query('UPDATE api_keys SET revoked_at = NOW() WHERE id = $1', [params.id]);
      });
      await keyOwners.changed(userId);
      res.status(204).end();
    },
  });
}

/**
 * The user's live keys, under the user row's lock: two concurrent revocations cannot both pass
 * the last-key check, nor two creations the limit (locking the keys alone would not hold back a
 * key inserted meanwhile).
 */
async function liveKeys(client: DbClient, userId: string): Promise<string[]> {
  await client.query('SELECT 1 FROM users WHERE id = $1 FOR NO KEY UPDATE', [userId]);
  const found = await client.query<{ id: string }>(
    'SELECT id FROM api_keys WHERE user_id = $1 AND revoked_at IS NULL ORDER BY id FOR UPDATE',
    [userId],
  );
  return found.rows.map((row) => row.id);
}
