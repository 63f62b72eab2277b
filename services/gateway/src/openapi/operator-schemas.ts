import { z } from 'zod';

/** Answer shapes of the operator endpoints (docs/api.md#operators), for the OpenAPI document only. */
const timestamp = z.iso.datetime({ offset: true });
const tokens = z.number().int().min(0);

export const usageResponse = z.object({
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

export const apiKeyResponse = z.object({
  id: z.uuid(),
  name: z.string(),
  prefix: z.string().meta({ description: 'the start of the key, to tell keys apart; never the secret' }),
  created_at: timestamp,
  last_used_at: timestamp.nullable().meta({ description: 'updated at most about once a minute' }),
});

export const createdApiKeyResponse = z.object({
  id: z.uuid(),
  api_key: z.string().meta({ description: 'shown only in this answer; stored hashed' }),
});

export const exportResponse = z
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

export const erasureResponse = z.object({ id: z.uuid(), erasing: z.literal(true) });

export const adminUserResponse = z.object({
  id: z.uuid(),
  display_name: z.string(),
  created_at: timestamp,
  disabled: z.boolean(),
  daily_token_budget: tokens.nullable().meta({ description: 'null: DAILY_TOKEN_BUDGET applies' }),
});
