import { fixture, whatsappButtonReply, whatsappImage, whatsappStatus, whatsappText } from '../../../../../tests/helpers/channel-fixtures';
import { messagesWithoutSender, whatsappInbound } from './whatsapp.inbound';
import { isBsuid, verifyQuery, webhookChanges, whatsappWebhook } from './whatsapp.schemas';
import { failedSends } from './whatsapp.statuses';

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

  /** The text fixture with one more message (and its contact) in its batch. */
  function withMessage(message: Record<string, unknown>, contact?: Record<string, unknown>) {
    const batch = fixture(whatsappText);
    const value = batch.entry[0]?.changes[0]?.value;
    if (!value) throw new Error('the text fixture has no value');
    if (contact) (value.contacts as unknown[]).push(contact);
    (value.messages as unknown[]).push({ id: 'wamid.added', timestamp: '1763800301', ...message });
    return whatsappWebhook.parse(batch);
  }

  it('reads a username user without a phone number by their BSUID, named by their username, answered there', () => {
    const batch = withMessage(
      { from_user_id: 'BR.1502576394655843', type: 'text', text: { body: 'oi' } },
      { profile: { username: 'uma.x' }, user_id: 'BR.1502576394655843' },
    );
    expect(whatsappInbound(batch)).toEqual([
      ...read(whatsappText),
      {
        channel: 'whatsapp',
        externalId: 'wamid.added',
        sender: { id: 'BR.1502576394655843', bsuid: 'BR.1502576394655843', name: 'uma.x' },
        replyTo: { channel: 'whatsapp', wa_id: 'BR.1502576394655843' },
        content: { kind: 'text', text: 'oi' },
      },
    ]);
    expect(messagesWithoutSender(batch)).toEqual([]);
  });

  it('reads a message with both a phone number and a BSUID as from the number, carrying the BSUID', () => {
    const batch = withMessage(
      { from: '351912345678', from_user_id: 'PT.ENT.11815799212886844830', type: 'text', text: { body: 'olá' } },
      { profile: { name: 'Rui' }, wa_id: '351912345678', user_id: 'PT.ENT.11815799212886844830' },
    );
    expect(whatsappInbound(batch)[1]).toMatchObject({
      sender: { id: '351912345678', bsuid: 'PT.ENT.11815799212886844830', name: 'Rui' },
      replyTo: { channel: 'whatsapp', wa_id: '351912345678' },
    });
  });

  it('leaves out a message with neither a phone number nor a BSUID of the known form, and reads the rest of its batch', () => {
    for (const fromUserId of [undefined, '', 'br.1502576394655843', '1502576394655843', 'BR.', 'BR.15025 76394']) {
      const batch = withMessage({ from_user_id: fromUserId, type: 'text', text: { body: 'oi' } });
      expect(whatsappInbound(batch)).toEqual(read(whatsappText));
      expect(messagesWithoutSender(batch)).toEqual(['wamid.added']);
    }
  });

  it('tells a BSUID from a phone number by its form', () => {
    for (const bsuid of ['BR.1502576394655843', 'US.ENT.11815799212886844830', 'PT.abc123', `BR.${'9'.repeat(128)}`])
      expect(isBsuid(bsuid)).toBe(true);
    for (const other of [
      '5511987654321',
      '+5511987654321',
      'BR1502576394655843',
      'BRA.1502576394655843',
      'US.ENT.',
      'BR.15-02',
      `BR.${'9'.repeat(129)}`,
    ])
      expect(isBsuid(other)).toBe(false);
  });

  it('reads a changed number as the move to the new number and BSUID, from the old ones; with neither it stays silent', () => {
    const system = { body: 'User A changed from 5511987654321 to 5511912345678', wa_id: '5511912345678', type: 'user_changed_number' };
    const change = (extra: Record<string, unknown>, message: Record<string, unknown> = {}) =>
      whatsappInbound(withMessage({ from: '5511987654321', type: 'system', system: { ...system, ...extra }, ...message }))[1];
    expect(change({})).toEqual({
      channel: 'whatsapp',
      externalId: 'wamid.added',
      sender: { id: '5511987654321', name: 'Maria Souza' },
      replyTo: { channel: 'whatsapp', wa_id: '5511987654321' },
      content: { kind: 'changed-number', to: { id: '5511912345678' } },
    });
    expect(change({ user_id: 'BR.77' }, { from_user_id: 'BR.1502576394655843' })).toMatchObject({
      sender: { id: '5511987654321', bsuid: 'BR.1502576394655843' },
      content: { kind: 'changed-number', to: { id: '5511912345678', bsuid: 'BR.77' } },
    });
    expect(change({ wa_id: undefined })).toBeUndefined();
    expect(change({ type: 'customer_identity_changed' })).toBeUndefined();
  });

  it('reads a changed BSUID (a changed number not shared) as the move to the new BSUID, from the previous one', () => {
    const system = { body: 'User A changed', type: 'user_changed_user_id', previous_user_id: 'BR.11', user_id: 'BR.22' };
    const change = (extra: Record<string, unknown>) =>
      whatsappInbound(withMessage({ from: undefined, from_user_id: 'BR.22', type: 'system', system: { ...system, ...extra } }))[1];
    expect(change({})).toMatchObject({
      sender: { id: 'BR.11', bsuid: 'BR.11' },
      replyTo: { channel: 'whatsapp', wa_id: 'BR.11' },
      content: { kind: 'changed-number', to: { id: 'BR.22', bsuid: 'BR.22' } },
    });
    expect(change({ user_id: 'not a bsuid' })).toBeUndefined();
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

  it("stays silent on a group's messages, which are nobody's direct chat, and reads the rest of its batch", () => {
    const body = fixture(whatsappText);
    const value = body.entry[0]?.changes[0]?.value;
    const [direct] = value?.messages ?? [];
    if (!value || !direct) throw new Error('the text fixture has no message');
    value.messages = [{ ...direct, id: 'wamid.in-group', group_id: 'Y2FwaV9ncm91cDpFWEFNUExFX0dST1VQX0lE' } as typeof direct, direct];
    expect(read(body).map((message) => message.externalId)).toEqual([direct.id]);
  });

  it('leaves out the parts of a batch of a shape it does not know, and reads the rest', () => {
    const batch = fixture(whatsappText) as { entry: unknown[] };
    const entry = batch.entry[0] as { changes: { value: { messages: unknown[]; statuses?: unknown[] } }[] };
    const value = entry.changes[0]?.value;
    if (!value) throw new Error('the text fixture has no value');
    value.messages.unshift({ from: '5511987654321', id: 'wamid.odd', timestamp: '1763800299', type: 'text', text: {} });
    value.statuses = [
      { status: 'failed', errors: [{ code: 131047 }] },
      { id: 'wamid.out', status: 'failed', errors: [{ code: 131047 }] },
    ];
    entry.changes.push({ field: 'a_future_field', value: null } as never);
    batch.entry.push({ id: '102290129340398', time: 1763800300 }, 'a future entry');
    const payload = whatsappWebhook.parse(batch);
    expect(read(batch)).toEqual(read(whatsappText));
    expect(failedSends(payload).outsideWindow).toEqual(['wamid.out']);
    expect(webhookChanges(payload).unknownParts).toBe(5);
  });
});
