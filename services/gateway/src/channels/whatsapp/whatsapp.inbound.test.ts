import { fixture, whatsappButtonReply, whatsappImage, whatsappStatus, whatsappText } from '../../../../../tests/helpers/channel-fixtures';
import { messagesWithoutNumber, whatsappInbound } from './whatsapp.inbound';
import { verifyQuery, whatsappWebhook } from './whatsapp.schemas';

const read = (body: unknown) => whatsappInbound(whatsappWebhook.parse(body));

describe('whatsapp schemas and inbound mapping', () => {
  it.each([whatsappText, whatsappButtonReply, whatsappStatus, whatsappImage])('parses the shared fixture %#', (body) => {
    expect(whatsappWebhook.safeParse(body).success).toBe(true);
  });

  it('reads a text message with its sender and message id', () => {
    expect(read(whatsappText)).toEqual([
      {
        channel: 'whatsapp',
        externalId: 'wamid.HBgNNTUxMTk4NzY1NDMyMRUCABIYFjNFQjBDMEE1RTk4RTRBQkQxNkIzAA==',
        sender: { id: '5511987654321', name: 'Maria Souza' },
        replyTo: { channel: 'whatsapp', wa_id: '5511987654321' },
        content: { kind: 'text', text: 'me lembra de beber água às 15h' },
      },
    ]);
  });

  it('reads a reply button press as its id', () => {
    expect(read(whatsappButtonReply)[0]?.content).toEqual({
      kind: 'button',
      data: '<the reply id the bot set, at most 256 characters>',
    });
  });

  it('yields nothing for a status callback and "unsupported" for an image', () => {
    expect(read(whatsappStatus)).toEqual([]);
    expect(read(whatsappImage)[0]?.content).toEqual({ kind: 'unsupported', what: 'image' });
  });

  it('reads messages sent to any number of the app, or without metadata', () => {
    const otherNumber = fixture(whatsappText);
    Object.assign(otherNumber.entry[0]?.changes[0]?.value.metadata ?? {}, { phone_number_id: '999999999999999' });
    const noMetadata = fixture(whatsappText);
    delete (noMetadata.entry[0]?.changes[0]?.value as { metadata?: unknown }).metadata;
    for (const body of [otherNumber, noMetadata]) expect(read(body)).toEqual(read(whatsappText));
    expect(read(whatsappText)).toHaveLength(1);
  });

  it('checks the verification query', () => {
    expect(verifyQuery.safeParse({ 'hub.mode': 'subscribe', 'hub.verify_token': 't', 'hub.challenge': '42' }).success).toBe(true);
    expect(verifyQuery.safeParse({ 'hub.mode': 'unsubscribe', 'hub.verify_token': 't', 'hub.challenge': '42' }).success).toBe(false);
  });

  it('reads an image with VISION on as a photo with its caption, and audio as voice', () => {
    const [image] = whatsappInbound(whatsappWebhook.parse(whatsappImage), { vision: true });
    expect(image?.content).toEqual({ kind: 'photo', media: { channel: 'whatsapp', media_id: '1548871829348871' }, caption: 'recibo' });
    const audio = fixture(whatsappText);
    Object.assign(audio.entry[0]?.changes[0]?.value.messages[0] ?? {}, {
      type: 'audio',
      text: undefined,
      audio: { id: 'a-1', mime_type: 'audio/ogg' },
    });
    expect(read(audio)[0]?.content).toEqual({ kind: 'voice', media: { channel: 'whatsapp', media_id: 'a-1' } });
  });

  it('reads a batch in which a username user has no phone number: their message is left out, the others read', () => {
    const batch = fixture(whatsappText);
    const value = batch.entry[0]?.changes[0]?.value;
    if (!value) throw new Error('the text fixture has no value');
    (value.contacts as unknown[]).push({ profile: { username: 'uma.x' }, user_id: 'BR.1502576394655843' });
    (value.messages as unknown[]).push({
      from_user_id: 'BR.1502576394655843',
      id: 'wamid.username-user',
      timestamp: '1763800301',
      type: 'text',
      text: { body: 'oi' },
    });
    const parsed = whatsappWebhook.safeParse(batch);
    expect(parsed.success).toBe(true);
    if (!parsed.success) return;
    expect(whatsappInbound(parsed.data)).toEqual(read(whatsappText));
    expect(messagesWithoutNumber(parsed.data)).toEqual(['wamid.username-user']);
  });

  it('stays silent on a reaction, a system notice, and an edit or deletion of an earlier message', () => {
    for (const [type, detail] of [
      ['reaction', { reaction: { message_id: 'wamid.earlier', emoji: '👍' } }],
      ['system', { system: { body: 'changed number', type: 'user_changed_number' } }],
      ['revoke', { revoke: { original_message_id: 'wamid.earlier' } }],
      ['edit', { edit: { original_message_id: 'wamid.earlier', message: { type: 'text', text: { body: 'fixed' } } } }],
    ] as const) {
      const body = fixture(whatsappText);
      const message = body.entry[0]?.changes[0]?.value.messages[0] as Record<string, unknown>;
      delete message.text;
      Object.assign(message, { type, ...detail });
      expect(read(body)).toEqual([]);
    }
  });
});
