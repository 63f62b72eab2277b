import { z } from 'zod';
import { uuidParam } from '../http/validate';
import { patchAdminUserBody } from '../routes/admin.routes';
import { createApiKeyBody } from '../routes/api-keys.routes';
import { usageQuery } from '../routes/usage.routes';
import { failure, type ApiRoute } from './api-route';

/** Answer shapes of the operator endpoints (CONTRACT §3), for the OpenAPI document only. */
const timestamp = z.iso.datetime({ offset: true });
const tokens = z.number().int().min(0);

const usageResponse = z.object({
  days: z.array(
    z.object({
      date: z.iso.date(),
      turns: tokens,
      model_calls: tokens,
      prompt_tokens: tokens,
      cached_prompt_tokens: tokens.meta({ description: 'part of prompt_tokens the provider served from its cache' }),
      completion_tokens: tokens,
    }),
  ),
  budget: z.object({
    daily_tokens: tokens.meta({ description: 'prompt + completion tokens allowed per UTC day; 0 = no limit' }),
    used_today: tokens,
  }),
});

const apiKeyResponse = z.object({
  id: z.uuid(),
  name: z.string(),
  prefix: z.string().meta({ description: 'the start of the key, to tell keys apart; never the secret' }),
  created_at: timestamp,
  last_used_at: timestamp.nullable().meta({ description: 'updated at most about once a minute' }),
});

const createdApiKeyResponse = z.object({
  id: z.uuid(),
  api_key: z.string().meta({ description: 'shown only in this answer; stored hashed' }),
});

const exportResponse = z
  .object({
    exported_at: timestamp,
    user: z.record(z.string(), z.unknown()),
    preferences: z.record(z.string(), z.unknown()),
    profile: z.record(z.string(), z.unknown()),
    folders: z.array(z.record(z.string(), z.unknown())),
    documents: z.array(z.record(z.string(), z.unknown())),
    habits: z.array(z.record(z.string(), z.unknown())),
    reminders: z.array(z.record(z.string(), z.unknown())),
    goals: z.array(z.record(z.string(), z.unknown())),
    gotchas: z.array(z.record(z.string(), z.unknown())),
    sessions: z.array(z.looseObject({ messages: z.array(z.record(z.string(), z.unknown())) })),
  })
  .meta({ description: 'streamed as it is read' });

const erasureResponse = z.object({ id: z.uuid(), erasing: z.literal(true) });

const adminUserResponse = z.object({
  id: z.uuid(),
  display_name: z.string(),
  created_at: timestamp,
  disabled: z.boolean(),
  daily_token_budget: tokens.nullable().meta({ description: 'null: DAILY_TOKEN_BUDGET applies' }),
});

const userId = { id: uuidParam };

/** Usage, budgets, API keys, export, erasure and the admin's user management. */
export const operatorApiRoutes: ApiRoute[] = [
  {
    method: 'get',
    path: '/v1/usage',
    tag: 'usage',
    summary: 'Model usage per UTC day (newest first) and the daily token budget',
    auth: 'user',
    query: usageQuery,
    responses: { 200: { description: 'usage and budget', schema: usageResponse } },
  },
  {
    method: 'get',
    path: '/v1/api-keys',
    tag: 'api keys',
    summary: "The user's live API keys, without their secrets",
    auth: 'user',
    responses: { 200: { description: 'oldest first', schema: z.array(apiKeyResponse) } },
  },
  {
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
    },
  },
  {
    method: 'delete',
    path: '/v1/api-keys/:id',
    tag: 'api keys',
    summary: 'Revoke an API key: it stops working at once',
    auth: 'user',
    params: { id: uuidParam },
    responses: { 204: { description: 'revoked' }, 409: failure("the user's last key cannot be revoked") },
  },
  {
    method: 'get',
    path: '/v1/export',
    tag: 'users',
    summary: "Everything of the user's as one JSON document",
    auth: 'user',
    responses: { 200: { description: 'the export', schema: exportResponse } },
  },
  {
    method: 'delete',
    path: '/v1/me',
    tag: 'users',
    summary: 'Erase the user and everything of theirs',
    description: 'The keys stop working at once; rows, event streams, queued and scheduled jobs and channel identities are removed by a background job.',
    auth: 'user',
    responses: { 202: { description: 'erasure under way', schema: erasureResponse } },
  },
  {
    method: 'get',
    path: '/v1/admin/users',
    tag: 'admin',
    summary: 'Every user (oldest first)',
    auth: 'admin',
    responses: { 200: { description: 'the users', schema: z.array(adminUserResponse) }, 503: failure('ADMIN_TOKEN is not set') },
  },
  {
    method: 'patch',
    path: '/v1/admin/users/:id',
    tag: 'admin',
    summary: "Disable or enable a user, or set their daily token budget",
    description: "A disabled user's keys answer 403 `user_disabled` and their chat messages get a short reply.",
    auth: 'admin',
    params: userId,
    body: patchAdminUserBody,
    example: { disabled: false, daily_token_budget: 200000 },
    responses: { 200: { description: 'the user', schema: adminUserResponse }, 503: failure('ADMIN_TOKEN is not set') },
  },
  {
    method: 'delete',
    path: '/v1/admin/users/:id',
    tag: 'admin',
    summary: 'Erase a user, as DELETE /v1/me does',
    auth: 'admin',
    params: userId,
    responses: { 202: { description: 'erasure under way', schema: erasureResponse }, 503: failure('ADMIN_TOKEN is not set') },
  },
];
