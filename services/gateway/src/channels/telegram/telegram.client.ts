import type { z } from 'zod';
import { recipientOf, type ChannelAddress } from '@assistant/shared';
import { ChannelApiError, OutsideWindowError, type ChannelSender, type MarkdownFormatter, type OutboundPart } from '../channel-types';
import { formatParts } from '../format/markdown-split';
import { plainMarkup, telegramHtml } from '../format/markup';
import { sentMessage, telegramResponse, telegramUser } from './telegram.schemas';

const REQUEST_TIMEOUT_MS = 15_000;

/** The Bot API calls we make, against TELEGRAM_API_BASE_URL (a local fake in tests). */
export class TelegramClient implements ChannelSender {
  // sendMessage takes at most 4,096 characters; a margin keeps every part safely under it.
  readonly limits = { text: 4_000, withButtons: 4_000 };
  private readonly baseUrl: string;
  /** The bot's id: a token is `<bot id>:<secret>`. */
  readonly botId: string;

  constructor(
    baseUrl: string,
    private readonly token: string,
  ) {
    this.baseUrl = baseUrl.replace(/\/+$/, '');
    this.botId = token.split(':')[0] ?? '';
  }

  /**
   * HTML parse mode, each part with its plain twin for the resend after a refusal. A part with
   * nothing to read (an empty code block) is left out: Telegram refuses it as empty.
   */
  readonly formatMarkdown: MarkdownFormatter = (markdown, limit) =>
    formatParts(markdown, [telegramHtml, plainMarkup], limit)
      .map(([html = '', text = '']) => ({ text, html }))
      .filter((part) => part.text.trim() !== '');

  /**
   * An HTML part Telegram refuses ("can't parse entities", or "message text is empty" for markup
   * around no text, such as a link without words) is sent again once as plain text, and a
   * part for a forum topic that is gone (deleted, or closed since the message came) once to the
   * chat itself, its General topic: a refused message was not delivered, so neither resend can
   * send the part twice.
   */
  async send(to: ChannelAddress, part: OutboundPart): Promise<string> {
    const chat = chatTarget(to);
    try {
      return await this.sendTo(chat, part);
    } catch (error) {
      if (chat.message_thread_id === undefined || !isTopicGone(error)) throw error;
      return this.sendTo({ chat_id: chat.chat_id }, part);
    }
  }

  private async sendTo(chat: ChatTarget, part: OutboundPart): Promise<string> {
    const markup = part.buttons
      ? { reply_markup: { inline_keyboard: [part.buttons.map((button) => ({ text: button.title, callback_data: button.id }))] } }
      : {};
    if (part.html !== undefined) {
      try {
        return await this.sendMessage({ ...chat, text: part.html, parse_mode: 'HTML', ...markup });
      } catch (error) {
        if (!isEntityRefusal(error)) throw error;
      }
    }
    return this.sendMessage({ ...chat, text: part.text, ...markup });
  }

  /** "typing…" in the chat for about 5 seconds, or until the bot's next message. */
  async sendTyping(to: ChannelAddress): Promise<void> {
    await this.call('sendChatAction', { ...chatTarget(to), action: 'typing' });
  }

  async answerCallbackQuery(callbackQueryId: string, text?: string): Promise<void> {
    await this.call('answerCallbackQuery', { callback_query_id: callbackQueryId, ...(text ? { text } : {}) });
  }

  async getMe(): Promise<z.infer<typeof telegramUser>> {
    return this.parse(telegramUser, await this.call('getMe', {}), 'getMe');
  }

  private async sendMessage(body: Record<string, unknown>): Promise<string> {
    const result = await this.call('sendMessage', body);
    return String(this.parse(sentMessage, result, 'sendMessage').message_id);
  }

  /** `upgraded`: this call already follows a group's upgrade, so it follows no other. */
  private async call(method: string, body: Record<string, unknown>, upgraded = false): Promise<unknown> {
    // The token is part of the URL: errors name the method, never the URL.
    const res = await fetch(`${this.baseUrl}/bot${this.token}/${method}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const answer = telegramResponse.safeParse(await res.json().catch(() => undefined));
    if (res.ok && answer.success && answer.data.ok) return answer.data.result;
    const parameters = answer.success ? answer.data.parameters : undefined;
    // A basic group upgraded to a supergroup (docs/channels.md#group-upgrades): Telegram refuses its
    // old id for good, naming the new one. The refused call did nothing, so making it there once
    // sends a message once, whenever it was queued for the old id.
    if (parameters?.migrate_to_chat_id !== undefined && 'chat_id' in body && !upgraded) {
      return this.call(method, { ...body, chat_id: String(parameters.migrate_to_chat_id) }, true);
    }
    const description = answer.success ? (answer.data.description ?? '') : 'unreadable answer';
    const retryAfter = parameters?.retry_after;
    // Someone known only from a group, who never opened a private chat with the bot: as with WhatsApp's window, only they can open it.
    const Refusal = res.status === 403 && /can't initiate conversation/i.test(description) ? OutsideWindowError : ChannelApiError;
    throw new Refusal(
      `telegram ${method} failed: ${res.status} ${description}`.trim(),
      res.ok ? 502 : res.status,
      retryAfter === undefined ? undefined : retryAfter * 1_000,
    );
  }

  private parse<S extends z.ZodType>(schema: S, value: unknown, method: string): z.output<S> {
    const parsed = schema.safeParse(value);
    if (!parsed.success) throw new ChannelApiError(`telegram ${method} answered an unexpected result`, 502);
    return parsed.data;
  }
}

type ChatTarget = { chat_id: string; message_thread_id?: number };

/** The chat of a message or an action and, in a supergroup with topics, its topic (docs/channels.md#forum-topics). */
function chatTarget(to: ChannelAddress): ChatTarget {
  const topic = to.channel === 'telegram' ? to.message_thread_id : undefined;
  return { chat_id: recipientOf(to), ...(topic === undefined ? {} : { message_thread_id: topic }) };
}

/** Telegram's answers for a topic deleted or closed (General is neither). */
function isTopicGone(error: unknown): boolean {
  return (
    error instanceof ChannelApiError && error.status === 400 && /message thread not found|TOPIC_CLOSED|TOPIC_DELETED/i.test(error.message)
  );
}

function isEntityRefusal(error: unknown): boolean {
  return (
    error instanceof ChannelApiError &&
    error.status === 400 &&
    /can't parse entities|can't parse message text|message text is empty/i.test(error.message)
  );
}
