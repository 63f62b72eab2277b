import { z } from 'zod';
import { eventSchemas, PROFILE_SECTIONS, TURN_STATUSES, type ProfileSection } from '@assistant/shared';

/**
 * The shapes the gateway answers with, for the OpenAPI document only: request bodies, queries
 * and path parameters are described by the very schemas the routes validate with.
 */
const timestamp = z.iso.datetime({ offset: true });
const id = z.uuid();

export const errorResponse = z.object({
  error: z.object({
    code: z.string().meta({ examples: ['validation_failed'] }),
    message: z.string(),
    details: z.unknown().optional().meta({ description: 'zod issues for a 400' }),
  }),
});

export const healthResponse = z.object({ status: z.string(), error: z.string().optional() });

export const createdUserResponse = z.object({
  id,
  api_key: z.string().meta({ description: 'shown only in this answer; stored hashed' }),
});

export const userResponse = z.object({
  id,
  display_name: z.string(),
  assistant_name: z.string(),
  assistant_emoji: z.string().nullable(),
  assistant_creature: z.string().nullable(),
  assistant_tone: z.string().nullable(),
  assistant_vibe: z.string().nullable(),
  created_at: timestamp,
  updated_at: timestamp,
});

export const preferencesResponse = z.object({
  autonomous_mode: z.boolean(),
  max_iterations: z.number().int().min(1).max(50),
  default_model: z.string().nullable(),
  use_rag_by_default: z.boolean(),
  timezone: z.string().describe('IANA time zone, e.g. America/Sao_Paulo: reminders and the clock the model sees'),
  settings: z.record(z.string(), z.unknown()),
  created_at: timestamp,
  updated_at: timestamp,
});

export const submittedResponse = z.object({
  turn_id: id,
  session_key: z.string(),
  events_url: z.string().meta({ description: '/v1/turns/<turn_id>/events' }),
});

export const turnResponse = z.object({
  id,
  status: z.enum(TURN_STATUSES),
  session_key: z.string(),
  iterations: z.number().int(),
  created_at: timestamp,
  finished_at: timestamp.nullable(),
});

export const cancelResponse = z.object({ id, status: z.literal('cancelled') });
export const continueResponse = z.object({ id, continue: z.boolean() });

export const approvalResponse = z.object({
  id,
  approval_id: id.meta({ description: 'the name the events use; the same as `id`' }),
  turn_id: id,
  task_id: z.string().meta({ examples: ['task_1'] }),
  tool_name: z.string(),
  description: z.string(),
  arguments: z.record(z.string(), z.unknown()).meta({ description: 'with refs, never UUIDs' }),
  status: z.enum(['pending', 'approved', 'rejected', 'expired']),
  session_key: z.string(),
  created_at: timestamp,
  expires_at: timestamp,
  decided_at: timestamp.nullable(),
});

export const decisionResponse = z.object({ id, status: z.enum(['approved', 'rejected']) });

export const sessionResponse = z.object({
  session_key: z.string(),
  created_at: timestamp,
  last_activity_at: timestamp,
  message_count: z.number().int().min(0),
});

export const sessionMessageResponse = z.object({
  id: z.number().int().meta({ description: 'increasing within the session' }),
  role: z.enum(['user', 'assistant']),
  content: z.string(),
  turn_id: id.nullable(),
  created_at: timestamp,
});

export const sessionResetResponse = z.object({ session_key: z.string(), reset: z.literal(true) });

export const profileResponse = z.object(
  Object.fromEntries(PROFILE_SECTIONS.map((section) => [section, z.string()])) as Record<ProfileSection, z.ZodString>,
);

export const gotchaResponse = z.object({
  id,
  tool_name: z.string().nullable(),
  pattern: z.string().nullable().meta({ description: 'the normalised error it was captured from; null when added by hand' }),
  description: z.string(),
  source: z.enum(['auto_detected', 'manual']),
  occurrences: z.number().int(),
  first_seen: timestamp,
  last_seen: timestamp,
  created_at: timestamp,
});

export const toolResponse = z.object({
  name: z.string().meta({ description: 'what the model calls: a built-in name, or `<server>__<tool>` for an MCP tool' }),
  description: z.string(),
  parameters: z.record(z.string(), z.unknown()).meta({ description: "the arguments' JSON Schema, as the model gets it" }),
  mutates: z.boolean().meta({ description: 'changes data: waits for approval in manual mode (MCP: unless `readOnlyHint: true`)' }),
  source: z.string().meta({ description: '`builtin`, or the name of the MCP server (MCP_SERVERS) it comes from' }),
});

export const linkCodeResponse = z.object({
  code: z.string().meta({ description: 'send `/link CODE` from Telegram or WhatsApp' }),
  expires_at: timestamp,
});

/** What each `data:` line of a turn's event stream holds, from the schemas the workers emit with. */
export const turnEvent = z.union(
  Object.entries(eventSchemas).map(([type, fields]) => fields.extend({ type: z.literal(type), turn_id: id, seq: z.number().int().min(1) })),
);

/** Shapes shown once under components.schemas and referenced from the operations. */
export const namedSchemas: Record<string, z.ZodType> = {
  Error: errorResponse,
  User: userResponse,
  Preferences: preferencesResponse,
  Profile: profileResponse,
  Gotcha: gotchaResponse,
  Tool: toolResponse,
  Turn: turnResponse,
  TurnEvent: turnEvent,
  Approval: approvalResponse,
  Session: sessionResponse,
  SessionMessage: sessionMessageResponse,
};
