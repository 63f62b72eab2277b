import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { Api } from '../scripts/lib/api';
import { afterTools, FakeModel, userText } from '../scripts/lib/fake-model';
import { TestSystem } from '../scripts/lib/system';
import { fixture, telegramPrivateText } from './helpers/channel-fixtures';
import { ChannelWebhooks } from './helpers/channel-webhooks';
import { injectFault, testDb } from './helpers/db';
import { FakeGraph } from './helpers/fake-graph';
import { FakeTelegram } from './helpers/fake-telegram';
import { telegramGroupText } from './helpers/telegram-updates';

/**
 * CONTRACT §6 as the product's owners check it: the exact session keys a chat's messages reach,
 * which group messages address the bot, the WhatsApp signature over the raw body, the read receipt's
 * exact body, and the short reply to what cannot be read, through the real processes and fake providers.
 */
const model = new FakeModel();
const telegram = new FakeTelegram();
const graph = new FakeGraph();
const system = new TestSystem();
let db: pg.Pool;
let api: Api;

const TG_SECRET = 'tg-acceptance_secret';
const WA_APP_SECRET = 'wa-acceptance-secret';
const WA_VERIFY = 'wa-acceptance-verify';
const UNSUPPORTED = 'I can only read text messages';
const DIGEST = 'Fake digest: the user keeps bees.';
/** 6,000 characters that grow past 4,096 several times over once escaped for Telegram's HTML. */
const ESCAPES = Array.from({ length: 1_000 }, (_, i) => `<${i % 10}&>`).join(' ');
/** About 15,000 characters: four parts on Telegram. */
const LONG_ANSWER = Array.from({ length: 1_700 }, (_, i) => `word${String(i).padStart(4, '0')}`).join(' ');
const webhooks = new ChannelWebhooks(() => system.url, TG_SECRET, WA_APP_SECRET);
const nextId = () => webhooks.nextId();

beforeAll(async () => {
  await Promise.all([model.start(), telegram.start(), graph.start()]);
  model.script = (body) => {
    if (String(body.messages[0]?.content).startsWith('You write session digests')) return { content: DIGEST };
    const folder = /^make folder (.+)$/.exec(userText(body))?.[1];
    if (folder)
      return afterTools(body) ? { content: `Created ${folder}.` } : { toolCalls: [{ name: 'create_folder', arguments: { name: folder } }] };
    if (userText(body) === 'escapes') return { content: ESCAPES };
    if (userText(body) === 'a long answer') return { content: LONG_ANSWER };
    return { content: `echo: ${userText(body)}` };
  };
  db = testDb();
  await system.start({
    env: {
      OPENAI_BASE_URL: model.url,
      TELEGRAM_BOT_TOKEN: '7000000001:acceptance-token',
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

const texts = (calls: { body: any }[]) => calls.map((call) => call.body.text);
const mention = () => `@${telegram.bot.username}`;
/** The turn a channel message started, by the update or message id it came with. */
const turnOfMessage = async (channel: string, externalId: string) =>
  system.waitFor(
    async () =>
      (
        await db.query<{ turn_id: string }>(
          'SELECT turn_id FROM channel_messages WHERE channel = $1 AND external_id LIKE $2 AND turn_id IS NOT NULL',
          [channel, `%${externalId}`],
        )
      ).rows[0]?.turn_id,
    'the turn of the message',
  );
const identityUserId = async (channel: string, externalId: string) =>
  (
    await db.query<{ user_id: string }>('SELECT user_id FROM channel_identities WHERE channel = $1 AND external_id = $2', [
      channel,
      externalId,
    ])
  ).rows[0]?.user_id;

describe('session keys (CONTRACT §6)', () => {
  it('are agent:main:main for direct chats, agent:main:telegram:group:<id> for a group; per-channel gives direct:<peer>', async () => {
    const user = await api.createUser(system.adminToken, { name: 'Keys' });
    const chat = nextId();
    const waId = `55119${nextId()}`;
    const group = -nextId();
    expect((await webhooks.postTelegram(webhooks.tgText(chat, `/link ${(await user.post('/v1/link-codes')).body.code}`))).status).toBe(200);
    expect((await webhooks.postWhatsApp(webhooks.waText(waId, `/link ${(await user.post('/v1/link-codes')).body.code}`))).status).toBe(200);
    await system.waitFor(() => telegram.received(chat).length === 1 && graph.received(waId).length === 1, 'the confirmations');

    /** Sends a message and returns the session key its turn_started event names. */
    const keyOf = async (send: () => Promise<{ channel: string; id: string }>) => {
      const { channel, id } = await send();
      const turnId = await turnOfMessage(channel, id);
      const events = await user.events(turnId);
      return events.find((event) => event.event === 'turn_started')?.data.session_key;
    };
    const telegramDirect = async () => {
      const update = webhooks.tgText(chat, 'direct on telegram');
      expect((await webhooks.postTelegram(update)).status).toBe(200);
      return { channel: 'telegram', id: String(update.update_id) };
    };
    const whatsappDirect = async () => {
      const id = `wamid.${randomUUID()}`;
      expect((await webhooks.postWhatsApp(webhooks.waText(waId, 'direct on whatsapp', id))).status).toBe(200);
      return { channel: 'whatsapp', id };
    };
    const telegramGroup = async () => {
      const update = telegramGroupText(group, chat, 'in the group', nextId(), mention());
      expect((await webhooks.postTelegram(update)).status).toBe(200);
      return { channel: 'telegram', id: String(update.update_id) };
    };

    expect(await keyOf(telegramDirect)).toBe('agent:main:main');
    expect(await keyOf(whatsappDirect)).toBe('agent:main:main');
    expect(await keyOf(telegramGroup)).toBe(`agent:main:telegram:group:${group}`);
    expect((await user.patch('/v1/preferences', { settings: { dm_scope: 'per-channel' } })).status).toBe(200);
    expect(await keyOf(telegramDirect)).toBe(`agent:main:telegram:direct:${chat}`);
    expect(await keyOf(whatsappDirect)).toBe(`agent:main:whatsapp:direct:${waId}`);
    expect(await keyOf(telegramGroup)).toBe(`agent:main:telegram:group:${group}`);

    const sessions = await user.get<{ session_key: string }[]>('/v1/sessions');
    expect(sessions.status).toBe(200);
    expect(sessions.body.map((session) => session.session_key).sort()).toEqual(
      [
        'agent:main:main',
        `agent:main:telegram:direct:${chat}`,
        `agent:main:telegram:group:${group}`,
        `agent:main:whatsapp:direct:${waId}`,
      ].sort(),
    );
  });
});

describe('a Telegram group', () => {
  it('is answered when the bot is addressed: @username in any case, text_mention, a reply to it, /command@bot', async () => {
    const group = -nextId();
    const member = nextId();
    const handle = mention();
    const plain = (text: string) => telegramGroupText(group, member, text, nextId());
    const upper = telegramGroupText(group, member, 'shouted', nextId(), handle.toUpperCase());
    const textMention = plain('Nexo, by name');
    Object.assign(textMention.message, { entities: [{ offset: 0, length: 4, type: 'text_mention', user: { ...telegram.bot } }] });
    const reply = plain('answering you');
    Object.assign(reply.message, { reply_to_message: { message_id: 1, from: { ...telegram.bot }, chat: reply.message.chat, date: 1 } });
    const command = plain(`/help${handle}`);
    command.message.entities = [{ offset: 0, length: command.message.text.length, type: 'bot_command' }];
    // One after the other: sent together, a later one is merged into the turn still queued (if_busy merge).
    for (const [answered, update] of [upper, textMention, reply, command].entries()) {
      expect((await webhooks.postTelegram(update)).status).toBe(200);
      await system.waitFor(() => telegram.received(group).length === answered + 1, `answer ${answered + 1}`);
    }
    expect(texts(telegram.received(group))).toEqual(['echo: shouted', 'echo: Nexo, by name', 'echo: answering you', 'echo: /help']);
  });

  it('is not answered for another bot: its handle, a longer handle, /command@other_bot, a reply to another bot', async () => {
    const group = -nextId();
    const member = nextId();
    const handle = mention();
    const plain = (text: string) => telegramGroupText(group, member, text, nextId());
    const longer = telegramGroupText(group, member, 'not you', nextId(), `${handle}_fan`);
    const other = plain('/help@other_bot');
    other.message.entities = [{ offset: 0, length: other.message.text.length, type: 'bot_command' }];
    const otherReply = plain('to the other bot');
    Object.assign(otherReply.message, {
      reply_to_message: {
        message_id: 2,
        from: { id: 42, is_bot: true, first_name: 'Other', username: 'other_bot' },
        chat: otherReply.message.chat,
        date: 1,
      },
    });
    const otherMention = plain('Other, by name');
    Object.assign(otherMention.message, {
      entities: [{ offset: 0, length: 5, type: 'text_mention', user: { id: 43, is_bot: false, first_name: 'Ana' } }],
    });
    const quiet = [longer, other, otherReply, otherMention];
    for (const update of quiet) expect((await webhooks.postTelegram(update)).status).toBe(200);
    expect((await webhooks.postTelegram(telegramGroupText(group, member, 'barrier', nextId(), handle))).status).toBe(200);
    await system.waitFor(() => telegram.received(group).length === 1, 'the barrier answer');
    expect(texts(telegram.received(group))).toEqual(['echo: barrier']);
  });
});

describe('the Telegram secret', () => {
  it('must match exactly: another case, a prefix or a longer value answers 401', async () => {
    const chat = nextId();
    for (const secret of [TG_SECRET.toUpperCase(), TG_SECRET.slice(0, -1), `${TG_SECRET}x`, `x${TG_SECRET}`]) {
      expect((await webhooks.postTelegram(webhooks.tgText(chat, 'sneaky'), secret)).status).toBe(401);
    }
    expect(await identityUserId('telegram', String(chat))).toBeUndefined();
  });
});

describe('the WhatsApp webhook', () => {
  it('answers the challenge as plain text only to mode subscribe with the token; anything else 403', async () => {
    const get = (query: string) => fetch(`${system.url}/webhooks/whatsapp?${query}`);
    const ok = await get(`hub.mode=subscribe&hub.verify_token=${WA_VERIFY}&hub.challenge=424242`);
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await ok.text()).toBe('424242');
    for (const query of [
      `hub.mode=unsubscribe&hub.verify_token=${WA_VERIFY}&hub.challenge=1`,
      `hub.verify_token=${WA_VERIFY}&hub.challenge=1`,
      'hub.mode=subscribe&hub.challenge=1',
      `hub.mode=subscribe&hub.verify_token=${WA_VERIFY}x&hub.challenge=1`,
      '',
    ]) {
      expect((await get(query)).status).toBe(403);
    }
  });

  it('checks the signature over the bytes received: a body signed as sent is answered, the same JSON re-serialised is refused', async () => {
    const waId = `55119${nextId()}`;
    const id = `wamid.${randomUUID()}`;
    const compact = webhooks.waText(waId, 'olá, ação', id);
    // As Meta may send it: indented, and non-ASCII escaped.
    const pretty = JSON.stringify(JSON.parse(compact), null, 2).replace(
      /[\u0080-\uffff]/g,
      (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
    );
    expect((await webhooks.postWhatsApp(pretty, webhooks.sign(compact))).status).toBe(401);
    expect((await webhooks.postWhatsApp(compact, webhooks.sign(pretty))).status).toBe(401);
    expect(await identityUserId('whatsapp', waId)).toBeUndefined();
    expect((await webhooks.postWhatsApp(pretty, webhooks.sign(pretty))).status).toBe(200);
    await system.waitFor(() => graph.received(waId).length === 1, 'the reply');
    expect(graph.received(waId)[0]?.body.text.body).toBe('echo: olá, ação');
  });

  it('marks the message read with exactly the typing indicator body of the contract', async () => {
    const waId = `55119${nextId()}`;
    const id = `wamid.${randomUUID()}`;
    expect((await webhooks.postWhatsApp(webhooks.waText(waId, 'typing?', id))).status).toBe(200);
    const receipt = await system.waitFor(() => graph.readReceipts().find((request) => request.body.message_id === id), 'the receipt');
    expect(receipt.body).toEqual({ messaging_product: 'whatsapp', status: 'read', message_id: id, typing_indicator: { type: 'text' } });
  });
});

describe('what cannot be read', () => {
  it('gets the short reply on WhatsApp: a sticker, a location, a document; no turn', async () => {
    const kinds = {
      sticker: { sticker: { id: '2', mime_type: 'image/webp', animated: false } },
      location: { location: { latitude: -23.5, longitude: -46.6, name: 'Casa' } },
      document: { document: { id: '3', filename: 'a.pdf', mime_type: 'application/pdf' } },
    };
    for (const [type, content] of Object.entries(kinds)) {
      const waId = `55119${nextId()}`;
      expect((await webhooks.postWhatsApp(webhooks.waMessage({ phone: waId }, { type, ...content }))).status).toBe(200);
      await system.waitFor(() => graph.received(waId).length === 1, `the reply to a ${type}`);
      expect(graph.received(waId)[0]?.body.text.body).toContain(UNSUPPORTED);
      const userId = await identityUserId('whatsapp', waId);
      expect((await db.query('SELECT 1 FROM turns WHERE user_id = $1', [userId])).rows).toEqual([]);
    }
  });

  it('gets the short reply on Telegram: a location, a document', async () => {
    const kinds = {
      location: { location: { latitude: -23.5, longitude: -46.6 } },
      document: { document: { file_id: 'doc-1', file_unique_id: 'udoc-1', file_name: 'a.pdf' } },
    };
    for (const content of Object.values(kinds)) {
      const chat = nextId();
      const update = fixture(telegramPrivateText);
      update.update_id = nextId();
      const { text: _text, ...message } = update.message;
      const body = {
        update_id: update.update_id,
        message: { ...message, from: { ...message.from, id: chat }, chat: { ...message.chat, id: chat }, ...content },
      };
      expect((await webhooks.postTelegram(body)).status).toBe(200);
      await system.waitFor(() => telegram.received(chat).length === 1, 'the reply');
      expect(telegram.received(chat)[0]?.body.text).toContain(UNSUPPORTED);
    }
  });
});

describe("a new WhatsApp user's time zone", () => {
  it("is their country's own zone", async () => {
    const digits = () => String(nextId()).slice(-7);
    // Sweden, Iceland and Kuwait: one zone each, which the tz database's newer country table names after a neighbour's.
    const numbers = {
      [`4670${digits()}`]: 'Europe/Stockholm',
      [`3546${digits().slice(1)}`]: 'Atlantic/Reykjavik',
      [`9655${digits()}`]: 'Asia/Kuwait',
    };
    for (const waId of Object.keys(numbers)) expect((await webhooks.postWhatsApp(webhooks.waText(waId, 'hej'))).status).toBe(200);
    await system.waitFor(() => Object.keys(numbers).every((waId) => graph.received(waId).length >= 1), 'the replies');
    for (const [waId, zone] of Object.entries(numbers)) {
      const userId = await identityUserId('whatsapp', waId);
      const { rows } = await db.query<{ timezone: string }>('SELECT timezone FROM user_preferences WHERE user_id = $1', [userId]);
      expect(rows[0]?.timezone).toBe(zone);
    }
  });
});

describe('chat commands and approvals', () => {
  it('/new digests the conversation into MEMORY and starts a fresh main session', async () => {
    const user = await api.createUser(system.adminToken, { name: 'Renewed' });
    const waId = `55119${nextId()}`;
    expect((await webhooks.postWhatsApp(webhooks.waText(waId, `/link ${(await user.post('/v1/link-codes')).body.code}`))).status).toBe(200);
    expect((await webhooks.postWhatsApp(webhooks.waText(waId, 'I keep bees'))).status).toBe(200);
    await system.waitFor(() => graph.received(waId).length === 2, 'the answer');
    expect((await webhooks.postWhatsApp(webhooks.waText(waId, '/new'))).status).toBe(200);
    await system.waitFor(() => graph.received(waId).length === 3, 'the /new confirmation');
    expect((await user.get('/v1/sessions/agent:main:main/messages')).body).toEqual([]);
    const memory = await system.waitFor(async () => {
      const { body } = await user.get<{ memory: string }>('/v1/profile');
      return body.memory.includes(DIGEST) ? body.memory : undefined;
    }, 'the digest in MEMORY');
    expect(memory).toContain('(agent:main:main)');
  });

  it("/new under dm_scope per-channel resets the chat's own session, not the main one", async () => {
    const user = await api.createUser(system.adminToken, { name: 'Per chat', preferences: { settings: { dm_scope: 'per-channel' } } });
    const chat = nextId();
    expect((await webhooks.postTelegram(webhooks.tgText(chat, `/link ${(await user.post('/v1/link-codes')).body.code}`))).status).toBe(200);
    await user.converse('kept in main');
    expect((await webhooks.postTelegram(webhooks.tgText(chat, 'said in the chat'))).status).toBe(200);
    await system.waitFor(() => telegram.received(chat).length === 2, 'the answer');
    expect((await webhooks.postTelegram(webhooks.tgText(chat, '/new'))).status).toBe(200);
    await system.waitFor(() => telegram.received(chat).length === 3, 'the /new confirmation');
    const contents = async (key: string) =>
      ((await user.get(`/v1/sessions/${key}/messages`)).body as { content: string }[]).map((message) => message.content);
    expect(await contents(`agent:main:telegram:direct:${chat}`)).toEqual([]);
    expect(await contents('agent:main:main')).toEqual(['kept in main', 'echo: kept in main']);
  });

  it('decides an approval by its buttons: Telegram reject (answered with a toast), WhatsApp approve', async () => {
    const chat = nextId();
    expect((await webhooks.postTelegram(webhooks.tgText(chat, 'make folder Nope'))).status).toBe(200);
    const question = await system.waitFor(() => telegram.received(chat)[0], 'the Telegram approval request');
    const [, reject] = question.body.reply_markup.inline_keyboard[0] as { callback_data: string }[];
    const press = {
      update_id: nextId(),
      callback_query: {
        id: `cb-${nextId()}`,
        from: { id: chat, is_bot: false, first_name: 'Tiago' },
        message: { message_id: question.body.message_id ?? 1, from: { ...telegram.bot }, chat: { id: chat, type: 'private' }, date: 1 },
        chat_instance: '1',
        data: reject?.callback_data,
      },
    };
    expect((await webhooks.postTelegram(press)).status).toBe(200);
    const toast = telegram.calls.find(
      (call) => call.method === 'answerCallbackQuery' && call.body.callback_query_id === press.callback_query.id,
    );
    expect(toast?.body.text).toBe('Rejected');
    await system.waitFor(() => telegram.received(chat).length === 2, 'the answer after the rejection');
    const tgUser = await identityUserId('telegram', String(chat));
    expect((await db.query('SELECT status FROM approvals WHERE user_id = $1', [tgUser])).rows).toEqual([{ status: 'rejected' }]);

    const waId = `55119${nextId()}`;
    expect((await webhooks.postWhatsApp(webhooks.waText(waId, 'make folder Colmeia'))).status).toBe(200);
    const asked = await system.waitFor(() => graph.received(waId)[0], 'the WhatsApp approval request');
    const buttons = asked.body.interactive.action.buttons as { reply: { id: string; title: string } }[];
    expect(buttons.length).toBeLessThanOrEqual(3);
    for (const { reply } of buttons) expect(reply.id.length <= 256 && [...reply.title].length <= 20).toBe(true);
    const [approve] = buttons;
    const reply = { type: 'interactive', interactive: { type: 'button_reply', button_reply: approve?.reply } };
    expect((await webhooks.postWhatsApp(webhooks.waMessage({ phone: waId }, reply))).status).toBe(200);
    await system.waitFor(() => graph.received(waId).length === 2, 'the result');
    expect(graph.received(waId)[1]?.body.text.body).toBe('Created Colmeia.');
    const waUser = await identityUserId('whatsapp', waId);
    expect((await db.query('SELECT name FROM folders WHERE user_id = $1', [waUser])).rows).toEqual([{ name: 'Colmeia' }]);
  });
});

describe('a voice note over 20 MB', () => {
  it('is neither downloaded nor transcribed, on either channel: the chat is told it could not be heard', async () => {
    const big = 'x'.repeat(20 * 1024 * 1024 + 1);
    const chat = nextId();
    telegram.addFile('voice-big', 'voice/big.oga', big);
    expect((await webhooks.postTelegram(webhooks.tgVoice(chat, 'voice-big'))).status).toBe(200);
    const waId = `55119${nextId()}`;
    graph.addMedia('media-big', 'audio/ogg', big);
    const audio = { type: 'audio', audio: { id: 'media-big', mime_type: 'audio/ogg; codecs=opus', voice: true } };
    expect((await webhooks.postWhatsApp(webhooks.waMessage({ phone: waId }, audio))).status).toBe(200);

    await system.waitFor(() => telegram.received(chat).length === 1 && graph.received(waId).length === 1, 'both replies');
    expect(telegram.received(chat)[0]?.body.text).toContain('could not make out that voice note');
    expect(graph.received(waId)[0]?.body.text.body).toContain('could not make out that voice note');
    expect(telegram.calls.filter((call) => call.method === 'download' && call.body.path === 'voice/big.oga')).toEqual([]);
    expect(graph.requests.filter((request) => request.path === '/media-download/media-big')).toEqual([]);
    expect(model.transcriptions).toEqual([]);
  });
});

describe('Telegram parts', () => {
  it('stay under 4,096 characters as sent, with parse_mode HTML, when escaping makes the text longer', async () => {
    const chat = nextId();
    expect((await webhooks.postTelegram(webhooks.tgText(chat, 'escapes'))).status).toBe(200);
    const unescape = (text: string) => text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
    await system.waitFor(() => unescape(texts(telegram.received(chat)).join(' ')) === ESCAPES, 'every part');
    for (const part of telegram.received(chat)) {
      expect(part.body.parse_mode).toBe('HTML');
      expect(part.body.text.length).toBeLessThan(4_096);
    }
  });
});

describe('an update the database cannot store', () => {
  it('is answered 5xx so the provider delivers it again; the redelivery is answered once', async () => {
    const chat = nextId();
    const update = webhooks.tgText(chat, 'stored at last');
    const waId = `55119${nextId()}`;
    const id = `wamid.${randomUUID()}`;
    const raw = webhooks.waText(waId, 'guardado enfim', id);
    const removeFault = await injectFault(
      db,
      `test_unstorable_${chat}`,
      'channel_messages',
      `IF NEW.external_id LIKE '%${update.update_id}' OR NEW.external_id = '${id}' THEN RAISE EXCEPTION 'the database is failing'; END IF;`,
    );
    try {
      expect((await webhooks.postTelegram(update)).status).toBeGreaterThanOrEqual(500);
      expect((await webhooks.postWhatsApp(raw)).status).toBeGreaterThanOrEqual(500);
    } finally {
      await removeFault();
    }
    for (let delivery = 0; delivery < 2; delivery++) {
      expect((await webhooks.postTelegram(update)).status).toBe(200);
      expect((await webhooks.postWhatsApp(raw)).status).toBe(200);
    }
    expect((await webhooks.postTelegram(webhooks.tgText(chat, 'barrier'))).status).toBe(200);
    expect((await webhooks.postWhatsApp(webhooks.waText(waId, 'barrier'))).status).toBe(200);
    await system.waitFor(() => telegram.received(chat).length === 2 && graph.received(waId).length === 2, 'the answers');
    expect(texts(telegram.received(chat))).toEqual(['echo: stored at last', 'echo: barrier']);
    expect(graph.received(waId).map((request) => request.body.text.body)).toEqual(['echo: guardado enfim', 'echo: barrier']);
  });
});

describe('a gateway killed while a part of a long answer is with Telegram', () => {
  it('sends every part once: none before it again, none lost after it', async () => {
    const chat = nextId();
    const held = telegram.hold(chat, 1);
    expect((await webhooks.postTelegram(webhooks.tgText(chat, 'a long answer'))).status).toBe(200);
    await held.arrived;
    await system.signal('gateway', 'SIGKILL');
    // Telegram takes the second part though the gateway that sent it is gone.
    held.release();
    system.spawn('gateway');
    await system.waitReady();
    expect((await webhooks.postTelegram(webhooks.tgText(chat, 'after the crash'))).status).toBe(200);
    // The chat's line keeps the later answer behind the long one: once it arrives, the long one's delivery has ended.
    await system.waitFor(() => texts(telegram.received(chat)).includes('echo: after the crash'), 'the later answer');
    const parts = texts(telegram.received(chat)).slice(0, -1) as string[];
    expect(parts.join(' ')).toBe(LONG_ANSWER);
  });
});
