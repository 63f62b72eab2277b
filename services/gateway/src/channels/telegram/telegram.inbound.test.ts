import {
  fixture,
  telegramCallbackQuery,
  telegramEditedMessage,
  telegramGroupMention,
  telegramPhoto,
  telegramPrivateText,
} from '../../../../../tests/helpers/channel-fixtures';
import { inForumTopic } from '../../../../../tests/helpers/telegram-updates';
import { telegramInbound } from './telegram.inbound';
import { telegramUpdate } from './telegram.schemas';

const bot = { id: '7000000001', username: async () => 'nexo_assistant_bot' };
const read = async (body: unknown) => telegramInbound(telegramUpdate.parse(body), bot);

describe('telegram schemas and inbound mapping', () => {
  it.each([telegramPrivateText, telegramGroupMention, telegramCallbackQuery, telegramPhoto, telegramEditedMessage])(
    'parses the shared fixture %#',
    (body) => {
      expect(telegramUpdate.safeParse(body).success).toBe(true);
    },
  );

  it('refuses a body without update_id', () => {
    expect(telegramUpdate.safeParse({ message: telegramPrivateText.message }).success).toBe(false);
  });

  it('reads a minimal update without date, is_bot, first_name or message ids, its sender unnamed', async () => {
    const minimal = { update_id: 5, message: { from: { id: 42 }, chat: { id: 42, type: 'private' }, text: 'hi' } };
    expect(await read(minimal)).toEqual({
      channel: 'telegram',
      botId: '7000000001',
      externalId: '5',
      sender: { id: '42', name: '' },
      replyTo: { channel: 'telegram', chat_id: '42' },
      content: { kind: 'text', text: 'hi' },
    });
    const press = { update_id: 6, callback_query: { id: 'q', from: { id: 42 }, data: 'x' } };
    expect((await read(press))?.sender).toEqual({ id: '42', name: '' });
  });

  it('reads a private text message as a direct message of its sender', async () => {
    expect(await read(telegramPrivateText)).toEqual({
      channel: 'telegram',
      botId: '7000000001',
      externalId: '918273645',
      sender: { id: '5550001', name: 'Tiago' },
      replyTo: { channel: 'telegram', chat_id: '5550001' },
      content: { kind: 'text', text: 'criar hábito meditação diária' },
    });
  });

  it('reads a group message that mentions the bot, without the mention', async () => {
    expect(await read(telegramGroupMention)).toMatchObject({
      group: '-1001234567890',
      replyTo: { chat_id: '-1001234567890' },
      content: { kind: 'text', text: 'lista meus hábitos' },
    });
  });

  it("keeps a group message's line breaks and indentation once the mention is taken out", async () => {
    const mentioned = (text: string) => {
      const update = fixture(telegramGroupMention);
      update.message.text = text;
      update.message.entities = [{ offset: text.indexOf('@'), length: 19, type: 'mention' }];
      return read(update);
    };
    expect(await mentioned('@nexo_assistant_bot shopping:\n\n- milk\n    - oat')).toMatchObject({
      content: { kind: 'text', text: 'shopping:\n\n- milk\n    - oat' },
    });
    expect(await mentioned('ask @nexo_assistant_bot  please, @Nexo_Assistant_Bot\nthanks')).toMatchObject({
      content: { kind: 'text', text: 'ask please,\nthanks' },
    });
  });

  it("keeps a group's /link@bot CODE, from the command menu, a link command with its code", async () => {
    const update = fixture(telegramGroupMention);
    update.message.text = '/link@nexo_assistant_bot ABC-123';
    update.message.entities = [{ offset: 0, length: 24, type: 'bot_command' }];
    expect((await read(update))?.content).toEqual({ kind: 'text', text: '/link ABC-123' });
  });

  it('stays silent in a group unless mentioned or replied to', async () => {
    const plain = fixture(telegramGroupMention);
    plain.message.text = 'lista meus hábitos';
    plain.message.entities = [];
    expect(await read(plain)).toBeUndefined();

    const otherBot = fixture(telegramGroupMention);
    otherBot.message.text = '@another_bot lista';
    otherBot.message.entities = [{ offset: 0, length: 12, type: 'mention' }];
    expect(await read(otherBot)).toBeUndefined();

    const reply = fixture(plain);
    Object.assign(reply.message, {
      reply_to_message: { message_id: 1, from: { id: 7, is_bot: true, first_name: 'Nexo', username: 'nexo_assistant_bot' } },
    });
    expect(await read(reply)).toMatchObject({ content: { kind: 'text', text: 'lista meus hábitos' } });
  });

  it('answers a group message that names the bot with a text_mention, and not one naming someone else', async () => {
    const named = (user: { id: number; first_name: string }) => {
      const update = fixture(telegramGroupMention);
      Object.assign(update.message, { text: 'Nexo, lista', entities: [{ offset: 0, length: 4, type: 'text_mention', user }] });
      return update;
    };
    expect(await read(named({ id: 7000000001, first_name: 'Nexo' }))).toMatchObject({ content: { kind: 'text', text: 'Nexo, lista' } });
    expect(await read(named({ id: 5550003, first_name: 'Ana' }))).toBeUndefined();
  });

  it('ignores a command for another bot in a group, even as a reply to this bot', async () => {
    const update = fixture(telegramGroupMention);
    Object.assign(update.message, {
      text: '/new@other_bot',
      entities: [{ offset: 0, length: 14, type: 'bot_command' }],
      reply_to_message: { message_id: 1, from: { id: 7, is_bot: true, first_name: 'Nexo', username: 'nexo_assistant_bot' } },
    });
    expect(await read(update)).toBeUndefined();
  });

  it("ignores a message sent on behalf of a chat, a channel's post forwarded into its discussion group", async () => {
    const update = fixture(telegramGroupMention);
    Object.assign(update.message, {
      from: { id: 777000, is_bot: false, first_name: 'Telegram' },
      sender_chat: { id: -1009876543210, type: 'channel', title: 'News' },
      is_automatic_forward: true,
    });
    expect(await read(update)).toBeUndefined();
  });

  it('addresses a message in a forum topic, or a press under one, to that topic; General and reply threads to the chat', async () => {
    const chat = { channel: 'telegram', chat_id: '-1001234567890' };
    expect((await read(inForumTopic(fixture(telegramGroupMention), 42)))?.replyTo).toEqual({ ...chat, message_thread_id: 42 });
    const press = fixture(telegramCallbackQuery);
    Object.assign(press.callback_query.message, {
      chat: { id: -1001234567890, type: 'supergroup' },
      message_thread_id: 42,
      is_topic_message: true,
    });
    expect((await read(press))?.replyTo).toEqual({ ...chat, message_thread_id: 42 });

    // Telegram refuses message_thread_id 1, the General topic's.
    expect((await read(inForumTopic(fixture(telegramGroupMention), 1)))?.replyTo).toEqual(chat);
    const replyThread = fixture(telegramGroupMention);
    Object.assign(replyThread.message, { message_thread_id: 77 });
    expect((await read(replyThread))?.replyTo).toEqual(chat);
  });

  it('reads a button press with its callback data', async () => {
    expect(await read(telegramCallbackQuery)).toMatchObject({
      botId: '7000000001',
      externalId: '918273647',
      sender: { id: '5550001' },
      replyTo: { chat_id: '5550001' },
      content: { kind: 'button', data: '<the callback_data of the pressed button>' },
    });
  });

  it('marks a photo unsupported and ignores an edit', async () => {
    expect(await read(telegramPhoto)).toMatchObject({ content: { kind: 'unsupported', what: 'photo' } });
    expect(await read(telegramEditedMessage)).toBeUndefined();
  });

  it('marks a forwarded story, a game or a checklist unsupported, and ignores a service message', async () => {
    const { text: _text, ...rest } = fixture(telegramPrivateText).message;
    const story = { update_id: 1, message: { ...rest, story: { chat: rest.chat, id: 7 } } };
    expect((await read(story))?.content).toEqual({ kind: 'unsupported', what: 'story' });
    const game = { update_id: 2, message: { ...rest, game: { title: 'Chess', description: 'play', photo: [] } } };
    expect((await read(game))?.content).toEqual({ kind: 'unsupported', what: 'game' });
    const checklist = { update_id: 3, message: { ...rest, checklist: { title: 'Groceries', tasks: [{ id: 1, text: 'milk' }] } } };
    expect((await read(checklist))?.content).toEqual({ kind: 'unsupported', what: 'checklist' });
    const pinned = { update_id: 4, message: { ...rest, pinned_message: { message_id: 1, chat: rest.chat, date: 1 } } };
    expect(await read(pinned)).toBeUndefined();
  });

  it('reads a photo with VISION on as its largest size within 5 MB and its caption', async () => {
    const update = fixture(telegramPhoto);
    update.message.photo.push({ file_id: 'huge', file_unique_id: 'h', file_size: 6_000_000, width: 4000, height: 3000 });
    const message = await telegramInbound(telegramUpdate.parse(update), bot, { vision: true });
    expect(message?.content).toEqual({
      kind: 'photo',
      media: { channel: 'telegram', file_id: 'AgACAgEAAxkBAAIBQ3' },
      caption: 'olha isso',
    });
  });

  it('reads a voice note or an audio file as voice', async () => {
    for (const key of ['voice', 'audio']) {
      const update = fixture(telegramPrivateText);
      const { text: _text, ...rest } = update.message;
      const body = { update_id: 1, message: { ...rest, [key]: { file_id: `f-${key}`, duration: 2 } } };
      expect((await read(body))?.content).toEqual({ kind: 'voice', media: { channel: 'telegram', file_id: `f-${key}` } });
    }
  });
});
