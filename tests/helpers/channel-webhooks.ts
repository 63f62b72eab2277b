import { createHmac, randomInt, randomUUID } from 'node:crypto';
import { fixture, telegramPrivateText, whatsappText } from './channel-fixtures';

/**
 * Sends webhooks to a gateway as Telegram and WhatsApp would: the secret header, the HMAC
 * signature over the raw body. Ids are unique per run so no test mistakes another's messages.
 */
export class ChannelWebhooks {
  private sequence = 0;
  // Test files run in parallel against one database: each instance draws its own block of ids.
  private readonly base = 6_000_000 + randomInt(0, 10_000) * 100_000;

  constructor(
    private readonly gatewayUrl: () => string,
    readonly telegramSecret: string,
    readonly whatsappAppSecret: string,
  ) {}

  nextId(): number {
    return this.base + ++this.sequence * 10 + Math.floor(Math.random() * 10);
  }

  /** A private-chat text update from user `from`, built from the shared fixture. */
  tgText(from: number, text: string, updateId = this.nextId()) {
    const update = fixture(telegramPrivateText);
    update.update_id = updateId;
    Object.assign(update.message, {
      message_id: this.nextId(),
      text,
      from: { ...update.message.from, id: from },
      chat: { ...update.message.chat, id: from },
    });
    return update;
  }

  /** `secret: null` sends no header at all; a string is sent as it is. */
  postTelegram(update: unknown, secret: string | null = this.telegramSecret) {
    return fetch(`${this.gatewayUrl()}/webhooks/telegram`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(secret === null ? {} : { 'x-telegram-bot-api-secret-token': secret }) },
      body: typeof update === 'string' ? update : JSON.stringify(update),
    });
  }

  /** A WhatsApp text message webhook from `from`, as its raw body. */
  waText(from: string, text: string, id = `wamid.${randomUUID()}`): string {
    const payload = fixture(whatsappText);
    const value = payload.entry[0]?.changes[0]?.value;
    Object.assign(value?.contacts[0] ?? {}, { wa_id: from });
    Object.assign(value?.messages[0] ?? {}, { from, id, text: { body: text } });
    return JSON.stringify(payload);
  }

  sign(raw: string, secret = this.whatsappAppSecret): string {
    return `sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`;
  }

  /** `signature: null` sends no header at all. */
  postWhatsApp(raw: string, signature: string | null = this.sign(raw)) {
    return fetch(`${this.gatewayUrl()}/webhooks/whatsapp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(signature === null ? {} : { 'x-hub-signature-256': signature }) },
      body: raw,
    });
  }
}
