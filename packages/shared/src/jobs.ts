import { UnrecoverableError } from 'bullmq';
import { z } from 'zod';
import { jobId } from './queues';
import { CHANNEL_EVENT_TYPES, outboxJob, type OutboxEntry } from './turns/outbox';

/** Where a channel message goes: a Telegram chat, or a WhatsApp user. */
export const channelAddressSchema = z.discriminatedUnion('channel', [
  z.object({ channel: z.literal('telegram'), chat_id: z.string().min(1) }),
  z.object({ channel: z.literal('whatsapp'), wa_id: z.string().min(1) }),
]);
export type ChannelAddress = z.infer<typeof channelAddressSchema>;

/**
 * Job payloads, validated when enqueued and again when a worker takes them. Fields are added as
 * optional so jobs already waiting in Redis keep validating after an upgrade.
 */
export const jobSchemas = {
  'agent-turns': {
    /** Start the oldest queued turn of a session if none of its turns is active. */
    lane: z.object({ sessionId: z.uuid() }),
    /** Run the next step of a turn's state machine. */
    advance: z.object({ turnId: z.uuid() }),
    /** Expire an approval nobody answered within APPROVAL_TTL_SECONDS. */
    'expire-approval': z.object({ approvalId: z.uuid() }),
  },
  'tool-calls': {
    'run-tool': z.object({ taskId: z.uuid(), turnId: z.uuid() }),
  },
  reminders: {
    /** Post a reminder's text to its user's main session, if the reminder still fires at `at`. */
    fire: z.object({ reminderId: z.uuid(), at: z.iso.datetime() }),
    /** Remove the fire job for `at`, made stale by an update or delete (best effort). */
    cancel: z.object({ reminderId: z.uuid(), at: z.iso.datetime() }),
  },
  deliveries: {
    /** A turn event for the chat the turn came from, queued by the outbox publisher (id: `deliver.<entry key>`). */
    'turn-event': z.object({
      turnId: z.uuid(),
      to: channelAddressSchema,
      event: z.looseObject({ type: z.enum(CHANNEL_EVENT_TYPES) }),
    }),
    /** A direct answer to an inbound channel message that started no turn (id: `reply.<channel message id>`). */
    reply: z.object({ to: channelAddressSchema, text: z.string().min(1) }),
    /**
     * Download and transcribe a voice note, then start its turn (id: `transcribe.<channel message id>`).
     * Only the row's id travels: the audio never enters Redis.
     */
    transcribe: z.object({ channelMessageId: z.uuid() }),
    /** Text for a user on the channel identity they used last (reminders); the job id is the idempotency key. */
    notify: z.object({ userId: z.uuid(), text: z.string().min(1) }),
  },
  'session-digests': {
    /** Summarise a session into MEMORY: when it is idle (re-armed by each message), or at once on reset. */
    digest: z.object({ sessionId: z.uuid(), reason: z.enum(['idle', 'reset']).optional() }),
    /**
     * Erase a user and everything of theirs (DELETE /v1/me, DELETE /v1/admin/users/:id; id
     * `erase.<user id>`). Here because this queue's jobs are the agent worker's background work
     * on one user's data that nobody waits on; it is resumable and idempotent.
     */
    'erase-user': z.object({ userId: z.uuid() }),
  },
} as const;

export type JobCatalog = typeof jobSchemas;
export type JobQueueName = keyof JobCatalog;
export type JobName<Q extends JobQueueName> = keyof JobCatalog[Q] & string;
export type JobData<Q extends JobQueueName, N extends JobName<Q>> = z.infer<
  JobCatalog[Q][N] extends z.ZodType ? JobCatalog[Q][N] : never
>;

/** A job no retry can fix (unknown name, payload that does not match its schema): BullMQ fails it at once. */
export class InvalidJobError extends UnrecoverableError {
  override name = 'InvalidJobError';
}

/** Parses a job's data against its schema; an unknown name or bad payload cannot be retried. */
export function parseJob<Q extends JobQueueName>(queue: Q, name: string, data: unknown) {
  const schema = (jobSchemas[queue] as Record<string, z.ZodType>)[name];
  if (!schema) throw new InvalidJobError(`unknown job "${name}" on queue ${queue}`);
  const parsed = schema.safeParse(data);
  if (!parsed.success) throw new InvalidJobError(`invalid "${name}" job on ${queue}: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

/**
 * The id of the job that fires a reminder at `at`: naming the time means a retry or a republished
 * outbox cannot schedule one firing twice, while a moved reminder gets a job of its own.
 */
export function reminderFireJobId(reminderId: string, at: Date): string {
  return jobId('reminder', `${reminderId}.${at.getTime()}`);
}

/** The delayed job that fires a reminder at `at`, for an outbox (or to enqueue after a commit). */
export function reminderFireJob(reminderId: string, at: Date, now = Date.now()): OutboxEntry {
  const data = jobSchemas.reminders.fire.parse({ reminderId, at: at.toISOString() });
  return outboxJob('reminders', 'fire', data, { jobId: reminderFireJobId(reminderId, at), delayMs: Math.max(0, at.getTime() - now) });
}

export function reminderCancelJob(reminderId: string, at: Date): OutboxEntry {
  return outboxJob('reminders', 'cancel', jobSchemas.reminders.cancel.parse({ reminderId, at: at.toISOString() }));
}

/**
 * The delayed digest of a session, re-armed by each of its messages: all share the session's
 * debounce id, so a new one replaces the one still waiting and the digest runs once the session
 * has been quiet for `idleSeconds`. The job id names the turn, so republishing is harmless.
 */
export function sessionIdleDigestJob(sessionId: string, turnId: string, idleSeconds: number): OutboxEntry {
  const data = jobSchemas['session-digests'].digest.parse({ sessionId, reason: 'idle' });
  return outboxJob('session-digests', 'digest', data, {
    jobId: jobId('digest-idle', turnId),
    delayMs: idleSeconds * 1_000,
    debounceId: jobId('digest', sessionId),
  });
}

/** The one erasure job of a user: asking twice, or re-queuing after a crash, adds it once. */
export function eraseUserJobId(userId: string): string {
  return jobId('erase', userId);
}
