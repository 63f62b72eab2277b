import { createHmac, randomInt, randomUUID } from 'node:crypto';
import { fixture, telegramPrivateText, whatsappStatus, whatsappText } from './channel-fixtures';
import { REENGAGEMENT } from './fake-graph';

/** A WhatsApp user's number, BSUID, or both. */
export interface WhatsAppSender {
  phone?: string;
  bsuid?: string;
}

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

  /** A private-chat voice note update from user `from`, whose audio is the file `fileId`. */
  tgVoice(from: number, fileId: string) {
    const { text: _text, ...message } = this.tgText(from, '').message;
    return {
      update_id: this.nextId(),
      message: {
        ...message,
        voice: { file_id: fileId, file_unique_id: `u${fileId}`, duration: 3, mime_type: 'audio/ogg', file_size: 2_048 },
      },
    };
  }

  /** `secret: null` sends no header at all; a string is sent as it is. */
  postTelegram(update: unknown, secret: string | null = this.telegramSecret) {
    return fetch(`${this.gatewayUrl()}/webhooks/telegram`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(secret === null ? {} : { 'x-telegram-bot-api-secret-token': secret }) },
      body: typeof update === 'string' ? update : JSON.stringify(update),
    });
  }

  /** A WhatsApp text message webhook from the number `from`, as its raw body. */
  waText(from: string, text: string, id = `wamid.${randomUUID()}`): string {
    return this.waMessage({ phone: from }, { type: 'text', text: { body: text } }, id);
  }

  /**
   * A WhatsApp message webhook (`message` holds its type and content) from a number, a BSUID or
   * both, as its raw body. Without a number the contact has only the BSUID and a username, as for
   * a user who hides their number.
   */
  waMessage(from: WhatsAppSender, message: Record<string, unknown>, id = `wamid.${randomUUID()}`): string {
    const payload = fixture(whatsappText);
    const value = payload.entry[0]?.changes[0]?.value;
    const [contact, original] = [value?.contacts[0], value?.messages[0]];
    if (!value || !contact || !original) throw new Error('the text fixture has no message');
    // Undefined fields are left out of the JSON, as Meta leaves them out.
    Object.assign(value, {
      contacts: [
        from.phone === undefined
          ? { profile: { username: 'hidden.number' }, user_id: from.bsuid }
          : { ...contact, wa_id: from.phone, user_id: from.bsuid },
      ],
      messages: [{ from: from.phone, from_user_id: from.bsuid, id, timestamp: original.timestamp, ...message }],
    });
    return JSON.stringify(payload);
  }

  /** WhatsApp's notice that `from` changed their number to `to` (a `system` message, answered by nothing). */
  waNumberChange(from: WhatsAppSender, to: WhatsAppSender, id = `wamid.${randomUUID()}`): string {
    const system = {
      body: `User A changed from ${from.phone} to ${to.phone}`,
      type: 'user_changed_number',
      wa_id: to.phone,
      user_id: to.bsuid,
    };
    return this.waMessage(from, { type: 'system', system }, id);
  }

  /**
   * WhatsApp's notice that the user with BSUID `from` changed their number without sharing it: a
   * `system` message naming only the new BSUID `to` and the previous one, no number anywhere.
   */
  waUserIdChange(from: string, to: string, id = `wamid.${randomUUID()}`): string {
    const system = {
      body: 'User A changed their business-scoped user ID',
      type: 'user_changed_user_id',
      previous_user_id: from,
      user_id: to,
    };
    return this.waMessage({ bsuid: to }, { type: 'system', system }, id);
  }

  /**
   * WhatsApp's later report that the message `messageId` it had accepted for `recipient` failed,
   * by default for being outside the 24-hour window (code 131047), as its raw body.
   */
  waFailedStatus(messageId: string, recipient: string, code = 131047): string {
    const payload = fixture(whatsappStatus);
    const value = payload.entry[0]?.changes[0]?.value;
    if (!value) throw new Error('the status fixture has no value');
    const error = { code, title: 'Re-engagement message', message: 'Re-engagement message', error_data: REENGAGEMENT };
    Object.assign(value, {
      statuses: [{ id: messageId, status: 'failed', timestamp: '1763886710', recipient_id: recipient, errors: [error] }],
    });
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
