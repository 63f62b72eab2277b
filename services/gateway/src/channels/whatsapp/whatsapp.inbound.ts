import { directAddress, type ChannelIds, type ContentOptions, type InboundContent, type InboundMessage } from '../channel-types';
import { isBsuid, webhookChanges, type WhatsAppChange, type WhatsAppMessage, type WhatsAppWebhook } from './whatsapp.schemas';

/**
 * Message types that carry nothing to answer (a reaction, a system notice other than a changed
 * number or BSUID), and a user's edit or deletion of an earlier message (`edit`, `revoke`; as Telegram's
 * edits are): ignored, not refused.
 */
const SILENT = new Set(['reaction', 'system', 'ephemeral', 'request_welcome', 'edit', 'revoke']);

/**
 * The messages of a webhook, in order; status callbacks carry none and yield nothing. Messages
 * are read whatever number of the Meta app they were sent to (docs/channels.md#webhooks): a
 * signed delivery is ours, and the answer goes out from WHATSAPP_PHONE_NUMBER_ID. A sender is
 * their phone number when it comes, else their BSUID (a user with a username).
 */
export function whatsappInbound(payload: WhatsAppWebhook, options: ContentOptions = { vision: false }): InboundMessage[] {
  return received(payload).flatMap(({ message, contacts }) => {
    // Groups are not supported (docs/channels.md#whatsapp-groups): read as its sender's direct chat, a
    // group's every message would be answered in private and kept in their main session.
    if (message.group_id !== undefined) return [];
    const ids = senderIds(message);
    if (!ids) return [];
    const content = readContent(message, options);
    if (!content) return [];
    const contact = contacts.find(
      (candidate) => (message.from && candidate.wa_id === message.from) || (ids.bsuid && candidate.user_id === ids.bsuid),
    );
    const name = contact?.profile?.name || contact?.profile?.username || ids.id;
    return [{ channel: 'whatsapp', externalId: message.id, sender: { ...ids, name }, replyTo: directAddress('whatsapp', ids.id), content }];
  });
}

/** Ids of the messages whatsappInbound leaves out for want of a sender: neither a phone number nor a BSUID. */
export function messagesWithoutSender(payload: WhatsAppWebhook): string[] {
  return received(payload)
    .filter(({ message }) => !senderIds(message))
    .map(({ message }) => message.id);
}

type Contact = NonNullable<WhatsAppChange['value']['contacts']>[number];

/** Every message of the webhook's `messages` changes, in order, with the contacts sent beside it. */
function received(payload: WhatsAppWebhook): { message: WhatsAppMessage; contacts: Contact[] }[] {
  return webhookChanges(payload)
    .changes.filter((change) => change.field === 'messages')
    .flatMap(({ value }) =>
      (value.messages ?? []).flatMap((message) => (message === null ? [] : [{ message, contacts: value.contacts ?? [] }])),
    );
}

function senderIds(message: WhatsAppMessage): ChannelIds | undefined {
  // A changed BSUID's notice names the old one, which is what it moves away from.
  const previous = message.system?.type === 'user_changed_user_id' ? message.system.previous_user_id : undefined;
  return whatsappIds(message.from, previous ?? message.from_user_id);
}

/** A person's ids from a phone number and a BSUID, either of which may be missing; a BSUID of another form is not one. */
function whatsappIds(phone: string | undefined, userId: string | undefined): ChannelIds | undefined {
  const bsuid = userId !== undefined && isBsuid(userId) ? userId : undefined;
  const id = phone || bsuid;
  if (!id) return undefined;
  return bsuid === undefined ? { id } : { id, bsuid };
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
  const to = message.type === 'system' ? movedTo(message.system) : undefined;
  if (to) return { kind: 'changed-number', to };
  if (SILENT.has(message.type)) return undefined;
  return { kind: 'unsupported', what: message.type };
}

/**
 * Where a changed number's notice moves its sender: the new number and perhaps BSUID
 * (`user_changed_number`), or only the new BSUID when WhatsApp cannot share the number
 * (`user_changed_user_id`: a changed number regenerates the BSUID), which then becomes the address.
 */
function movedTo(system: WhatsAppMessage['system']): ChannelIds | undefined {
  if (system?.type === 'user_changed_number') return whatsappIds(system.wa_id, system.user_id);
  if (system?.type === 'user_changed_user_id') return whatsappIds(undefined, system.user_id);
  return undefined;
}
