import { UnrecoverableError } from 'bullmq';
import { z } from 'zod';

/**
 * Where a channel message goes: a Telegram chat (and, in a supergroup with topics, the topic), or
 * a WhatsApp user: `wa_id` is their number or, for a user who hides it, their BSUID, told apart
 * by its form (docs/channels.md#whatsapp-usernames-and-changed-numbers). Stored in `turns.origin`
 * and in queued jobs: the topic is optional, so addresses written before it existed still parse.
 */
export const channelAddressSchema = z.discriminatedUnion('channel', [
  z.object({ channel: z.literal('telegram'), chat_id: z.string().min(1), message_thread_id: z.number().int().optional() }),
  z.object({ channel: z.literal('whatsapp'), wa_id: z.string().min(1) }),
]);
export type ChannelAddress = z.infer<typeof channelAddressSchema>;

/** The chat's id at its provider: a Telegram chat id, a WhatsApp number or BSUID. */
export function recipientOf(address: ChannelAddress): string {
  return address.channel === 'telegram' ? address.chat_id : address.wa_id;
}

/** Events of a channel turn that the chat must see: the answer, approvals, questions, failures. */
export const CHANNEL_EVENT_TYPES = ['message', 'tool_approval_request', 'ask_user_continue', 'error'] as const;

/** The most outbox entry keys one job carries; a bigger batch is removed by its publisher instead. */
export const MAX_PUBLISHED_KEYS = 1_000;

/**
 * The outbox entries of the batch that queued a turn's job, published before it: the job's load
 * removes them from the turn's outbox (turns/outbox.ts, `OutboxPublisher.publish`).
 */
const publishedKeys = z.array(z.string().max(100)).max(MAX_PUBLISHED_KEYS).optional();

/**
 * Every queue, its jobs and their payloads: the one list of queue and job names (both are data
 * stored in Redis, so renaming one needs a migration plan). Payloads are parsed when enqueued and
 * again when a worker takes them; fields are added as optional so jobs already waiting in Redis
 * keep validating after an upgrade.
 */
export const jobCatalog = {
  'agent-turns': {
    /** Start the oldest queued turn of a session if none of its turns is active. */
    lane: z.object({ sessionId: z.uuid() }),
    /** Run the next step of a turn's state machine. */
    advance: z.object({ turnId: z.uuid(), published: publishedKeys }),
    /** Expire an approval nobody answered within APPROVAL_TTL_SECONDS. */
    'expire-approval': z.object({ approvalId: z.uuid() }),
  },
  'tool-calls': {
    'run-tool': z.object({ taskId: z.uuid(), turnId: z.uuid(), published: publishedKeys }),
  },
  deliveries: {
    /** A turn event for the chat the turn came from, queued by the outbox publisher (id: `deliver.<entry key>`). */
    'turn-event': z.object({
      turnId: z.uuid(),
      to: channelAddressSchema,
      event: z.looseObject({ type: z.enum(CHANNEL_EVENT_TYPES) }),
    }),
    /**
     * A direct answer to an inbound channel message that started no turn (id: `reply.<channel message id>`).
     * `channelMessageId` names that message, so the erasure of its user finds the job (absent in jobs queued before it existed).
     */
    reply: z.object({ to: channelAddressSchema, text: z.string().min(1), channelMessageId: z.uuid().optional() }),
    /**
     * Download and transcribe a voice note, then start its turn (id: `transcribe.<channel message id>`).
     * Only the row's id travels: the audio never enters Redis.
     */
    transcribe: z.object({ channelMessageId: z.uuid() }),
    /** Text for a user on the channel identity they used last (reminders); the job id is the idempotency key. */
    notify: z.object({ userId: z.uuid(), text: z.string().min(1) }),
    /**
     * A notice refused at `to` until its user writes there (WhatsApp outside its 24-hour window,
     * Telegram to someone who never opened a private chat with the bot), sent again as WhatsApp's
     * notice template or on another channel of the user's (id: `resend-notice.<notify job id>`, the
     * same whether the send's answer or a status webhook reported the refusal).
     */
    'resend-notice': z.object({ userId: z.uuid(), to: channelAddressSchema, text: z.string().min(1) }),
    /**
     * Look again for the message a WhatsApp status reported refused outside the window before its
     * send was recorded (id: `recheck-refusal.<provider message id>`), and resend it if a notice's.
     */
    'recheck-refusal': z.object({ providerMessageId: z.string().min(1) }),
  },
  reminders: {
    /** Post a reminder's text to its user's main session, if the reminder still fires at `at`. */
    fire: z.object({ reminderId: z.uuid(), at: z.iso.datetime() }),
    /** Remove the fire job for `at`, made stale by an update or delete (best effort). */
    cancel: z.object({ reminderId: z.uuid(), at: z.iso.datetime() }),
  },
  'session-digests': {
    /** Summarise a session into MEMORY: when it is idle (armed by its messages), or at once on reset. */
    digest: z.object({ sessionId: z.uuid(), reason: z.enum(['idle', 'reset']).optional() }),
    /**
     * Erase a user and everything of theirs (DELETE /v1/me, DELETE /v1/admin/users/:id; id
     * `erase.<sha256 of the user id>`). Here because this queue's jobs are the agent worker's background work
     * on one user's data that nobody waits on; it is resumable and idempotent.
     */
    'erase-user': z.object({
      userId: z.uuid(),
      /** Jobs about the user that were running as it erased them (locked, so not removable then): removed once they end. */
      running: z
        .array(z.object({ queue: z.string(), id: z.string() }))
        .max(10_000)
        .optional(),
    }),
  },
} satisfies Record<string, Record<string, z.ZodObject>>;

type JobCatalog = typeof jobCatalog;
export type QueueName = keyof JobCatalog;
export type JobName<Q extends QueueName> = keyof JobCatalog[Q] & string;
export type JobData<Q extends QueueName, N extends JobName<Q>> = z.infer<JobCatalog[Q][N]>;

export const QUEUE_NAMES = Object.keys(jobCatalog) as readonly QueueName[];

/** A job no retry can fix (unknown name, payload that does not match its schema): BullMQ fails it at once. */
export class InvalidJobError extends UnrecoverableError {
  override name = 'InvalidJobError';
}

/** Parses a job's data against its schema; an unknown name or bad payload cannot be retried. */
export function parseJob<Q extends QueueName, N extends JobName<Q>>(queue: Q, name: N, data: unknown): JobData<Q, N>;
/** A name read from Redis or an outbox row, not yet known to be in the catalogue. */
export function parseJob(queue: QueueName, name: string, data: unknown): Record<string, unknown>;
export function parseJob(queue: QueueName, name: string, data: unknown): Record<string, unknown> {
  const schema = (jobCatalog[queue] as Record<string, z.ZodObject>)[name];
  if (!schema) throw new InvalidJobError(`unknown job "${name}" on queue ${queue}`);
  const parsed = schema.safeParse(data);
  if (!parsed.success) throw new InvalidJobError(`invalid "${name}" job on ${queue}: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}
