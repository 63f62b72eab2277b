import { randomUUID } from 'node:crypto';
import { Job, Queue, QueueEvents } from 'bullmq';
import type pg from 'pg';
import { splitText } from '@assistant/shared';
import { Api } from '../scripts/lib/api';
import {
  fixture,
  telegramCallbackQuery,
  telegramPhoto,
  whatsappButtonReply,
  whatsappStatus,
  whatsappText,
} from './helpers/channel-fixtures';
import { ChannelWebhooks } from './helpers/channel-webhooks';
import { testDb } from './helpers/db';
import { FakeGraph } from './helpers/fake-graph';
import { afterTools, FakeModel, userText } from '../scripts/lib/fake-model';
import { FakeTelegram } from './helpers/fake-telegram';
import { TestSystem } from '../scripts/lib/system';
import { inForumTopic, telegramGroupText, telegramGroupUpgrade } from './helpers/telegram-updates';

/**
 * Telegram and WhatsApp through the real processes (docs/channels.md), against local fake Bot API
 * and Graph API servers that record what they receive, and the fake model.
 */
const model = new FakeModel();
const telegram = new FakeTelegram();
const graph = new FakeGraph();
const system = new TestSystem();
let db: pg.Pool;
let api: Api;

const TG_SECRET = 'tg-webhook_secret-1';
const WA_APP_SECRET = 'wa-app-secret';
const WA_VERIFY = 'wa-verify-token';
const PHONE_ID = whatsappText.entry[0]?.changes[0]?.value.metadata.phone_number_id as string;
const UNSUPPORTED = 'I can only read text messages';
const LONG = Array.from({ length: 1_700 }, (_, i) => `word${String(i).padStart(4, '0')}`)
  .join(' ')
  .slice(0, 10_000);

beforeAll(async () => {
  await Promise.all([model.start(), telegram.start(), graph.start()]);
  model.script = (body) => {
    const text = userText(body);
    const folder = /^make folder (.+)$/.exec(text)?.[1];
    if (folder)
      return afterTools(body) ? { content: `Created ${folder}.` } : { toolCalls: [{ name: 'create_folder', arguments: { name: folder } }] };
    const pair = /^make folders (.+) and (.+)$/.exec(text);
    if (pair)
      return afterTools(body)
        ? { content: 'Done as you said.' }
        : { toolCalls: pair.slice(1).map((name) => ({ name: 'create_folder', arguments: { name } })) };
    if (text === 'long answer') return { content: LONG, chunkSize: 500 };
    // Answered well within the typing ticker's 500 ms beat.
    if (text.startsWith('brief')) return { content: `echo: ${text}`, delayMs: 150 };
    return { content: `echo: ${text}` };
  };
  db = testDb();
  await system.start({
    env: {
      OPENAI_BASE_URL: model.url,
      TELEGRAM_BOT_TOKEN: '123456:test-token',
      TELEGRAM_WEBHOOK_SECRET: TG_SECRET,
      TELEGRAM_API_BASE_URL: telegram.url,
      ...graph.settings(WA_APP_SECRET, WA_VERIFY),
    },
  });
  api = new Api(system.url);
});

afterAll(async () => {
  if (process.env.DEBUG_LOGS) process.stdout.write(system.logs.join(''));
  await system.stop();
  await Promise.all([model.stop(), telegram.stop(), graph.stop()]);
  await db.end();
});

// Unique ids per test: nothing one test sends can be mistaken for another's.
const webhooks = new ChannelWebhooks(() => system.url, TG_SECRET, WA_APP_SECRET);
const nextId = () => webhooks.nextId();
const tgText = (from: number, text: string, updateId?: number) => webhooks.tgText(from, text, updateId);
const postTelegram = (update: unknown, secret?: string | null) => webhooks.postTelegram(update, secret);
const waText = (from: string, text: string, id?: string) => webhooks.waText(from, text, id);
const sign = (raw: string, secret?: string) => webhooks.sign(raw, secret);
const postWhatsApp = (raw: string, signature?: string | null) => webhooks.postWhatsApp(raw, signature);
/** A press of the inline button carrying `data` by `chat`, as Telegram delivers it; its id is `cb-<update_id>`. */
function tgButtonPress(chat: number, data: string | undefined) {
  const press = fixture(telegramCallbackQuery);
  press.update_id = nextId();
  Object.assign(press.callback_query, {
    id: `cb-${press.update_id}`,
    from: { ...press.callback_query.from, id: chat },
    message: { ...press.callback_query.message, chat: { ...press.callback_query.message.chat, id: chat } },
    data,
  });
  return press;
}
/** A press of the reply button `replyId` by `from`, as WhatsApp delivers it. */
function waButtonPress(from: string, replyId: string, id = `wamid.${randomUUID()}`): string {
  const payload = fixture(whatsappButtonReply);
  const value = payload.entry[0]?.changes[0]?.value;
  const [contact, message] = [value?.contacts[0], value?.messages[0]];
  if (!contact || !message) throw new Error('the button reply fixture has no message');
  Object.assign(contact, { wa_id: from });
  Object.assign(message, { from, id });
  message.interactive.button_reply.id = replyId;
  return JSON.stringify(payload);
}

const count = async (sql: string, params: unknown[]) => (await db.query<{ n: number }>(sql, params)).rows[0]?.n ?? 0;
const channelMessages = (channel: string, externalId: string) =>
  count('SELECT COUNT(*)::int AS n FROM channel_messages WHERE channel = $1 AND external_id = $2', [channel, externalId]);
const identityUserId = async (channel: string, externalId: string) =>
  (
    await db.query<{ user_id: string }>('SELECT user_id FROM channel_identities WHERE channel = $1 AND external_id = $2', [
      channel,
      externalId,
    ])
  ).rows[0]?.user_id;
const turnsOf = async (channel: string, externalId: string) =>
  (
    await db.query<{ id: string; user_id: string; session_id: string; session_key: string; status: string }>(
      `SELECT t.id, t.user_id, t.session_id, t.session_key, t.status FROM turns t
       JOIN channel_messages m ON m.turn_id = t.id JOIN channel_identities i ON i.user_id = t.user_id
       WHERE i.channel = $1 AND i.external_id = $2 AND m.channel = $1 ORDER BY t.created_at`,
      [channel, externalId],
    )
  ).rows;
const texts = (calls: { body: any }[]) => calls.map((call) => call.body.text);
/** A Telegram chat and a WhatsApp number of their own, both linked to `user` with `/link`, each confirmed. */
async function linkTelegramAndWhatsApp(user: Api): Promise<{ chat: number; waId: string }> {
  const chat = nextId();
  const waId = `55119${nextId()}`;
  expect((await postTelegram(tgText(chat, `/link ${(await user.post('/v1/link-codes')).body.code}`))).status).toBe(200);
  await system.waitFor(() => telegram.received(chat).length === 1, 'the Telegram confirmation');
  expect((await postWhatsApp(waText(waId, `/link ${(await user.post('/v1/link-codes')).body.code}`))).status).toBe(200);
  await system.waitFor(() => graph.received(waId).length === 1, 'the WhatsApp confirmation');
  return { chat, waId };
}

describe('Telegram', () => {
  it('turns an update with the right secret into one answer; a redelivery adds nothing', async () => {
    const chat = nextId();
    const update = tgText(chat, 'hello');
    expect((await postTelegram(update)).status).toBe(200);
    await system.waitFor(() => telegram.received(chat).length === 1, 'the answer');
    expect(texts(telegram.received(chat))).toEqual(['echo: hello']);
    expect(telegram.received(chat)[0]?.token).toBe('123456:test-token');

    expect((await postTelegram(update)).status).toBe(200);
    expect(await channelMessages('telegram', String(update.update_id))).toBe(1);
    expect(await turnsOf('telegram', String(chat))).toHaveLength(1);
    // A later message's answer is the barrier: anything the redelivery caused would be queued before it.
    expect((await postTelegram(tgText(chat, 'again'))).status).toBe(200);
    await system.waitFor(() => telegram.received(chat).length === 2, 'the second answer');
    expect(texts(telegram.received(chat))).toEqual(['echo: hello', 'echo: again']);
    expect(telegram.sendAttempts(chat)).toHaveLength(2);
  });

  it('shows typing as a turn starts, before an answer that comes within a beat of the ticker', async () => {
    for (let n = 0; n < 3; n++) {
      const chat = nextId();
      expect((await postTelegram(tgText(chat, `brief ${n}`))).status).toBe(200);
      const answer = await system.waitFor(() => telegram.received(chat)[0], 'the answer');
      const typing = telegram.callsTo('sendChatAction', chat);
      expect(typing.length).toBeGreaterThanOrEqual(1);
      expect(typing.every((call) => call.body.action === 'typing' && call.at <= answer.at)).toBe(true);
    }
  });

  it('reads a minimal update as JSON whatever its content type; refuses one that is not an update with 400', async () => {
    const chat = nextId();
    const post = (body: string, type?: string) =>
      fetch(`${system.url}/webhooks/telegram`, {
        method: 'POST',
        headers: { 'x-telegram-bot-api-secret-token': TG_SECRET, ...(type ? { 'content-type': type } : {}) },
        body,
      });
    const minimal = { update_id: nextId(), message: { from: { id: chat }, chat: { id: chat, type: 'private' }, text: 'bare' } };
    expect((await post(JSON.stringify(minimal), 'text/plain')).status).toBe(200);
    await system.waitFor(() => telegram.received(chat).length === 1, 'the answer');
    expect(texts(telegram.received(chat))).toEqual(['echo: bare']);

    const notJson = await post('{"update_id": 1,', 'text/plain');
    expect(notJson.status).toBe(400);
    expect(await notJson.json()).toMatchObject({ error: { code: 'invalid_json' } });
    const noUpdateId = await post(JSON.stringify({ message: minimal.message }));
    expect(noUpdateId.status).toBe(400);
    expect(await noUpdateId.json()).toMatchObject({ error: { code: 'validation_failed' } });
  });

  it('answers 401 to a wrong or missing secret and creates nothing', async () => {
    const chat = nextId();
    for (const secret of ['wrong-secret', null, '']) {
      const update = tgText(chat, 'sneaky');
      const res = await postTelegram(update, secret);
      expect(res.status).toBe(401);
      expect(await res.text()).not.toContain(TG_SECRET);
      expect(await channelMessages('telegram', String(update.update_id))).toBe(0);
    }
    expect(await identityUserId('telegram', String(chat))).toBeUndefined();
  });

  it('honours retry_after on 429: the answer arrives once, after the delay', async () => {
    const chat = nextId();
    telegram.throttle(chat, 1);
    expect((await postTelegram(tgText(chat, 'slow down'))).status).toBe(200);
    await system.waitFor(() => telegram.received(chat).length === 1, 'the answer after the 429');
    const [refused, sent] = telegram.sendAttempts(chat);
    expect(refused?.status).toBe(429);
    expect(sent?.body.text).toBe('echo: slow down');
    expect((sent?.at ?? 0) - (refused?.at ?? 0)).toBeGreaterThanOrEqual(950);
    expect((await postTelegram(tgText(chat, 'after'))).status).toBe(200);
    await system.waitFor(() => telegram.received(chat).length === 2, 'the barrier answer');
    expect(texts(telegram.received(chat))).toEqual(['echo: slow down', 'echo: after']);
  });

  it("keeps a chat's answers in order: a later answer waits behind one that waits out a 429", async () => {
    const chat = nextId();
    telegram.throttle(chat, 2);
    expect((await postTelegram(tgText(chat, 'first'))).status).toBe(200);
    await system.waitFor(() => telegram.sendAttempts(chat).length === 1, 'the refused first answer');
    expect((await postTelegram(tgText(chat, 'second'))).status).toBe(200);
    await system.waitFor(() => telegram.received(chat).length === 2, 'both answers');
    expect(texts(telegram.received(chat))).toEqual(['echo: first', 'echo: second']);
    expect(telegram.sendAttempts(chat)).toHaveLength(3);
  });

  it('sends a 10,000-character answer as several parts under 4,096, in order', async () => {
    const chat = nextId();
    expect((await postTelegram(tgText(chat, 'long answer'))).status).toBe(200);
    const expected = splitText(LONG, 4_000).length;
    expect(expected).toBeGreaterThan(2);
    await system.waitFor(() => telegram.received(chat).length === expected, 'every part');
    const parts = texts(telegram.received(chat)) as string[];
    for (const part of parts) expect(part.length).toBeLessThan(4_096);
    expect(parts.join(' ')).toBe(LONG);
  });

  it('asks for approval with buttons in manual mode; pressing approve completes the turn and delivers the result', async () => {
    const chat = nextId();
    expect((await postTelegram(tgText(chat, 'make folder Projects'))).status).toBe(200);
    const question = await system.waitFor(() => telegram.received(chat)[0], 'the approval request');
    const buttons = question.body.reply_markup.inline_keyboard[0] as { text: string; callback_data: string }[];
    expect(buttons).toHaveLength(2);
    for (const button of buttons) expect(Buffer.byteLength(button.callback_data)).toBeLessThanOrEqual(64);
    const userId = await identityUserId('telegram', String(chat));
    expect(await count('SELECT COUNT(*)::int AS n FROM folders WHERE user_id = $1', [userId])).toBe(0);

    const press = tgButtonPress(chat, buttons[0]?.callback_data);
    expect((await postTelegram(press)).status).toBe(200);
    const answers = () =>
      telegram.calls.filter((call) => call.method === 'answerCallbackQuery' && call.body.callback_query_id === `cb-${press.update_id}`);
    expect(answers().map((call) => call.body.text)).toEqual(['Approved']);

    await system.waitFor(() => telegram.received(chat).length === 2, 'the result');
    expect(telegram.received(chat)[1]?.body.text).toBe('Created Projects.');
    expect(await count(`SELECT COUNT(*)::int AS n FROM folders WHERE user_id = $1 AND name = 'Projects'`, [userId])).toBe(1);
    expect((await turnsOf('telegram', String(chat)))[0]?.status).toBe('completed');

    // Redelivered: the webhook answers only after any Bot API call it makes, so none can come later.
    expect((await postTelegram(press)).status).toBe(200);
    expect(answers()).toHaveLength(1);
    expect(telegram.received(chat)).toHaveLength(2);

    // A stranger pressing it (the message forwarded to them) decides nothing and becomes no user.
    const stranger = nextId();
    const theirs = fixture(press);
    theirs.update_id = nextId();
    Object.assign(theirs.callback_query, { id: `cb-${theirs.update_id}`, from: { ...press.callback_query.from, id: stranger } });
    expect((await postTelegram(theirs)).status).toBe(200);
    const toast = telegram.calls.find(
      (call) => call.method === 'answerCallbackQuery' && call.body.callback_query_id === `cb-${theirs.update_id}`,
    );
    expect(toast?.body.text).toBe('This button is no longer valid.');
    expect(await identityUserId('telegram', String(stranger))).toBeUndefined();
  });

  it("answers a disabled account's button press with the disabled reply alone, and no toast", async () => {
    const chat = nextId();
    expect((await postTelegram(tgText(chat, 'make folder Lagos'))).status).toBe(200);
    const question = await system.waitFor(() => telegram.received(chat)[0], 'the approval request');
    const [approve] = question.body.reply_markup.inline_keyboard[0] as { callback_data: string }[];
    const admin = new Api(system.url, system.adminToken);
    expect((await admin.patch(`/v1/admin/users/${await identityUserId('telegram', String(chat))}`, { disabled: true })).status).toBe(200);

    const press = tgButtonPress(chat, approve?.callback_data);
    expect((await postTelegram(press)).status).toBe(200);
    const [answer] = telegram.calls.filter(
      (call) => call.method === 'answerCallbackQuery' && call.body.callback_query_id === press.callback_query.id,
    );
    expect(answer?.body.text).toBeUndefined();
    await system.waitFor(() => telegram.received(chat).length === 2, 'the disabled reply');
    expect(telegram.received(chat)[1]?.body.text).toContain('disabled');
  });

  it('replies "not supported" to a photo and creates no turn', async () => {
    const chat = nextId();
    const photo = fixture(telegramPhoto);
    photo.update_id = nextId();
    Object.assign(photo.message, { from: { ...photo.message.from, id: chat }, chat: { ...photo.message.chat, id: chat } });
    expect((await postTelegram(photo)).status).toBe(200);
    await system.waitFor(() => telegram.received(chat).length === 1, 'the reply');
    expect(telegram.received(chat)[0]?.body.text).toContain(UNSUPPORTED);
    expect(await count('SELECT COUNT(*)::int AS n FROM turns WHERE user_id = $1', [await identityUserId('telegram', String(chat))])).toBe(
      0,
    );
  });

  it('answers in a group only when mentioned', async () => {
    const group = -nextId();
    const member = nextId();
    const message = (text: string, mention: boolean) =>
      telegramGroupText(group, member, text, nextId(), mention ? `@${telegram.bot.username}` : undefined);
    const quiet = message('just chatting', false);
    expect((await postTelegram(quiet)).status).toBe(200);
    expect((await postTelegram(message('hello group', true))).status).toBe(200);
    await system.waitFor(() => telegram.received(group).length === 1, 'the group answer');
    expect(texts(telegram.received(group))).toEqual(['echo: hello group']);
    expect((await turnsOf('telegram', String(member)))[0]?.session_key).toBe(`agent:main:telegram:group:${group}`);
    expect(await channelMessages('telegram', String(quiet.update_id))).toBe(0);
    // TELEGRAM_BOT_USERNAME is unset here: the gateway asked getMe once and kept the answer.
    expect(telegram.calls.filter((call) => call.method === 'getMe')).toHaveLength(1);
  });

  it('answers in the forum topic it was asked in: typing, the answer, an approval and its result, a short reply', async () => {
    const group = -nextId();
    const member = nextId();
    const mention = `@${telegram.bot.username}`;
    const inTopic = (text: string, topic: number) => inForumTopic(telegramGroupText(group, member, text, nextId(), mention), topic);

    expect((await postTelegram(inTopic('brief in a topic', 11))).status).toBe(200);
    const answer = await system.waitFor(() => telegram.received(group)[0], 'the answer');
    expect(answer.body).toMatchObject({ text: 'echo: brief in a topic', message_thread_id: 11 });
    const typing = telegram.callsTo('sendChatAction', group);
    expect(typing.length).toBeGreaterThan(0);
    expect(typing.every((call) => call.body.message_thread_id === 11)).toBe(true);

    expect((await postTelegram(inTopic('make folder Topical', 12))).status).toBe(200);
    const question = await system.waitFor(() => telegram.received(group)[1], 'the approval request');
    expect(question.body.message_thread_id).toBe(12);
    const [approve] = question.body.reply_markup.inline_keyboard[0] as { callback_data: string }[];
    const press = tgButtonPress(group, approve?.callback_data);
    press.callback_query.from.id = member;
    expect((await postTelegram(press)).status).toBe(200);
    const result = await system.waitFor(() => telegram.received(group)[2], 'the result');
    expect(result.body).toMatchObject({ text: 'Created Topical.', message_thread_id: 12 });

    const photo = fixture(telegramPhoto);
    photo.update_id = nextId();
    Object.assign(photo.message, {
      from: { ...photo.message.from, id: member },
      chat: { id: group, title: 'Topics', type: 'supergroup' },
      caption: `${mention} look`,
      caption_entities: [{ offset: 0, length: mention.length, type: 'mention' }],
    });
    expect((await postTelegram(inForumTopic(photo, 13))).status).toBe(200);
    const reply = await system.waitFor(() => telegram.received(group)[3], 'the short reply');
    expect(reply.body.text).toContain(UNSUPPORTED);
    expect(reply.body.message_thread_id).toBe(13);
    // One session for the whole group, whichever topic a message came from.
    const sessions = new Set((await turnsOf('telegram', String(member))).map((turn) => turn.session_key));
    expect([...sessions]).toEqual([`agent:main:telegram:group:${group}`]);
  });

  it('answers in the chat itself when its topic is gone (deleted or closed), once', async () => {
    const group = -nextId();
    const member = nextId();
    const mention = `@${telegram.bot.username}`;
    telegram.failSend(group, 400, { ok: false, error_code: 400, description: 'Bad Request: message thread not found' });
    const update = inForumTopic(telegramGroupText(group, member, 'brief in a deleted topic', nextId(), mention), 21);
    expect((await postTelegram(update)).status).toBe(200);
    const answer = await system.waitFor(() => telegram.received(group)[0], 'the answer');
    expect(answer.body.text).toBe('echo: brief in a deleted topic');
    expect('message_thread_id' in answer.body).toBe(false);
    expect(telegram.sendAttempts(group).map((call) => [call.status, call.body.message_thread_id])).toEqual([
      [400, 21],
      [200, undefined],
    ]);
  });

  it("sends no topic to a forum's General topic, nor for a reply thread of a group without topics", async () => {
    const member = nextId();
    const mention = `@${telegram.bot.username}`;
    const general = telegramGroupText(-nextId(), member, 'brief in General', nextId(), mention);
    Object.assign(general.message.chat, { is_forum: true });
    // The General topic's id is 1, and Telegram refuses message_thread_id 1 ("message thread not found").
    const generalOne = inForumTopic(telegramGroupText(-nextId(), member, 'brief in General as 1', nextId(), mention), 1);
    // Outside forums a reply carries the id of the thread it belongs to, which is no topic.
    const replyThread = telegramGroupText(-nextId(), member, 'brief in a reply thread', nextId(), mention);
    Object.assign(replyThread.message, { message_thread_id: 777 });

    for (const update of [general, generalOne, replyThread]) {
      const chat = update.message.chat.id;
      expect((await postTelegram(update)).status).toBe(200);
      const answer = await system.waitFor(() => telegram.received(chat)[0], 'the answer');
      expect(answer.body.text).toBe(`echo: ${update.message.text.slice(mention.length + 1)}`);
      const sent = [answer, ...telegram.callsTo('sendChatAction', chat)];
      expect(sent.filter((call) => 'message_thread_id' in call.body)).toEqual([]);
    }
  });

  it('sends answers Telegram refuses for a group upgraded to a supergroup to the supergroup, each once', async () => {
    const group = -nextId();
    const supergroup = -(1_000_000_000_000 + nextId());
    const member = nextId();
    // Asked in the group, answered once Telegram has moved it: the answers, and the typing, were queued for the old id.
    telegram.upgradeGroup(group, supergroup);
    for (const [n, text] of ['brief before the upgrade', 'and another'].entries()) {
      expect((await postTelegram(telegramGroupText(group, member, text, nextId(), `@${telegram.bot.username}`))).status).toBe(200);
      await system.waitFor(() => telegram.received(supergroup).length === n + 1, 'the answer in the supergroup');
    }
    expect(texts(telegram.received(supergroup))).toEqual(['echo: brief before the upgrade', 'echo: and another']);
    expect(telegram.sendAttempts(supergroup)).toHaveLength(2);
    expect(telegram.sendAttempts(group).map((call) => call.status)).toEqual([400, 400]);
    expect(telegram.callsTo('sendChatAction', supergroup).length).toBeGreaterThan(0);
    // Each recorded once, under the address it was queued for.
    const recorded = () =>
      count(`SELECT COUNT(*)::int AS n FROM deliveries WHERE channel = 'telegram' AND recipient = $1`, [String(group)]);
    await system.waitFor(async () => (await recorded()) === 2, 'the deliveries recorded');
  });

  it("continues a group's sessions in the supergroup it was upgraded to; the upgrade's service messages get no answer", async () => {
    const group = -nextId();
    const supergroup = -(1_000_000_000_000 + nextId());
    const member = nextId();
    const mention = `@${telegram.bot.username}`;
    expect((await postTelegram(telegramGroupText(group, member, 'the door is blue', nextId(), mention))).status).toBe(200);
    await system.waitFor(() => telegram.received(group).length === 1, 'the answer in the group');

    telegram.upgradeGroup(group, supergroup);
    const movedTo = telegramGroupUpgrade(group, member, { migrate_to_chat_id: supergroup }, nextId());
    const movedFrom = telegramGroupUpgrade(supergroup, member, { migrate_from_chat_id: group }, nextId());
    for (const update of [movedTo, movedFrom, movedTo]) expect((await postTelegram(update)).status).toBe(200);
    expect((await postTelegram(telegramGroupText(supergroup, member, 'which door?', nextId(), mention))).status).toBe(200);
    await system.waitFor(() => telegram.received(supergroup).length === 1, 'the answer in the supergroup');

    expect(texts(telegram.received(supergroup))).toEqual(['echo: which door?']);
    expect(telegram.sendAttempts(group)).toHaveLength(1);
    const turns = await turnsOf('telegram', String(member));
    expect(turns.map((turn) => turn.session_key)).toEqual([`agent:main:telegram:group:${group}`, `agent:main:telegram:group:${group}`]);
    expect(turns[1]?.session_id).toBe(turns[0]?.session_id);
    const asked = model.requests.find((request) => userText(request.body) === 'which door?');
    expect(JSON.stringify(asked?.body.messages)).toContain('the door is blue');
    expect(await count('SELECT COUNT(*)::int AS n FROM telegram_group_upgrades WHERE supergroup_id = $1', [String(supergroup)])).toBe(1);
  });
});

describe('WhatsApp', () => {
  it('answers the verification challenge only with the right token', async () => {
    const query = (token: string) => `hub.mode=subscribe&hub.verify_token=${encodeURIComponent(token)}&hub.challenge=1158201444`;
    const ok = await fetch(`${system.url}/webhooks/whatsapp?${query(WA_VERIFY)}`);
    expect(ok.status).toBe(200);
    expect(await ok.text()).toBe('1158201444');
    expect((await fetch(`${system.url}/webhooks/whatsapp?${query('wrong')}`)).status).toBe(403);
  });

  it('answers a signed message once; a redelivered message id adds nothing', async () => {
    const waId = `55119${nextId()}`;
    const raw = waText(waId, 'olá');
    expect((await postWhatsApp(raw)).status).toBe(200);
    await system.waitFor(() => graph.received(waId).length === 1, 'the reply');
    const [reply] = graph.received(waId);
    expect(reply?.path).toBe(`/${PHONE_ID}/messages`);
    expect(reply?.authorization).toBe(`Bearer ${graph.token}`);
    expect(reply?.body).toMatchObject({ messaging_product: 'whatsapp', to: waId, type: 'text', text: { body: 'echo: olá' } });

    expect((await postWhatsApp(raw)).status).toBe(200);
    expect(await turnsOf('whatsapp', waId)).toHaveLength(1);
    expect((await postWhatsApp(waText(waId, 'de novo'))).status).toBe(200);
    await system.waitFor(() => graph.received(waId).length === 2, 'the barrier reply');
    expect(graph.received(waId).map((r) => r.body.text.body)).toEqual(['echo: olá', 'echo: de novo']);
  });

  it('marks each message read with the typing indicator as its turn starts, before an answer that comes within a beat', async () => {
    const sent = Array.from({ length: 3 }, (_, n) => ({ waId: `55119${nextId()}`, id: `wamid.${randomUUID()}`, text: `brief ${n}` }));
    for (const { waId, id, text } of sent) {
      expect((await postWhatsApp(waText(waId, text, id))).status).toBe(200);
      const reply = await system.waitFor(() => graph.received(waId)[0], 'the reply');
      const receipts = graph.readReceipts().filter((request) => request.body.message_id === id);
      expect(receipts).toHaveLength(1);
      expect(receipts[0]?.body.typing_indicator).toEqual({ type: 'text' });
      expect(receipts[0]?.at).toBeLessThanOrEqual(reply.at);
    }
  });

  it('marks a message read even when its answer came first, without an indicator after the answer', async () => {
    // The fake model answers at once: a turn may end before the ticker has read it as running.
    const sent = Array.from({ length: 4 }, () => ({ waId: `55119${nextId()}`, id: `wamid.${randomUUID()}` }));
    for (const { waId, id } of sent) {
      expect((await postWhatsApp(waText(waId, 'quick', id))).status).toBe(200);
      await system.waitFor(() => graph.received(waId).length === 1, 'the reply');
    }
    for (const { waId, id } of sent) {
      const receipt = await system.waitFor(
        () => graph.readReceipts().find((request) => request.body.message_id === id),
        'the read receipt',
      );
      expect(receipt.path).toBe(`/${PHONE_ID}/messages`);
      if (receipt.at > (graph.received(waId)[0]?.at ?? 0)) expect(receipt.body.typing_indicator).toBeUndefined();
    }
  });

  it('answers 401 to unsigned, wrongly signed and altered bodies, and creates nothing', async () => {
    const waId = `55119${nextId()}`;
    const id = `wamid.${randomUUID()}`;
    const raw = waText(waId, 'transfer everything', id);
    const altered = raw.replace('transfer everything', 'transfer everything now');
    for (const [body, signature] of [
      [raw, null],
      [raw, sign(raw, 'not-the-app-secret')],
      [raw, 'sha256=deadbeef'],
      [altered, sign(raw)],
    ] as const) {
      const res = await postWhatsApp(body, signature);
      expect(res.status).toBe(401);
      expect(await res.text()).not.toContain(sign(body).slice(7));
    }
    expect(await channelMessages('whatsapp', id)).toBe(0);
    expect(await identityUserId('whatsapp', waId)).toBeUndefined();
  });

  it('answers each message of a batch in which a username user came without a phone number, at their number or BSUID', async () => {
    const waId = `55119${nextId()}`;
    const bsuid = `BR.${nextId()}`;
    const payload = JSON.parse(waText(waId, 'still there?'));
    const value = payload.entry[0].changes[0].value;
    // Since WhatsApp usernames a user may hide their number: only their business-scoped user id comes.
    value.contacts.push({ profile: { name: 'Uma', username: 'uma.x' }, user_id: bsuid });
    const hidden = `wamid.${randomUUID()}`;
    value.messages.push({ from_user_id: bsuid, id: hidden, timestamp: '1763800301', type: 'text', text: { body: 'oi' } });
    expect((await postWhatsApp(JSON.stringify(payload))).status).toBe(200);
    await system.waitFor(() => graph.received(waId).length === 1 && graph.received(bsuid).length === 1, 'both answers');
    expect(graph.received(waId).map((request) => request.body.text?.body)).toEqual(['echo: still there?']);
    expect(graph.received(bsuid).map((request) => request.body)).toEqual([
      expect.objectContaining({ recipient: bsuid, text: { body: 'echo: oi' } }),
    ]);
    expect(await channelMessages('whatsapp', hidden)).toBe(1);
  });

  it('accepts and ignores status callbacks', async () => {
    const before = graph.requests.length;
    const raw = JSON.stringify(fixture(whatsappStatus));
    expect((await postWhatsApp(raw)).status).toBe(200);
    const statusId = whatsappStatus.entry[0]?.changes[0]?.value.statuses[0]?.id as string;
    expect(await channelMessages('whatsapp', statusId)).toBe(0);
    expect(graph.requests.length).toBe(before);
  });

  it('asks for approval with reply buttons; a plain "sim" approves', async () => {
    const waId = `55119${nextId()}`;
    expect((await postWhatsApp(waText(waId, 'make folder Casa'))).status).toBe(200);
    const question = await system.waitFor(() => graph.received(waId)[0], 'the approval request');
    expect(question.body.type).toBe('interactive');
    const buttons = question.body.interactive.action.buttons as { reply: { id: string; title: string } }[];
    expect(buttons).toHaveLength(2);
    for (const button of buttons) expect([...button.reply.title].length).toBeLessThanOrEqual(20);

    expect((await postWhatsApp(waText(waId, 'Sim'))).status).toBe(200);
    await system.waitFor(() => graph.received(waId).length === 2, 'the result');
    expect(graph.received(waId)[1]?.body.text.body).toBe('Created Casa.');
    expect(await turnsOf('whatsapp', waId)).toHaveLength(1);
  });

  it('answers several approvals of one turn with plain words, one each, in the order they were asked', async () => {
    const waId = `55119${nextId()}`;
    expect((await postWhatsApp(waText(waId, 'make folders Sala and Quarto'))).status).toBe(200);
    await system.waitFor(() => graph.received(waId).length === 2, 'both approval requests');
    expect(graph.received(waId).map((call) => call.body.interactive.body.text)).toEqual([
      'May I do this?\nCreate folder "Sala"',
      'May I do this?\nCreate folder "Quarto"',
    ]);

    expect((await postWhatsApp(waText(waId, 'Sim!'))).status).toBe(200);
    const userId = await identityUserId('whatsapp', waId);
    const decided = (status: string) =>
      count(`SELECT COUNT(*)::int AS n FROM approvals WHERE user_id = $1 AND status = $2`, [userId, status]);
    await system.waitFor(async () => (await decided('approved')) === 1, 'the first approval decided');
    expect((await postWhatsApp(waText(waId, 'NÃO.'))).status).toBe(200);
    await system.waitFor(() => graph.received(waId).length === 3, 'the answer');
    expect(graph.received(waId)[2]?.body.text.body).toBe('Done as you said.');
    expect(await decided('rejected')).toBe(1);
    const folders = await db.query('SELECT name FROM folders WHERE user_id = $1 ORDER BY name', [userId]);
    expect(folders.rows).toEqual([{ name: 'Sala' }]);
    expect(await turnsOf('whatsapp', waId)).toHaveLength(1);
  });

  it('answers a button pressed too late in words, once: WhatsApp shows no toast', async () => {
    const waId = `55119${nextId()}`;
    expect((await postWhatsApp(waText(waId, 'make folder Porto'))).status).toBe(200);
    const question = await system.waitFor(() => graph.received(waId)[0], 'the approval request');
    const [approve] = question.body.interactive.action.buttons as { reply: { id: string } }[];
    expect((await postWhatsApp(waText(waId, 'sim'))).status).toBe(200);
    await system.waitFor(() => graph.received(waId).length === 2, 'the result');

    const press = waButtonPress(waId, approve?.reply.id as string);
    expect((await postWhatsApp(press)).status).toBe(200);
    await system.waitFor(() => graph.received(waId).length === 3, 'the answer to the late press');
    expect((await postWhatsApp(press)).status).toBe(200);
    expect((await postWhatsApp(waText(waId, 'barrier'))).status).toBe(200);
    await system.waitFor(() => graph.received(waId).length === 4, 'the barrier reply');
    expect(graph.received(waId).map((r) => r.body.text?.body)).toEqual([
      undefined,
      'Created Porto.',
      'Already answered or expired.',
      'echo: barrier',
    ]);
  });

  it("answers a disabled account's button press with the disabled reply alone", async () => {
    const waId = `55119${nextId()}`;
    expect((await postWhatsApp(waText(waId, 'make folder Faro'))).status).toBe(200);
    const question = await system.waitFor(() => graph.received(waId)[0], 'the approval request');
    const [approve] = question.body.interactive.action.buttons as { reply: { id: string } }[];
    const [turn] = await turnsOf('whatsapp', waId);
    const admin = new Api(system.url, system.adminToken);
    expect((await admin.patch(`/v1/admin/users/${turn?.user_id}`, { disabled: true })).status).toBe(200);

    expect((await postWhatsApp(waButtonPress(waId, approve?.reply.id as string))).status).toBe(200);
    expect((await postWhatsApp(waText(waId, 'barrier'))).status).toBe(200);
    await system.waitFor(() => graph.received(waId).length === 3, 'both replies');
    const [pressReply, barrierReply] = graph
      .received(waId)
      .slice(1)
      .map((r) => r.body.text?.body as string);
    expect(pressReply).toContain('disabled');
    expect(barrierReply).toBe(pressReply);
  });

  it('replies "not supported" to an image and creates no turn', async () => {
    const waId = `55119${nextId()}`;
    const payload = JSON.parse(waText(waId, 'x'));
    Object.assign(payload.entry[0].changes[0].value.messages[0], {
      type: 'image',
      text: undefined,
      image: { id: '1548871829348871', mime_type: 'image/jpeg' },
    });
    expect((await postWhatsApp(JSON.stringify(payload))).status).toBe(200);
    await system.waitFor(() => graph.received(waId).length === 1, 'the reply');
    expect(graph.received(waId)[0]?.body.text.body).toContain(UNSUPPORTED);
    expect(await turnsOf('whatsapp', waId)).toHaveLength(0);
  });

  it('answers a message sent to another phone number of the app, from WHATSAPP_PHONE_NUMBER_ID', async () => {
    const waId = `55119${nextId()}`;
    const raw = waText(waId, 'other number').replace(`"phone_number_id":"${PHONE_ID}"`, '"phone_number_id":"999000999000"');
    expect(raw).toContain('999000999000');
    expect((await postWhatsApp(raw)).status).toBe(200);
    await system.waitFor(() => graph.received(waId).length === 1, 'the reply');
    expect(graph.received(waId)[0]).toMatchObject({ path: `/${PHONE_ID}/messages`, body: { text: { body: 'echo: other number' } } });
  });
});

describe('identities', () => {
  it('links Telegram and WhatsApp to one user with /link; both reach the same main session', async () => {
    const user = await api.createUser(system.adminToken, { name: 'Linked' });
    const [first, second] = [await user.post('/v1/link-codes'), await user.post('/v1/link-codes')];
    expect(first.status).toBe(201);
    expect(first.body.code).toMatch(/^[A-Z2-9]{8}$/);
    expect(Date.parse(first.body.expires_at)).toBeGreaterThan(Date.now());
    const chat = nextId();
    const waId = `55119${nextId()}`;

    expect((await postTelegram(tgText(chat, `/link ${first.body.code}`))).status).toBe(200);
    expect((await postWhatsApp(waText(waId, `/link ${second.body.code.toLowerCase()}`))).status).toBe(200);
    await system.waitFor(() => telegram.received(chat).length === 1 && graph.received(waId).length === 1, 'the confirmations');
    expect(telegram.received(chat)[0]?.body.text).toContain('Linked');
    expect(await identityUserId('telegram', String(chat))).toBe(user.userId);
    expect(await identityUserId('whatsapp', waId)).toBe(user.userId);

    expect((await postTelegram(tgText(chat, 'from telegram'))).status).toBe(200);
    await system.waitFor(() => telegram.received(chat).length === 2, 'the Telegram answer');
    expect((await postWhatsApp(waText(waId, 'from whatsapp'))).status).toBe(200);
    await system.waitFor(() => graph.received(waId).length === 2, 'the WhatsApp answer');
    const turns = [...(await turnsOf('telegram', String(chat))), ...(await turnsOf('whatsapp', waId))];
    expect(new Set(turns.map((turn) => turn.id)).size).toBe(2);
    expect(turns.every((turn) => turn.user_id === user.userId && turn.session_key === 'agent:main:main')).toBe(true);
    expect(new Set(turns.map((turn) => turn.session_id)).size).toBe(1);
    const history = await user.get('/v1/sessions/agent:main:main/messages');
    expect(history.body.map((message: { content: string }) => message.content)).toEqual([
      'from telegram',
      'echo: from telegram',
      'from whatsapp',
      'echo: from whatsapp',
    ]);

    // A code works once; /new starts a fresh main session.
    const stranger = nextId();
    expect((await postTelegram(tgText(stranger, `/link ${first.body.code}`))).status).toBe(200);
    await system.waitFor(() => telegram.received(stranger).length === 1, 'the refusal');
    expect(telegram.received(stranger)[0]?.body.text).toContain('not valid');
    expect((await postTelegram(tgText(chat, '/new'))).status).toBe(200);
    await system.waitFor(() => telegram.received(chat).length === 3, 'the /new confirmation');
    // /new starts a fresh, empty main session.
    expect((await user.get('/v1/sessions/agent:main:main/messages')).body).toEqual([]);
  });

  it("moves what a chat's own user made to the user /link joins it to, and erases the rest, which nobody could reach again", async () => {
    const user = await api.createUser(system.adminToken, { name: 'Joined later' });
    const chat = nextId();
    const waId = `55119${nextId()}`;
    expect((await postTelegram(tgText(chat, 'before linking'))).status).toBe(200);
    expect((await postWhatsApp(waText(waId, 'antes de ligar'))).status).toBe(200);
    await system.waitFor(() => telegram.received(chat).length === 1 && graph.received(waId).length === 1, 'the answers');
    const [own, waOwn] = [await identityUserId('telegram', String(chat)), await identityUserId('whatsapp', waId)];
    await db.query(
      `INSERT INTO folders (id, user_id, name, name_key) VALUES (gen_random_uuid(), $1, 'Made in the chat', 'made in the chat')`,
      [own],
    );
    await db.query(`UPDATE agent_memory_profiles SET memory_content = 'Likes green tea.' WHERE user_id = $1`, [own]);

    expect((await postTelegram(tgText(chat, `/link ${(await user.post('/v1/link-codes')).body.code}`))).status).toBe(200);
    expect((await postWhatsApp(waText(waId, `/link ${(await user.post('/v1/link-codes')).body.code}`))).status).toBe(200);
    await system.waitFor(() => telegram.received(chat).length === 2 && graph.received(waId).length === 2, 'the confirmations');
    expect(telegram.received(chat)[1]?.body.text).toContain('moved there too');
    // Only a conversation was there: nothing moved, and the reply says no more than that the chat is linked.
    expect(graph.received(waId)[1]?.body.text.body).toBe('Linked: this chat now talks to your existing assistant.');
    for (const left of [own, waOwn]) {
      await system.waitFor(async () => (await count('SELECT COUNT(*)::int AS n FROM users WHERE id = $1', [left])) === 0, 'its erasure');
      expect(await count('SELECT COUNT(*)::int AS n FROM sessions WHERE user_id = $1', [left])).toBe(0);
    }
    expect((await db.query(`SELECT user_id FROM folders WHERE name = 'Made in the chat'`)).rows).toEqual([{ user_id: user.userId }]);
    expect((await user.get('/v1/profile')).body.memory).toContain('Likes green tea.');
    expect(await identityUserId('telegram', String(chat))).toBe(user.userId);
    expect(await identityUserId('whatsapp', waId)).toBe(user.userId);
  });

  it("gives a new WhatsApp user their number's time zone, a new Telegram user DEFAULT_TIMEZONE (docs/channels.md#time-zones)", async () => {
    const zoneOf = async (channel: string, externalId: string) =>
      (
        await db.query<{ timezone: string }>('SELECT timezone FROM user_preferences WHERE user_id = $1', [
          await identityUserId(channel, externalId),
        ])
      ).rows[0]?.timezone;
    const brazil = `55119${nextId()}`;
    const portugal = `3519${nextId()}`;
    const chat = nextId();
    for (const waId of [brazil, portugal]) expect((await postWhatsApp(waText(waId, 'oi'))).status).toBe(200);
    expect((await postTelegram(tgText(chat, 'hi'))).status).toBe(200);
    await system.waitFor(
      () => graph.received(brazil).length === 1 && graph.received(portugal).length === 1 && telegram.received(chat).length === 1,
      'the answers',
    );
    expect(await zoneOf('whatsapp', brazil)).toBe('America/Sao_Paulo');
    expect(await zoneOf('whatsapp', portugal)).toBe('Europe/Lisbon');
    expect(await zoneOf('telegram', String(chat))).toBe('UTC');
  });

  it('gives each channel peer its own direct session with dm_scope per-channel', async () => {
    const user = await api.createUser(system.adminToken, { name: 'Per channel', preferences: { settings: { dm_scope: 'per-channel' } } });
    const chat = nextId();
    const { body: link } = await user.post('/v1/link-codes');
    expect((await postTelegram(tgText(chat, `/link ${link.code}`))).status).toBe(200);
    expect((await postTelegram(tgText(chat, 'just me'))).status).toBe(200);
    await system.waitFor(() => telegram.received(chat).length === 2, 'the answer');
    expect((await turnsOf('telegram', String(chat))).map((turn) => turn.session_key)).toEqual([`agent:main:telegram:direct:${chat}`]);
  });

  it('delivers a notify job to the identity used last, once even when the job is queued again', async () => {
    const user = await api.createUser(system.adminToken, { name: 'Notified' });
    const { chat, waId } = await linkTelegramAndWhatsApp(user);

    const connection = { url: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379' };
    const queue = new Queue('deliveries', { connection, prefix: system.prefix });
    const events = new QueueEvents('deliveries', { connection, prefix: system.prefix });
    try {
      await events.waitUntilReady();
      const notify = async (jobId: string, text: string) => {
        const job = await queue.add('notify', { userId: user.userId, text }, { jobId });
        await job.waitUntilFinished(events, 20_000);
        return job;
      };
      const first = await notify(`notify.${randomUUID()}`, 'Drink water');
      expect(graph.received(waId).map((r) => r.body.text.body)).toEqual([expect.stringContaining('Linked'), 'Drink water']);

      // Gone from Redis and queued again under the same id: the recorded part is not sent twice.
      await first.remove();
      await notify(first.id as string, 'Drink water');
      expect(graph.received(waId)).toHaveLength(2);

      expect((await postTelegram(tgText(chat, 'I am on Telegram now'))).status).toBe(200);
      await system.waitFor(() => telegram.received(chat).length === 2, 'the Telegram answer');
      await notify(`notify.${randomUUID()}`, 'Stretch');
      expect(telegram.received(chat).at(-1)?.body.text).toBe('Stretch');

      // Queued before an admin disabled the user and taken after: not sent.
      expect((await new Api(system.url, system.adminToken).patch(`/v1/admin/users/${user.userId}`, { disabled: true })).status).toBe(200);
      await notify(`notify.${randomUUID()}`, 'Sleep');
      expect(telegram.received(chat).at(-1)?.body.text).toBe('Stretch');
    } finally {
      await events.close();
      await queue.close();
    }
  });
});

describe('the channel used last', () => {
  it('stays the one the user wrote from last when WhatsApp delivers an older message again', async () => {
    const user = await api.createUser(system.adminToken, { name: 'Redelivered' });
    const { chat, waId } = await linkTelegramAndWhatsApp(user);
    const older = waText(waId, 'from WhatsApp first');
    expect((await postWhatsApp(older)).status).toBe(200);
    await system.waitFor(() => graph.received(waId).length === 2, 'the WhatsApp answer');
    expect((await postTelegram(tgText(chat, 'then from Telegram'))).status).toBe(200);
    await system.waitFor(() => telegram.received(chat).length === 2, 'the Telegram answer');
    expect((await postWhatsApp(older)).status).toBe(200);

    const connection = { url: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379' };
    const queue = new Queue('deliveries', { connection, prefix: system.prefix });
    const events = new QueueEvents('deliveries', { connection, prefix: system.prefix });
    try {
      await events.waitUntilReady();
      const job = await queue.add('notify', { userId: user.userId, text: 'Stretch' }, { jobId: `notify.${randomUUID()}` });
      await job.waitUntilFinished(events, 20_000);
      expect(telegram.received(chat).at(-1)?.body.text).toBe('Stretch');
      expect(graph.received(waId)).toHaveLength(2);
    } finally {
      await events.close();
      await queue.close();
    }
  });
});

describe('a notice refused until the user writes (outside the 24-hour window, a chat never opened), without WHATSAPP_NOTICE_TEMPLATE', () => {
  const connection = { url: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379' };
  let queue: Queue;
  let events: QueueEvents;
  beforeAll(async () => {
    queue = new Queue('deliveries', { connection, prefix: system.prefix });
    events = new QueueEvents('deliveries', { connection, prefix: system.prefix });
    await events.waitUntilReady();
  });
  afterAll(async () => {
    await events.close();
    await queue.close();
  });

  /** Queues a notice that WhatsApp refuses at `waId`, and waits for it and for its resend. */
  async function refusedNotice(userId: string, waId: string, text: string): Promise<string> {
    graph.outsideWindow.add(waId);
    const job = await queue.add('notify', { userId, text }, { jobId: `notify.${randomUUID()}` });
    await job.waitUntilFinished(events, 20_000);
    const resend = await Job.fromId(queue, `resend-notice.${job.id}`);
    await resend?.waitUntilFinished(events, 20_000);
    expect(graph.requests.filter((request) => request.body.to === waId && request.status === 400)).toHaveLength(1);
    return resend?.id as string;
  }

  it("goes to the user's Telegram instead", async () => {
    const user = await api.createUser(system.adminToken, { name: 'Two chats' });
    const { chat, waId } = await linkTelegramAndWhatsApp(user);

    await refusedNotice(user.userId, waId, 'Call mom\nat 18:00');
    expect(telegram.received(chat).at(-1)?.body.text).toBe('Call mom\nat 18:00');
    expect(graph.received(waId)).toHaveLength(1);
  });

  it("goes to the user's WhatsApp when Telegram refuses it: they never opened a private chat with the bot", async () => {
    const user = await api.createUser(system.adminToken, { name: 'Telegram from a group' });
    const { chat, waId } = await linkTelegramAndWhatsApp(user);
    expect((await postTelegram(tgText(chat, 'I am on Telegram now'))).status).toBe(200);
    await system.waitFor(() => telegram.received(chat).length === 2, 'the Telegram answer');
    telegram.failSend(chat, 403, { ok: false, error_code: 403, description: "Forbidden: bot can't initiate conversation with a user" });

    const job = await queue.add('notify', { userId: user.userId, text: 'Stretch' }, { jobId: `notify.${randomUUID()}` });
    await job.waitUntilFinished(events, 20_000);
    await (await Job.fromId(queue, `resend-notice.${job.id}`))?.waitUntilFinished(events, 20_000);
    expect(graph.received(waId).map((request) => request.body.text?.body)).toEqual([expect.stringContaining('Linked'), 'Stretch']);
    expect(telegram.sendAttempts(chat)).toHaveLength(3);
  });

  it('is logged, naming the setting and never the text, for a user with no other chat', async () => {
    const waId = `55119${nextId()}`;
    expect((await postWhatsApp(waText(waId, 'hi'))).status).toBe(200);
    await system.waitFor(() => graph.received(waId).length === 1, 'the answer');
    const resendId = await refusedNotice((await identityUserId('whatsapp', waId)) as string, waId, 'Secret pill 42');
    const warning = await system.waitFor(() => system.logs.find((line) => line.includes(resendId)), 'the warning');
    expect(warning).toContain('set WHATSAPP_NOTICE_TEMPLATE');
    expect(system.logs.join('')).not.toContain('Secret pill 42');
    expect(graph.received(waId)).toHaveLength(1);
  });
});

describe('hostile input on webhooks', () => {
  const deep = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

  it('answers a Telegram message with NUL and control characters, cleaned, never refused', async () => {
    const chat = nextId();
    expect((await postTelegram(tgText(chat, 'he\u0000llo\u0007 wor\u001bld\nbye'))).status).toBe(200);
    await system.waitFor(() => telegram.received(chat).length === 1, 'the answer');
    expect(texts(telegram.received(chat))).toEqual(['echo: hello world\nbye']);
  });

  it('answers 400 with the error body to a Telegram update nested past 64 levels, and creates nothing', async () => {
    const chat = nextId();
    const update = tgText(chat, 'deep');
    // As text: serialising it here would overflow this process's own stack.
    const res = await postTelegram(JSON.stringify(update).replace(/^\{/, `{"extra":${deep(5_000)},`));
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: { code: 'validation_failed', message: expect.stringContaining('64') } });
    expect(await channelMessages('telegram', String(update.update_id))).toBe(0);
  });

  it('answers a WhatsApp message with a NUL, cleaned; refuses absurd nesting with 400', async () => {
    const waId = `55119${nextId()}`;
    expect((await postWhatsApp(waText(waId, 'o\u0000lá'))).status).toBe(200);
    await system.waitFor(() => graph.received(waId).length === 1, 'the reply');
    expect(graph.received(waId)[0]?.body.text.body).toBe('echo: olá');

    const raw = waText(waId, 'deep').replace(/^\{/, `{"extra":${deep(5_000)},`);
    const res = await postWhatsApp(raw);
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: { code: 'validation_failed' } });
  });
});
