import { z } from 'zod';

/**
 * The parts of Telegram Bot API objects we use. Objects stay loose: Telegram adds fields often,
 * and an update we cannot fully describe must still be accepted (and maybe ignored), not refused.
 * Only what the system reads is required (not `date`, `is_bot`, `first_name` or message ids), so
 * a hand-made minimal update is accepted too.
 */
export const telegramUser = z.looseObject({
  id: z.number().int(),
  is_bot: z.boolean().optional(),
  first_name: z.string().optional(),
  username: z.string().optional(),
});

const file = z.looseObject({ file_id: z.string(), file_size: z.number().optional() });
const photoSize = z.looseObject({ file_id: z.string(), width: z.number(), height: z.number(), file_size: z.number().optional() });

/** A `text_mention` (a person named without a @username, picked from the chat's members) carries its `user`. */
const entity = z.looseObject({ type: z.string(), offset: z.number().int(), length: z.number().int(), user: telegramUser.optional() });

export const telegramMessage = z.looseObject({
  message_id: z.number().int().optional(),
  from: telegramUser.optional(),
  /** Sent on behalf of a chat (a channel, an anonymous admin's group): `from` is then a placeholder user Telegram shares. */
  sender_chat: z.looseObject({ id: z.number().int() }).optional(),
  chat: z.looseObject({ id: z.number().int(), type: z.string(), title: z.string().optional() }),
  /** The topic's id when `is_topic_message`; else the thread a reply belongs to, which is no topic. */
  message_thread_id: z.number().int().optional(),
  is_topic_message: z.boolean().optional(),
  date: z.number().int().optional(),
  text: z.string().optional(),
  caption: z.string().optional(),
  voice: file.optional(),
  audio: file.optional(),
  photo: z.array(photoSize).optional(),
  media_group_id: z.string().optional(),
  entities: z.array(entity).optional(),
  caption_entities: z.array(entity).optional(),
  reply_to_message: z.looseObject({ message_id: z.number().int().optional(), from: telegramUser.optional() }).optional(),
  /** Service messages of a basic group upgraded to a supergroup: in the old group, the new id; in the supergroup, the old one. */
  migrate_to_chat_id: z.number().int().optional(),
  migrate_from_chat_id: z.number().int().optional(),
});
export type TelegramMessage = z.infer<typeof telegramMessage>;

export const telegramCallbackQuery = z.looseObject({
  id: z.string(),
  from: telegramUser,
  message: telegramMessage.optional(),
  data: z.string().optional(),
});

export const telegramUpdate = z.looseObject({
  update_id: z.number().int(),
  message: telegramMessage.optional(),
  edited_message: telegramMessage.optional(),
  callback_query: telegramCallbackQuery.optional(),
});
export type TelegramUpdate = z.infer<typeof telegramUpdate>;

/**
 * Every Bot API answer: `result` when ok, else a description and maybe `parameters`: `retry_after`
 * (seconds), or `migrate_to_chat_id`, the new id of a basic group upgraded to a supergroup.
 */
export const telegramResponse = z.looseObject({
  ok: z.boolean(),
  result: z.unknown().optional(),
  description: z.string().optional(),
  parameters: z.looseObject({ retry_after: z.number().optional(), migrate_to_chat_id: z.number().int().optional() }).optional(),
});

export const sentMessage = z.looseObject({ message_id: z.number().int() });
