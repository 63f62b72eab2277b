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
