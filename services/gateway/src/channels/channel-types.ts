import type { ChannelAddress, MediaRef } from '@assistant/shared';

export type ChannelName = ChannelAddress['channel'];

/**
 * Who a person is on a channel. `id` is their identity's external id and their chat's address: a
 * Telegram user id; a WhatsApp phone number, or the BSUID of a user who hides theirs. `bsuid` is
 * a WhatsApp user's business-scoped user id, which comes with the number too
 * (docs/channels.md#whatsapp-usernames-and-changed-numbers).
 */
export interface ChannelIds {
  id: string;
  bsuid?: string;
}

/** What a person sent, normalised from a provider's webhook for the inbound pipeline. */
export type InboundContent =
  | { kind: 'text'; text: string }
  | { kind: 'button'; data: string }
  | { kind: 'voice'; media: MediaRef }
  | { kind: 'photo'; media: MediaRef; caption: string }
  | { kind: 'unsupported'; what: string }
  /**
   * WhatsApp's notice that the sender changed their number (or, when it cannot share the new one,
   * their BSUID): their identity moves to `to`; never answered.
   */
  | { kind: 'changed-number'; to: ChannelIds };

/** VISION: whether photos are content the assistant reads, or unsupported. */
export interface ContentOptions {
  vision: boolean;
}

export interface InboundMessage {
  channel: ChannelName;
  /** The provider's id of this delivery (Telegram update_id, WhatsApp message id): a redelivery repeats it. */
  externalId: string;
  /** Telegram: the bot it came to, whose update ids count on their own; another bot (a new token) may repeat one. */
  botId?: string;
  sender: ChannelIds & { name: string };
  /** The group chat's id; absent in direct chats. */
  group?: string;
  replyTo: ChannelAddress;
  content: InboundContent;
  /** The album it belongs to (Telegram `media_group_id`): one update per item, one unsupported reply for them all. */
  album?: string;
}

export interface Button {
  /** Telegram callback_data (at most 64 bytes) or WhatsApp reply id. */
  id: string;
  title: string;
}

/** A WhatsApp message template approved by Meta, whose one body variable `{{1}}` is the text. */
export interface MessageTemplate {
  name: string;
  language: string;
}

export interface OutboundPart {
  text: string;
  /** Telegram: the part in HTML parse mode, sent first; `text` is then its plain fallback. */
  html?: string;
  buttons?: Button[];
  /** WhatsApp: sent as this template, the only kind of message it delivers outside the 24-hour window. */
  template?: MessageTemplate;
}

/** Markdown as parts of at most `limit` characters in a channel's own formatting. */
export type MarkdownFormatter = (markdown: string, limit: number) => OutboundPart[];

export interface ChannelSender {
  /** The longest text of one message, plain and with buttons (WhatsApp interactive bodies are shorter). */
  readonly limits: { text: number; withButtons: number };
  readonly formatMarkdown: MarkdownFormatter;
  /** Sends one message and answers the provider's id for it. */
  send(to: ChannelAddress, part: OutboundPart): Promise<string>;
}

/** A provider refused a call: 429 is retried after retryAfterMs, other 4xx never, the rest with backoff. */
export class ChannelApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

/**
 * The provider refuses free-form messages to this chat until its user writes there: WhatsApp
 * outside its 24-hour customer-service window, Telegram to someone who never opened a private chat
 * with the bot (docs/channels.md#delivery). A 4xx like any other refusal; a notice is sent again elsewhere.
 */
export class OutsideWindowError extends ChannelApiError {}

/** A direct chat with an identity: a Telegram user's private chat has the user's id. */
export function directAddress(channel: ChannelName, externalId: string): ChannelAddress {
  return channel === 'telegram' ? { channel, chat_id: externalId } : { channel, wa_id: externalId };
}

/** Telegram's webhook bodies: the same 1 MiB as the API (docs/api.md#errors); an update is far less. WhatsApp's: WHATSAPP_BODY_LIMIT. */
export const WEBHOOK_BODY_LIMIT = '1mb';
