import { fixture, telegramGroupMention } from './channel-fixtures';

/** A message of `member` in group `group` (a negative id); with `mention`, addressed to the bot by that handle. */
export function telegramGroupText(group: number, member: number, text: string, updateId: number, mention?: string) {
  const update = fixture(telegramGroupMention);
  update.update_id = updateId;
  Object.assign(update.message, {
    from: { ...update.message.from, id: member },
    chat: { ...update.message.chat, id: group },
    text: mention ? `${mention} ${text}` : text,
    entities: mention ? [{ offset: 0, length: mention.length, type: 'mention' }] : [],
  });
  return update;
}

/** The update as Telegram sends a message written in topic `threadId` of a supergroup with topics. */
export function inForumTopic<U extends { message: { chat: object } }>(update: U, threadId: number): U {
  Object.assign(update.message, {
    chat: { ...update.message.chat, is_forum: true },
    message_thread_id: threadId,
    is_topic_message: true,
  });
  return update;
}

/**
 * A service message of a basic group's upgrade to a supergroup, as Telegram sends it to `chat`: in
 * the old group with `migrate_to_chat_id`, in the supergroup with `migrate_from_chat_id`.
 */
export function telegramGroupUpgrade(
  chat: number,
  member: number,
  migration: { migrate_to_chat_id: number } | { migrate_from_chat_id: number },
  updateId: number,
) {
  const { text: _text, entities: _entities, ...message } = fixture(telegramGroupMention).message;
  const type = 'migrate_to_chat_id' in migration ? 'group' : 'supergroup';
  return {
    update_id: updateId,
    message: { ...message, from: { ...message.from, id: member }, chat: { ...message.chat, id: chat, type }, ...migration },
  };
}
