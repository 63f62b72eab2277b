import type { z } from 'zod';
import { ChannelApiError, type ChannelSender, type OutboundPart } from '../channel-types';
import { sentMessage, telegramResponse, telegramUser } from './telegram.schemas';

const REQUEST_TIMEOUT_MS = 15_000;

/** The Bot API calls we make, against TELEGRAM_API_BASE_URL (a local fake in tests). */
export class TelegramClient implements ChannelSender {
  // sendMessage takes at most 4,096 characters; a margin keeps every part safely under it.
  readonly limits = { text: 4_000, withButtons: 4_000 };
  private readonly baseUrl: string;

  constructor(
    baseUrl: string,
    private readonly token: string,
  ) {
    this.baseUrl = baseUrl.replace(/\/+$/, '');
  }

  async send(chatId: string, part: OutboundPart): Promise<string> {
    const markup = part.buttons
      ? { reply_markup: { inline_keyboard: [part.buttons.map((button) => ({ text: button.title, callback_data: button.id }))] } }
      : {};
    const result = await this.call('sendMessage', { chat_id: chatId, text: part.text, ...markup });
    return String(this.parse(sentMessage, result, 'sendMessage').message_id);
  }

  async answerCallbackQuery(callbackQueryId: string, text?: string): Promise<void> {
    await this.call('answerCallbackQuery', { callback_query_id: callbackQueryId, ...(text ? { text } : {}) });
  }

  async getMe(): Promise<z.infer<typeof telegramUser>> {
    return this.parse(telegramUser, await this.call('getMe', {}), 'getMe');
  }

  private async call(method: string, body: Record<string, unknown>): Promise<unknown> {
    // The token is part of the URL: errors name the method, never the URL.
    const res = await fetch(`${this.baseUrl}/bot${this.token}/${method}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const answer = telegramResponse.safeParse(await res.json().catch(() => undefined));
    if (res.ok && answer.success && answer.data.ok) return answer.data.result;
    const description = answer.success ? (answer.data.description ?? '') : 'unreadable answer';
    const retryAfter = answer.success ? answer.data.parameters?.retry_after : undefined;
    throw new ChannelApiError(
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
