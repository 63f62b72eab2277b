import type { ContentOptions, InboundContent, InboundMessage } from '../channel-types';
import type { WhatsAppMessage, WhatsAppWebhook } from './whatsapp.schemas';

/** Message types that carry nothing to answer (a reaction, a system notice): ignored, not refused. */
const SILENT = new Set(['reaction', 'system', 'ephemeral', 'request_welcome']);

/**
 * The messages of a webhook, in order; status callbacks carry none and yield nothing. Messages
 * are read whatever number of the Meta app they were sent to (docs/channels.md#webhooks): a
 * signed delivery is ours, and the answer goes out from WHATSAPP_PHONE_NUMBER_ID.
 */
export function whatsappInbound(payload: WhatsAppWebhook, options: ContentOptions = { vision: false }): InboundMessage[] {
  const messages: InboundMessage[] = [];
  for (const entry of payload.entry) {
    for (const change of entry.changes) {
      if (change.field !== 'messages') continue;
      const { contacts = [], messages: received = [] } = change.value;
      for (const message of received) {
        const content = readContent(message, options);
        if (!content) continue;
        const name = contacts.find((contact) => contact.wa_id === message.from)?.profile?.name ?? message.from;
        messages.push({
          channel: 'whatsapp',
          externalId: message.id,
          sender: { id: message.from, name },
          replyTo: { channel: 'whatsapp', wa_id: message.from },
          content,
        });
      }
    }
  }
  return messages;
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
