import type { ContentOptions, InboundContent, InboundMessage } from '../channel-types';
import type { WhatsAppMessage, WhatsAppWebhook } from './whatsapp.schemas';

/**
 * Message types that carry nothing to answer (a reaction, a system notice), and a user's edit or
 * deletion of an earlier message (`edit`, `revoke`; as Telegram's edits are): ignored, not refused.
 */
const SILENT = new Set(['reaction', 'system', 'ephemeral', 'request_welcome', 'edit', 'revoke']);

/**
 * The messages of a webhook, in order; status callbacks carry none and yield nothing. Messages
 * are read whatever number of the Meta app they were sent to (docs/channels.md#webhooks): a
 * signed delivery is ours, and the answer goes out from WHATSAPP_PHONE_NUMBER_ID.
 */
export function whatsappInbound(payload: WhatsAppWebhook, options: ContentOptions = { vision: false }): InboundMessage[] {
  return received(payload).flatMap(({ message, contacts }) => {
    const from = message.from;
    // No phone number (a user with a username): nothing here can answer them yet (docs/channels.md#webhooks).
    if (from === undefined || from === '') return [];
    const content = readContent(message, options);
    if (!content) return [];
    const name = contacts.find((contact) => contact.wa_id === from)?.profile?.name || from;
    return [
      { channel: 'whatsapp', externalId: message.id, sender: { id: from, name }, replyTo: { channel: 'whatsapp', wa_id: from }, content },
    ];
  });
}

/** Ids of the messages whatsappInbound leaves out for want of a phone number to answer (users with a username). */
export function messagesWithoutNumber(payload: WhatsAppWebhook): string[] {
  return received(payload)
    .filter(({ message }) => message.from === undefined || message.from === '')
    .map(({ message }) => message.id);
}

type Contact = NonNullable<WhatsAppWebhook['entry'][number]['changes'][number]['value']['contacts']>[number];

/** Every message of the webhook's `messages` changes, in order, with the contacts sent beside it. */
function received(payload: WhatsAppWebhook): { message: WhatsAppMessage; contacts: Contact[] }[] {
  return payload.entry
    .flatMap((entry) => entry.changes)
    .filter((change) => change.field === 'messages')
    .flatMap(({ value }) => (value.messages ?? []).map((message) => ({ message, contacts: value.contacts ?? [] })));
}

function readContent(message: WhatsAppMessage, options: ContentOptions): InboundContent | undefined {
  if (message.type === 'text' && message.text)
    return message.text.body.trim() === '' ? undefined : { kind: 'text', text: message.text.body };
  const reply = message.interactive?.button_reply ?? message.interactive?.list_reply;
  if (message.type === 'interactive' && reply) return { kind: 'button', data: reply.id };
  if (message.type === 'button' && message.button) return { kind: 'text', text: message.button.text };
  if (message.type === 'audio' && message.audio) return { kind: 'voice', media: { channel: 'whatsapp', media_id: message.audio.id } };
  if (message.type === 'image' && message.image && options.vision) {
    return { kind: 'photo', media: { channel: 'whatsapp', media_id: message.image.id }, caption: message.image.caption ?? '' };
  }
  if (SILENT.has(message.type)) return undefined;
  return { kind: 'unsupported', what: message.type };
}
