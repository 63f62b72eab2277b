import { PHOTO_MAX_BYTES, type ChannelAddress } from '@assistant/shared';
import { directAddress, type ContentOptions, type InboundContent, type InboundMessage } from '../channel-types';
import type { TelegramMessage, TelegramUpdate } from './telegram.schemas';

/** Message kinds we cannot read; service messages (members joining, pins…) are ignored instead. */
const UNREADABLE = [
  'photo',
  'sticker',
  'voice',
  'audio',
  'video',
  'video_note',
  'animation',
  'document',
  'location',
  'venue',
  'contact',
  'poll',
  'dice',
  'story',
  'paid_media',
  'game',
  'invoice',
  'checklist',
  'giveaway',
];

/** The bot the updates come to: its id (its token's first part) and its @username, asked for only when a group message needs it. */
export interface TelegramBot {
  id: string;
  username: () => Promise<string>;
}

/**
 * Turns an update into a message for the inbound pipeline, or undefined when the bot should
 * stay silent: edits, service messages, messages sent on behalf of a chat, and group messages
 * that neither mention the bot nor reply to it.
 */
export async function telegramInbound(
  update: TelegramUpdate,
  bot: TelegramBot,
  options: ContentOptions = { vision: false },
): Promise<InboundMessage | undefined> {
  const externalId = String(update.update_id);
  const query = update.callback_query;
  if (query) {
    if (query.data === undefined) return undefined;
    return {
      channel: 'telegram',
      botId: bot.id,
      externalId,
      // Without a first_name the new user is named after the identity (identities.ts).
      sender: { id: String(query.from.id), name: query.from.first_name ?? '' },
      replyTo: query.message ? chatAddress(query.message) : directAddress('telegram', String(query.from.id)),
      content: { kind: 'button', data: query.data },
    };
  }
  const message = update.message;
  // Sent on behalf of a chat, it has no person behind it: its `from` (777000 for a channel's post) is shared by all.
  if (!message?.from || message.from.is_bot || message.sender_chat) return undefined;
  const content = readContent(message, options);
  if (!content) return undefined;
  const inGroup = message.chat.type !== 'private';
  if (inGroup) {
    const username = await bot.username();
    if (!addressesBot(message, { id: bot.id, username })) return undefined;
    if (content.kind === 'text') content.text = withoutMention(content.text, username);
    if (content.kind === 'photo') content.caption = withoutMention(content.caption, username);
    if (content.kind === 'text' && content.text === '') return undefined;
  }
  return {
    channel: 'telegram',
    botId: bot.id,
    externalId,
    sender: { id: String(message.from.id), name: message.from.first_name ?? '' },
    ...(inGroup ? { group: String(message.chat.id) } : {}),
    replyTo: chatAddress(message),
    content,
    ...(message.media_group_id === undefined ? {} : { album: `${message.chat.id}:${message.media_group_id}` }),
  };
}

/** The General topic of a supergroup with topics: Telegram refuses its id ("message thread not found"). */
const GENERAL_TOPIC = 1;

/**
 * Where to answer a message: its chat and, when it was written in a forum topic, that topic
 * (docs/channels.md#forum-topics). A reply outside forums carries a message_thread_id too, the
 * thread it belongs to: no topic, so it is left out, as is the General topic's.
 */
function chatAddress(message: TelegramMessage): ChannelAddress {
  const topic = message.is_topic_message === true && message.message_thread_id !== GENERAL_TOPIC ? message.message_thread_id : undefined;
  return { channel: 'telegram', chat_id: String(message.chat.id), ...(topic === undefined ? {} : { message_thread_id: topic }) };
}

function readContent(message: TelegramMessage, options: ContentOptions): InboundContent | undefined {
  if (message.text !== undefined) return message.text.trim() === '' ? undefined : { kind: 'text', text: message.text };
  const voice = message.voice ?? message.audio;
  if (voice) return { kind: 'voice', media: { channel: 'telegram', file_id: voice.file_id } };
  const photo = options.vision ? largestPhoto(message.photo ?? []) : undefined;
  if (photo) return { kind: 'photo', media: { channel: 'telegram', file_id: photo.file_id }, caption: message.caption ?? '' };
  const what = UNREADABLE.find((key) => key in message);
  return what ? { kind: 'unsupported', what } : undefined;
}

/** Telegram sends each photo in several sizes: the largest one within the 5 MB a model is sent. */
function largestPhoto(sizes: NonNullable<TelegramMessage['photo']>) {
  const fitting = sizes.filter((size) => (size.file_size ?? 0) <= PHOTO_MAX_BYTES);
  return fitting.sort((a, b) => b.width * b.height - a.width * a.height)[0];
}

/**
 * Mentioned by @username (also `/command@username`) or by name (a `text_mention` of the bot's id),
 * a bare command, or a reply to the bot's message; never a command for another bot
 * (`/new@other_bot`), even in a reply to this one's.
 */
export function addressesBot(message: TelegramMessage, { id, username }: { id: string; username: string }): boolean {
  const handle = `@${username}`.toLowerCase();
  const text = message.text ?? message.caption ?? '';
  const entities = message.text !== undefined ? message.entities : message.caption_entities;
  const pieces = (entities ?? []).map((entity) => ({
    entity,
    piece: text.slice(entity.offset, entity.offset + entity.length).toLowerCase(),
  }));
  const command = pieces.find(({ entity }) => entity.type === 'bot_command' && entity.offset === 0)?.piece;
  if (command?.includes('@') && !command.endsWith(handle)) return false;
  const mentioned =
    command !== undefined ||
    pieces.some(
      ({ entity, piece }) =>
        (entity.type === 'mention' && piece === handle) || (entity.type === 'text_mention' && String(entity.user?.id) === id),
    );
  const repliedTo = message.reply_to_message?.from;
  return mentioned || (repliedTo?.is_bot === true && repliedTo.username?.toLowerCase() === username.toLowerCase());
}

/**
 * The text without the bot's @username and the spaces it leaves, one space kept between the words
 * around it; the person's own line breaks and indentation (a list, some code) stay as written. A
 * handle glued to what comes before (`/link@bot CODE`) keeps the space after it.
 */
function withoutMention(text: string, username: string): string {
  const escaped = username.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const mention = new RegExp(`([ \\t]*)@${escaped}(?![A-Za-z0-9_])([ \\t]*)`, 'gi');
  const glued = (offset: number) => offset > 0 && /\S/.test(text.charAt(offset - 1));
  return text
    .replace(mention, (_match, before: string, after: string, offset: number) => {
      if (before && after) return ' ';
      return !before && glued(offset) ? after : '';
    })
    .trim();
}
